# SPDX-License-Identifier: GPL-3.0-or-later
"""The subcommands: what each does to one armature, and which options it takes."""

from collections.abc import Callable
from dataclasses import dataclass

import bpy

from .. import api


@dataclass(frozen=True)
class Options:
    """What a subcommand needs to know besides the file: the parsed command line."""

    frame_start: int | None = None
    frame_end: int | None = None
    dry_run: bool = False
    ground: str | None = None  #: collection to plant feet on (plant)
    contacts: dict | None = None  #: feet forced down or up (plant), as :func:`api.plant` takes them
    pelvis_mode: str | None = None  #: how the body's height follows the feet (plant), as :func:`api.plant` takes it
    max_pelvis_drop: float | None = None  #: metres (plant), as :func:`api.plant` takes it
    authored_ground: str | None = None  #: collection the take was made on (plant)


#: Called while a frame range is baked, with the range and the fraction of it done.
Progress = Callable[[tuple[int, int], float], None]


@dataclass(frozen=True)
class Subcommand:
    """One entry of the command table.

    ``run`` does one armature, in the scene it was found in, and returns its part of the report
    (``detected``, ``baked``, ``problems``, …); it raises :class:`api.LimbIKError` when the armature
    cannot be done, which fails the file. While it bakes it calls its ``progress`` argument, whose
    exceptions pass through. ``changes`` tells from that part whether the file was modified.
    """

    help: str
    run: Callable[[bpy.types.Object, bpy.types.Scene, Options, Progress], dict]
    needs_limbs: bool  #: only armatures with limbs are done; a file without any fails
    writes: bool  #: saves files: takes --output-dir / --in-place / --dry-run
    uses_frames: bool  #: takes --frames
    uses_ground: bool = False  #: takes --ground and --authored-ground
    forces_contacts: bool = False  #: takes --force-down and --force-up
    changes: Callable[[dict], bool] = lambda part: False


def _detect(obj: bpy.types.Object, scene: bpy.types.Scene, options: Options, progress: Progress) -> dict:
    return {"detected": api.detect_limbs(obj, scene=scene)}


def _bake(obj: bpy.types.Object, scene: bpy.types.Scene, options: Options, progress: Progress) -> dict:
    if not any(limb.enabled for limb in obj.limb_ik.limbs):
        return {"note": "No enabled limbs; nothing baked."}
    start, end = api.frame_range(options.frame_start, options.frame_end, scene)
    report = api.bake(
        obj, frame_start=start, frame_end=end, progress=lambda done: progress((start, end), done), scene=scene
    )
    return _baked(report, start, end)


def _baked(report, start: int, end: int) -> dict:
    """A bake's part of the report: what was keyed, how the animation was read (``path``, ``why``), goals
    off their limbs' planes, how far planting lifted the body (``lift``, metres; negative: lowered) and the
    problems with what was keyed."""
    part = {
        "baked": report.limbs,
        "frames": [start, end],
        "keys": report.keys,
        "unreached": report.unreached,
        "path": report.path,
        "why": report.why,
    }
    if report.off_plane:
        part["off_plane"] = {k: {"frames": n, "farthest": far} for k, (n, far) in report.off_plane.items()}
    if report.lift is not None:
        part["lift"] = report.lift
    part["problems"] = report.problems  # keyed but wrong: the file fails, unsaved
    if report.warnings:  # keyed beyond the planting limits: saved, and said
        part["warnings"] = report.warnings
    return part


def _plant(obj: bpy.types.Object, scene: bpy.types.Scene, options: Options, progress: Progress) -> dict:
    if not api.legs(obj):
        return {"note": "No legs with a foot to plant; nothing baked."}
    start, end = api.frame_range(options.frame_start, options.frame_end, scene)
    report = api.plant(
        obj,
        options.ground,
        frame_start=start,
        frame_end=end,
        progress=lambda done: progress((start, end), done),
        scene=scene,
        contacts=options.contacts,
        pelvis_mode=options.pelvis_mode,
        max_pelvis_drop=options.max_pelvis_drop,
        authored_ground=options.authored_ground,
    )
    return _baked(report, start, end)


def _check(obj: bpy.types.Object, scene: bpy.types.Scene, options: Options, progress: Progress) -> dict:
    part = {"problems": api.check(obj, scene)}
    if not part["problems"] and obj.limb_ik.ground is not None and any(limb.plant for limb in obj.limb_ik.limbs):
        part["feet"] = api.foot_report(obj, options.frame_start, options.frame_end, scene)
    return part


SUBCOMMANDS: dict[str, Subcommand] = {
    "detect": Subcommand(
        "Find arms and legs by bone name on every armature and add the limbs not set up yet.",
        _detect,
        needs_limbs=False,
        writes=True,
        uses_frames=False,
        changes=lambda part: bool(part["detected"]),
    ),
    "bake": Subcommand(
        "Key the solved pose of the enabled limbs of every armature that has limbs.",
        _bake,
        needs_limbs=True,
        writes=True,
        uses_frames=True,
        changes=lambda part: part.get("keys", 0) > 0,
    ),
    "plant": Subcommand(
        "Plant the feet of every armature with legs on its ground (or --ground) and bake the result.",
        _plant,
        needs_limbs=True,
        writes=True,
        uses_frames=True,
        uses_ground=True,
        forces_contacts=True,
        changes=lambda part: part.get("keys", 0) > 0,
    ),
    "check": Subcommand(
        "List every enabled limb that cannot be solved as set up (a file with any such limb fails), "
        "with the foot report of rigs that plant their feet.",
        _check,
        needs_limbs=True,
        writes=False,
        uses_frames=True,
    ),
}
