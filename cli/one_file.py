# SPDX-License-Identifier: GPL-3.0-or-later
"""One .blend file: opened, every armature done by the subcommand, saved; the result is its report entry."""

import functools
import os
import time
import traceback
from collections.abc import Callable

import bpy

from .. import api
from .commands import SUBCOMMANDS, Options, Subcommand
from .console import blender_quiet
from .files import is_compressed, save
from .json_report import entry as new_entry
from .stop import Stopped

#: Called while an armature's frame range is baked: its name, the range, the fraction done.
Progress = Callable[[str, tuple[int, int], float], None]


def _message(error: BaseException) -> str:
    """Blender's operator errors come as "Error: …\\n"; keep the sentence."""
    text = str(error).strip()
    return text.removeprefix("Error: ").strip() or type(error).__name__


def _armatures_by_scene() -> list[tuple[bpy.types.Scene, list[bpy.types.Object]]]:
    """Every local armature once, with the first scene it is in (the open scene first)."""
    current = bpy.context.scene
    scenes = [current] + [scene for scene in bpy.data.scenes if scene != current]
    seen, out = set(), []
    for scene in scenes:
        armatures = [o for o in scene.objects if o.type == "ARMATURE" and o.library is None and o.name not in seen]
        seen |= {o.name for o in armatures}
        if armatures:
            out.append((scene, armatures))
    return out


def _run_armatures(name: str, command: Subcommand, options: Options, entry: dict, progress: Progress) -> None:
    """Run ``command`` on every armature of the open file into ``entry``; raise LimbIKError to fail it."""
    by_scene = _armatures_by_scene()
    if not by_scene:
        raise api.LimbIKError(f"'{name}' has no armature.")
    if command.needs_limbs:
        by_scene = [(s, [o for o in objs if len(o.limb_ik.limbs)]) for s, objs in by_scene]
        by_scene = [(s, objs) for s, objs in by_scene if objs]
        if not by_scene:
            raise api.LimbIKError(f"No armature in '{name}' has limbs; run the detect subcommand first.")
    for scene, armatures in by_scene:
        for obj in armatures:
            part = {"name": obj.name, "scene": scene.name, "detected": {}, "baked": [], "problems": {}}
            entry["armatures"].append(part)
            try:
                part.update(command.run(obj, scene, options, functools.partial(progress, obj.name)))
            except api.LimbIKError as error:
                text = str(error)
                raise api.LimbIKError(text if f"'{obj.name}'" in text else f"Armature '{obj.name}': {text}") from None
            finally:
                part["limbs"] = [limb.name for limb in obj.limb_ik.limbs]
            if command.changes(part):
                entry["changed"] = True
    problems = [(part["name"], text) for part in entry["armatures"] for text in part["problems"].values()]
    if problems:
        armature, first = problems[0]
        if f"'{armature}'" not in first:
            first = f"Armature '{armature}': {first}"
        if len(problems) > 1:
            first += f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
        raise api.LimbIKError(first)


def process_file(path: str, output: str | None, subcommand: str, options: Options, progress: Progress) -> dict:
    """Do ``subcommand`` on one .blend file and save the result to ``output`` (None: write nothing).

    The one per-file code path: the in-process batch and every child process of ``--jobs`` run it.
    Never raises for a problem with the file; the returned report entry says what happened. When
    ``progress`` raises :class:`Stopped`, the file ends there, unsaved, as ``stopped``.
    """
    began = time.perf_counter()
    command = SUBCOMMANDS[subcommand]
    entry = new_entry(path, output)
    name = os.path.basename(path)
    try:
        try:
            compressed = is_compressed(path)  # the output is saved as the input was
            with blender_quiet():
                bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
        except OSError as error:
            raise api.LimbIKError(f"'{path}' could not be read: {error.strerror or error}.") from None
        except RuntimeError as error:
            reason = _message(error).replace(path, name)  # Blender's message names the whole path, twice
            raise api.LimbIKError(f"Blender could not open '{name}': {reason}") from None
        _run_armatures(name, command, options, entry, progress)
        in_place = output is not None and os.path.abspath(output) == os.path.abspath(path)
        if output is not None and not options.dry_run and (entry["changed"] or not in_place):
            try:
                with blender_quiet():
                    save(output, compressed)
            except OSError as error:
                raise api.LimbIKError(f"'{output}' could not be written: {error.strerror or error}.") from None
            entry["written"] = True
    except Stopped as stop:
        entry.update(status="stopped", error=str(stop), output=None, written=False, changed=False)
    except api.LimbIKError as error:
        entry.update(status="failed", error=str(error), output=None, written=False)
    except Exception as error:  # a Blender or Limb IK bug on this file must not stop the batch
        traceback.print_exc()
        entry.update(
            status="failed",
            error=f"'{name}' failed unexpectedly: {type(error).__name__}: {_message(error)}",
            output=None,
            written=False,
        )
    entry["seconds"] = round(time.perf_counter() - began, 3)
    return entry
