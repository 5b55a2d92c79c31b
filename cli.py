# SPDX-License-Identifier: GPL-3.0-or-later
"""The batch command line: ``blender --command limb_ik <subcommand> FILES... [options]``.

Every file is opened, each of its armatures goes through :mod:`.api`, and the result is saved
beside the other outputs (or over the input with ``--in-place``). A file that cannot be done (it
does not load, has no armature, a limb is set up wrongly) fails on its own: it is named in the
report, nothing is written for it, and the batch goes on. Exit status: 0 when every file is
fine, 1 when some failed, 2 for a usage error.

With ``--jobs N`` the files are shared out over N Blender processes, each running this same
command on its share and writing a JSON report after every file, which this process follows and
merges. A process that dies fails only the file it was on: the rest of its share goes on in a new
one. The ``bpy``-wheel launcher (``tools/limb_ik_cli.py``) calls :func:`main` with its own child
command.
"""

import argparse
import contextlib
import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import bpy

from . import api, batch_report

COMMAND = "limb_ik"

# Start of a compressed .blend: zstd (Blender 3.0+) or gzip (older files).
_COMPRESSED_MAGIC = (b"\x28\xb5\x2f\xfd", b"\x1f\x8b")


@dataclass(frozen=True)
class Options:
    """What a subcommand needs to know besides the file: the parsed command line."""

    frame_start: int | None = None
    frame_end: int | None = None
    dry_run: bool = False
    ground: str | None = None  #: collection to plant feet on (plant)


@dataclass(frozen=True)
class Subcommand:
    """One entry of the command table.

    ``run`` does one armature and returns its part of the report (``detected``, ``baked``,
    ``problems``, …); it raises :class:`api.LimbIKError` when the armature cannot be done, which
    fails the file. ``changes`` tells from that part whether the file was modified.
    """

    help: str
    run: Callable[[bpy.types.Object, Options], dict]
    needs_limbs: bool  #: only armatures with limbs are done; a file without any fails
    writes: bool  #: saves files: takes --output-dir / --in-place / --dry-run
    uses_frames: bool  #: takes --frames
    changes: Callable[[dict], bool] = lambda part: False


def _detect(obj: bpy.types.Object, options: Options) -> dict:
    return {"detected": api.detect_limbs(obj)}


def _frame_range(options: Options) -> tuple[int, int]:
    """``--frames``, else the current scene's range."""
    scene = bpy.context.scene
    start = scene.frame_start if options.frame_start is None else options.frame_start
    return start, scene.frame_end if options.frame_end is None else options.frame_end


def _bake(obj: bpy.types.Object, options: Options) -> dict:
    if not any(limb.enabled for limb in obj.limb_ik.limbs):
        return {"note": "No enabled limbs; nothing baked."}
    start, end = _frame_range(options)
    report = api.bake(obj, frame_start=start, frame_end=end)
    return {"baked": report.limbs, "frames": [start, end], "keys": report.keys, "unreached": report.unreached}


def _plant(obj: bpy.types.Object, options: Options) -> dict:
    if not any(limb.plant or ("leg" in limb.name.lower() and limb.end_bone) for limb in obj.limb_ik.limbs):
        return {"note": "No legs with a foot to plant; nothing baked."}
    start, end = _frame_range(options)
    report = api.plant(obj, options.ground, frame_start=start, frame_end=end)
    return {"baked": report.limbs, "frames": [start, end], "keys": report.keys, "unreached": report.unreached}


def _check(obj: bpy.types.Object, options: Options) -> dict:
    part = {"problems": api.check(obj)}
    if not part["problems"] and obj.limb_ik.ground is not None and any(limb.plant for limb in obj.limb_ik.limbs):
        part["feet"] = api.foot_report(obj, *_frame_range(options))
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


# Command line


