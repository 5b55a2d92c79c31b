# SPDX-License-Identifier: GPL-3.0-or-later
"""The batch: every file named on the command line done in turn, or by child processes, into one report.

A file that cannot be done (it does not load, has no armature, a limb is set up wrongly) fails on
its own: it is named in the report, nothing is written for it, and the batch goes on. Exit status:
0 when every file is fine, 1 when some failed, 2 for a usage error.
"""

import contextlib
import os
import sys
import threading
import time

import bpy

from . import arguments, files, parallel
from .commands import SUBCOMMANDS, Options
from .console import print_entry, print_summary
from .one_file import process_file
from .report import entry as new_entry
from .report import version, write_json


def main(argv: list[str], prog: str = f"blender --command {parallel.COMMAND}", worker: list[str] | None = None) -> int:
    """Run the command line ``argv`` (after the command name); returns the exit status.

    ``worker`` is the command that runs ``limb_ik`` in a new process, for ``--jobs``; by default a
    new Blender (see :func:`parallel.blender_worker`).
    """
    try:
        args = arguments.parse(argv, prog)
    except SystemExit as stop:  # argparse: usage error (2), or --help (0)
        return stop.code if isinstance(stop.code, int) else 2
    began = time.perf_counter()
    command = SUBCOMMANDS[args.subcommand]
    frames = getattr(args, "frames", None)
    options = Options(
        frames[0] if frames else None, frames[1] if frames else None, getattr(args, "dry_run", False),
        getattr(args, "ground", None),
    )  # fmt: skip
    items = files.expand(args.files)
    paths = [item for item in items if isinstance(item, str)]
    outputs, unwritable = files.outputs(paths, args)
    entries = {path: new_entry(path, error=reason) for path, reason in unwritable.items()}
    todo = [path for path in paths if path not in entries]
    if command.writes and args.output_dir and todo and not options.dry_run:
        os.makedirs(args.output_dir, exist_ok=True)
    for entry in [*(item for item in items if isinstance(item, dict)), *entries.values()]:
        print_entry(entry, options.dry_run)

    worker = worker or parallel.blender_worker()
    jobs = min(args.jobs, len(todo))
    if jobs > 1 and worker is None:
        print("Note: --jobs needs the Blender executable (or the bpy launcher); doing one file at a time.", flush=True)
        jobs = 1
    lock = threading.Lock()

    def done(entry: dict) -> None:
        with lock:
            entries[entry["path"]] = entry
            print_entry(entry, options.dry_run)
            if args.json and jobs == 1:  # after every file, so that progress can be followed (as a parent does)
                with contextlib.suppress(OSError):  # progress only: the last write says if the path is unusable
                    write_json(args.json, report(None))

    def report(status: int | None) -> dict:
        """The JSON report; ``status`` None while files are still being done."""
        return {
            "command": args.subcommand, "blender": bpy.app.version_string, "limb_ik": version(),
            "dry_run": options.dry_run, "frames": list(frames) if frames else None, "jobs": jobs,
            "exit_status": status, "seconds": round(time.perf_counter() - began, 3),
            "files": [entries[i] if isinstance(i, str) else i for i in items if not isinstance(i, str) or i in entries],
        }  # fmt: skip

    if jobs > 1:
        # The children do the work; this process only hands out the files and follows their reports.
        parallel.run_parallel(worker, jobs, args, todo, done)
    else:
        for path in todo:
            done(process_file(path, outputs[path], args.subcommand, options))
    failed = [e for e in entries.values() if e["status"] != "ok"] + [i for i in items if isinstance(i, dict)]
    status = 1 if failed else 0
    print_summary(len(items) - len(failed), len(items), len(failed), time.perf_counter() - began)
    if args.json:
        try:
            write_json(args.json, report(status))
        except OSError as error:
            print(f"The report could not be written to '{args.json}': {error}", file=sys.stderr, flush=True)
            return 1
    return status