def _frames(text: str) -> tuple[int, int]:
    start, colon, end = text.partition(":")
    try:
        if not colon:
            raise ValueError
        first, last = int(start), int(end)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a frame range like 1:250") from None
    if last < first:
        raise argparse.ArgumentTypeError(f"the range {text} ends before it starts")
    return first, last


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of processes (1 or more)")
    return value


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Limb IK on many .blend files at once. A file that fails is reported and skipped; "
        "exit status 0: all fine, 1: some files failed, 2: usage error.",
        epilog=f"'{prog} SUBCOMMAND --help' lists the options of a subcommand.",
    )
    subparsers = parser.add_subparsers(dest="subcommand", required=True, metavar="SUBCOMMAND")
    for name, command in SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=command.help, description=command.help)
        sub.add_argument("files", nargs="+", metavar="FILE", help=".blend files or glob patterns ('shots/**/*.blend')")
        if command.writes:
            where = sub.add_mutually_exclusive_group()
            where.add_argument("--output-dir", metavar="DIR", help="write each result here under its input's name")
            where.add_argument("--in-place", action="store_true", help="overwrite the input files")
            sub.add_argument("--dry-run", action="store_true", help="do everything but write no .blend file")
        if command.uses_frames:
            sub.add_argument("--frames", type=_frames, metavar="A:B", help="frame range (default: each scene's)")
        if command.run is _plant:
            sub.add_argument("--ground", metavar="COLLECTION", help="collection to stand on (default: the rig's own)")
        sub.add_argument("--json", metavar="REPORT", help="also write a machine-readable report to this file")
        sub.add_argument("--jobs", type=_jobs, default=1, metavar="N", help="files done in parallel (default 1)")
    return parser


def parse(argv: list[str], prog: str) -> argparse.Namespace:
    """The parsed arguments; raises SystemExit (status 2) on a usage error."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if SUBCOMMANDS[args.subcommand].writes and not (args.output_dir or args.in_place):
        parser.error(f"{args.subcommand} changes files: pass --output-dir DIR, or --in-place to overwrite them")
    return args


# One file


def _entry(path: str, output: str | None = None, error: str | None = None) -> dict:
    """A file's part of the report; failed when ``error`` is given."""
    return {"path": path, "status": "failed" if error else "ok", "error": error, "output": None if error else output,
            "written": False, "changed": False, "armatures": [], "seconds": 0.0}  # fmt: skip


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


@contextmanager
def _current(scene: bpy.types.Scene):
    """Make ``scene`` the current one for a while: a bake evaluates the frames of the current scene."""
    window = bpy.context.window or next(iter(bpy.context.window_manager.windows), None)
    previous = window.scene if window is not None else None
    if window is not None:
        window.scene = scene
    override = {"window": window} if window is not None else {"scene": scene, "view_layer": scene.view_layers[0]}
    try:
        with bpy.context.temp_override(**override):
            # A scene opened in the background has no dependency graph yet, and Blender 4.2's
            # frame_set() only animates scenes that have one: a bake would read the saved pose,
            # not the animated one, at its first frame. Build and evaluate it now.
            bpy.context.view_layer.update()
            yield
    finally:
        if window is not None:
            window.scene = previous


def _run_armatures(name: str, command: Subcommand, options: Options, entry: dict) -> None:
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
        with _current(scene):
            for obj in armatures:
                part = {"name": obj.name, "scene": scene.name, "detected": [], "baked": [], "problems": {}}
                entry["armatures"].append(part)
                try:
                    part.update(command.run(obj, options))
                except api.LimbIKError as error:
                    text = str(error)
                    raise api.LimbIKError(
                        text if f"'{obj.name}'" in text else f"Armature '{obj.name}': {text}"
                    ) from None
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


def _is_compressed(path: str) -> bool:
    with open(path, "rb") as file:
        return file.read(4).startswith(_COMPRESSED_MAGIC)


def _save(output: str, compress: bool) -> None:
    """Save the open file as ``output`` through a temporary file in the same folder, so relative paths
    are remapped for the final place and an interrupted save never leaves a partial file there."""
    folder, name = os.path.split(output)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.limb_ik-tmp")
    try:
        bpy.ops.wm.save_as_mainfile(filepath=temporary, copy=True, compress=compress, relative_remap=True)
        os.replace(temporary, output)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def process_file(path: str, output: str | None, subcommand: str, options: Options) -> dict:
    """Do ``subcommand`` on one .blend file and save the result to ``output`` (None: write nothing).

    The one per-file code path: the in-process batch and every child process of ``--jobs`` run it.
    Never raises for a problem with the file; the returned report entry says what happened.
    """
    began = time.perf_counter()
    command = SUBCOMMANDS[subcommand]
    entry = _entry(path, output)
    name = os.path.basename(path)
    try:
        try:
            bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
        except RuntimeError as error:
            reason = _message(error).replace(path, name)  # Blender's message names the whole path, twice
            raise api.LimbIKError(f"Blender could not open '{name}': {reason}") from None
        _run_armatures(name, command, options, entry)
        in_place = output is not None and os.path.abspath(output) == os.path.abspath(path)
        if output is not None and not options.dry_run and (entry["changed"] or not in_place):
            _save(output, _is_compressed(path))
            entry["written"] = True
    except api.LimbIKError as error:
        entry.update(status="failed", error=str(error), output=None, written=False)
    except Exception as error:  # a Blender or Limb IK bug on this file must not stop the batch
        traceback.print_exc()
        entry.update(status="failed", error=f"'{name}' failed unexpectedly: {type(error).__name__}: {_message(error)}",
                     output=None, written=False)  # fmt: skip
    entry["seconds"] = round(time.perf_counter() - began, 3)
    return entry


# The batch


def _expand(patterns: list[str]) -> list[str | dict]:
    """The inputs in order, each an absolute file path (named once, even if given twice) or, for a
    pattern that names no file, its failed report entry."""
    items, seen = [], set()
    for pattern in patterns:
        if os.path.isfile(pattern):  # a file named like a pattern ("take[2].blend") is that file
            matches = [pattern]
        elif glob.has_magic(pattern):
            matches = sorted(match for match in glob.glob(pattern, recursive=True) if os.path.isfile(match))
            if not matches:
                items.append(_entry(pattern, error=f"No file matches '{pattern}'."))
        elif os.path.isdir(pattern):
            items.append(_entry(pattern, error=f"'{pattern}' is a folder; name the files, e.g. '{pattern}/*.blend'."))
            continue
        else:
            items.append(_entry(pattern, error=f"'{pattern}' does not exist."))
            continue
        for match in matches:
            if os.path.realpath(match) not in seen:
                seen.add(os.path.realpath(match))
                items.append(os.path.abspath(match))
    return items


def _outputs(files: list[str], args) -> tuple[dict[str, str | None], dict[str, str]]:
    """Each input's output path (None when the subcommand writes nothing), and the inputs that cannot
    be written with the reason."""
    if not SUBCOMMANDS[args.subcommand].writes:
        return dict.fromkeys(files), {}
    if args.in_place:
        return {path: path for path in files}, {}
    folder = os.path.abspath(args.output_dir)
    outputs, problems, taken = {}, {}, {}
    for path in files:
        output = os.path.join(folder, os.path.basename(path))
        if os.path.realpath(output) == os.path.realpath(path):
            problems[path] = (
                f"'{os.path.basename(path)}' is already in the output folder; writing it there would overwrite "
                "the input (pass --in-place to do that)."
            )
        elif output in taken:
            problems[path] = f"Its output '{output}' would overwrite the output of '{taken[output]}'."
        else:
            taken[output] = path
            outputs[path] = output
    return outputs, problems


def _child_share(worker: list[str], share: list[str], outputs: dict, args, report: str, done) -> None:
    """Do ``share`` in child processes, one after another, calling ``done(entry)`` for each file as
    its child reports it. A child that stops early fails the file it was on; a new child takes the
    rest of the share."""
    todo = list(share)
    flags = ["--json", report, "--jobs", "1"]
    if outputs[todo[0]] is not None:  # every output of a run goes to the same place
        flags += ["--in-place"] if args.in_place else ["--output-dir", os.path.dirname(outputs[todo[0]])]
    if getattr(args, "dry_run", False):
        flags.append("--dry-run")
    if getattr(args, "frames", None):
        flags += ["--frames", "{}:{}".format(*args.frames)]
    if getattr(args, "ground", None):
        flags += ["--ground", args.ground]
    while todo:
        command = [*worker, args.subcommand, *todo, *flags]
        if os.path.exists(report):
            os.remove(report)  # the last child's
        with open(os.devnull, "w") as quiet, tempfile.TemporaryFile("w+", errors="replace") as errors:
            child = subprocess.Popen(command, stdout=quiet, stderr=errors, text=True)
            while True:
                stopped = child.poll() is not None  # read once more after the child has stopped
                for entry in _reported(report, todo):
                    todo.remove(entry["path"])
                    done(entry)
                if stopped:
                    break
                time.sleep(0.1)
            if todo:  # a child that finishes reports every file: it stopped on the first one left
                errors.seek(0)
                last = [line for line in errors.read().splitlines() if line.strip()][-3:]
                detail = (": " + " / ".join(last)) if last else ""
                name = os.path.basename(todo[0])
                done(_entry(todo.pop(0), error=f"Blender stopped on '{name}' (exit status {child.returncode}){detail}"))


def _reported(report: str, waiting: list[str]) -> list[dict]:
    """The entries of a child's report for files still ``waiting`` for one."""
    files = (_read_json(report) or {}).get("files", [])
    return [entry for entry in files if isinstance(entry, dict) and entry.get("path") in waiting]


def _read_json(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return None


def _print_entry(entry: dict, dry_run: bool) -> None:
    name = os.path.basename(entry["path"])
    if entry["status"] != "ok":
        print(f"FAILED  {name}: {entry['error']}", flush=True)
        return
    details = []
    for part in entry["armatures"]:
        bits = [f"detected {', '.join(part['detected'])}" if part["detected"] else ""]
        if part["baked"]:
            bits.append(f"baked {', '.join(part['baked'])} ({part['keys']} keys)")
        bits += [f"{limb}: {text}" for limb, text in part["problems"].items()] + [part.get("note", "")]
        details.append(f"{part['name']}: " + ("; ".join(b for b in bits if b) or "nothing to do"))
    if entry["written"]:
        where = f" -> {entry['output']}"
    elif entry["output"] and dry_run and (entry["changed"] or entry["output"] != entry["path"]):
        where = f" (dry run, would write {entry['output']})"
    elif entry["output"]:
        where = " (unchanged, not rewritten)"
    else:
        where = ""
    print(f"ok      {name}{where} [{entry['seconds']:.1f} s] " + " | ".join(details), flush=True)


def _version() -> str:
    try:
        with open(Path(__file__).with_name("blender_manifest.toml"), "rb") as file:
            return tomllib.load(file)["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return ""


def _write_json(path: str, report: dict) -> None:
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        json.dump(report, file, indent=2)
        file.write("\n")
    os.replace(temporary, path)


def blender_worker(binary: str | None = None, factory_startup: bool | None = None) -> list[str] | None:
    """How to start a child Blender that runs this command with this extension enabled; None without
    a Blender executable (the bpy wheel: its launcher passes its own). Defaults: this Blender's.

    The child inherits the environment, so it finds the same user resources and extension
    repositories, and it loads the same preferences unless this Blender runs with factory settings.
    ``--addons`` enables this extension in either case (a no-op when the preferences already do);
    it must come before ``--command``, which takes every argument after it.
    """
    binary = bpy.app.binary_path if binary is None else binary
    factory_startup = bpy.app.factory_startup if factory_startup is None else factory_startup
    if not binary:
        return None
    factory = ["--factory-startup"] if factory_startup else []
    return [binary, "--background", *factory, "--addons", __package__, "--command", COMMAND]


def main(argv: list[str], prog: str = f"blender --command {COMMAND}", worker: list[str] | None = None) -> int:
    """Run the command line ``argv`` (after the command name); returns the exit status.

    ``worker`` is the command that runs ``limb_ik`` in a new process, for ``--jobs``; by default a
    new Blender (see :func:`blender_worker`).
    """
    if argv[:1] == ["merge"]:  # a farm's per-file reports merged into one: see batch_report.py
        return batch_report.main(argv[1:], f"{prog} merge")
    try:
        args = parse(argv, prog)
    except SystemExit as stop:  # argparse: usage error (2), or --help (0)
        return stop.code if isinstance(stop.code, int) else 2
    began = time.perf_counter()
    command = SUBCOMMANDS[args.subcommand]
    frames = getattr(args, "frames", None)
    options = Options(
        frames[0] if frames else None, frames[1] if frames else None, getattr(args, "dry_run", False),
        getattr(args, "ground", None),
    )  # fmt: skip
    items = _expand(args.files)
    files = [item for item in items if isinstance(item, str)]
    outputs, unwritable = _outputs(files, args)
    entries = {path: _entry(path, error=reason) for path, reason in unwritable.items()}
    todo = [path for path in files if path not in entries]
    if command.writes and args.output_dir and todo and not options.dry_run:
        os.makedirs(args.output_dir, exist_ok=True)
    for entry in [*(item for item in items if isinstance(item, dict)), *entries.values()]:
        _print_entry(entry, options.dry_run)

    worker = worker or blender_worker()
    jobs = min(args.jobs, len(todo))
    if jobs > 1 and worker is None:
        print("Note: --jobs needs the Blender executable (or the bpy launcher); doing one file at a time.", flush=True)
        jobs = 1
    lock = threading.Lock()

    def done(entry: dict) -> None:
        with lock:
            entries[entry["path"]] = entry
            _print_entry(entry, options.dry_run)
            if args.json and jobs == 1:  # after every file, so that progress can be followed (as a parent does)
                with contextlib.suppress(OSError):  # progress only: the last write says if the path is unusable
                    _write_json(args.json, report(None))

    def report(status: int | None) -> dict:
        """The JSON report; ``status`` None while files are still being done."""
        return {
            "command": args.subcommand, "blender": bpy.app.version_string, "limb_ik": _version(),
            "dry_run": options.dry_run, "frames": list(frames) if frames else None, "jobs": jobs,
            "exit_status": status, "seconds": round(time.perf_counter() - began, 3),
            "files": [entries[i] if isinstance(i, str) else i for i in items if not isinstance(i, str) or i in entries],
        }  # fmt: skip

    if jobs > 1:
        # The children do the work; this process only hands out the files and follows their reports.
        with tempfile.TemporaryDirectory(prefix="limb_ik_cli_") as folder, ThreadPoolExecutor(jobs) as pool:
            shares = [todo[n::jobs] for n in range(jobs)]  # every jobs-th file: heavy runs of files spread
            children = [
                pool.submit(_child_share, worker, share, outputs, args, os.path.join(folder, f"{n}.json"), done)
                for n, share in enumerate(shares)
            ]
            for child in children:
                child.result()
    else:
        for path in todo:
            done(process_file(path, outputs[path], args.subcommand, options))
    failed = [e for e in entries.values() if e["status"] != "ok"] + [i for i in items if isinstance(i, dict)]
    status = 1 if failed else 0
    print(f"{len(items) - len(failed)} of {len(items)} files done, {len(failed)} failed "
          f"({time.perf_counter() - began:.1f} s).", flush=True)  # fmt: skip
    if args.json:
        try:
            _write_json(args.json, report(status))
        except OSError as error:
            print(f"The report could not be written to '{args.json}': {error}", file=sys.stderr, flush=True)
            return 1
    return status


def execute(argv: list[str]) -> int:
    """Entry point of ``blender --command limb_ik``."""
    return main(list(argv))


_handle = None


def register():
    global _handle
    _handle = bpy.utils.register_cli_command(COMMAND, execute)


def unregister():
    global _handle
    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None
