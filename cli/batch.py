# SPDX-License-Identifier: GPL-3.0-or-later
"""The batch: every file named on the command line done in turn, or by child processes, into one report.

A file that cannot be done (it does not load, has no armature, a limb is set up wrongly) fails on
its own: it is named in the report, nothing is written for it, and the batch goes on. SIGINT or
SIGTERM stops the batch once the file it is on is done, or between two frames of a bake (see
:mod:`.stop`). Exit status: 0 when every file is fine, 1 when some failed, 2 for a usage error,
128 + the signal's number when stopped.
"""

import contextlib
import functools
import sys
import threading
import time

import bpy

from . import arguments, console, files, merge, parallel
from .commands import Options
from .json_report import entry as new_entry
from .json_report import not_done, version
from .one_file import process_file
from .stop import Stop


def main(
    argv: list[str],
    prog: str = f"blender --command {parallel.COMMAND}",
    worker: list[str] | None = None,
    received: list[int] | None = None,
) -> int:
    """Run the command line ``argv`` (after the command name); returns the exit status.

    ``prog`` is the command as typed, for usage lines. ``worker`` is the command that runs
    ``limb_ik`` in a new process, for ``--jobs``; by default a new Blender (see
    :func:`parallel.blender_worker`). ``received``: the signals (SIGINT, SIGTERM) a launcher noted
    while it started, a list it may still add to until this takes them over; the first stops the batch
    before its first file.
    """
    if argv[:1] == ["merge"]:  # a farm's per-file reports merged into one: no files to open
        return merge.main(argv[1:], f"{prog} merge")
    try:
        args = arguments.parse(argv, prog)
    except SystemExit as stop:  # argparse: usage error (2), or --help (0)
        return stop.code if isinstance(stop.code, int) else 2
    stop = Stop()
    with stop.on_signals():
        for number in received or ():  # read once this batch's own handlers took over: none is missed
            stop.request(number)
        if args.from_parent:
            stop.watch_parent()
        return _Batch(args, worker or parallel.blender_worker(), stop).run()


class _Batch:
    """One run of the command line: the files, their entries as they are done, and the report."""

    def __init__(self, args, worker: list[str] | None, stop: Stop):
        self.began = time.perf_counter()
        self.args, self.worker, self.stop = args, worker, stop
        frames = getattr(args, "frames", None)
        self.options = Options(
            frames[0] if frames else None,
            frames[1] if frames else None,
            getattr(args, "dry_run", False),
            getattr(args, "ground", None),
            arguments.forced_contacts(args),
            getattr(args, "pelvis_mode", None),
            getattr(args, "max_pelvis_drop", None),
            getattr(args, "authored_ground", None),
        )
        self.items = files.expand(args.files)
        paths = [item for item in self.items if isinstance(item, str)]
        self.outputs, unwritable = files.outputs(paths, args)
        self.entries = {path: new_entry(path, error=reason) for path, reason in unwritable.items()}
        self.todo = [path for path in paths if path not in self.entries]
        self.jobs = min(args.jobs, len(self.todo))
        self.lock = threading.Lock()
        self.printed = 0
        self.timer = console.ProgressTimer()
        self.progress: dict | None = None  #: a child's latest progress, in its report for the parent

    def run(self) -> int:
        for entry in [*(item for item in self.items if isinstance(item, dict)), *self.entries.values()]:
            self._print(entry)
        if self.jobs > 1 and self.worker is None:
            print(
                "Note: --jobs needs the Blender executable (or the bpy launcher); doing one file at a time.", flush=True
            )
            self.jobs = 1
        if self.jobs > 1:
            # The children do the work; this process only hands out the files and follows their reports.
            parallel.run_parallel(self.worker, self.jobs, self.args, self.todo, self.done, self.relay, self.stop)
        else:
            for path in self.todo:
                if self.stop:
                    break
                self.timer.start()
                progress = functools.partial(self.on_progress, path)
                self.done(process_file(path, self.outputs[path], self.args.subcommand, self.options, progress))
        if self.stop and not self.args.from_parent:  # a child's parent accounts for the files it never started
            for path in self.todo:
                self.entries.setdefault(path, not_done(path, self.stop.sentence(started=False)))
        listed = self._listed()
        failed = [entry for entry in listed if entry["status"] == "failed"]
        status = self.stop.exit_status if self.stop else 1 if failed else 0
        console.print_summary(listed, time.perf_counter() - self.began, self.stop.name if self.stop else None)
        if self.args.json:
            try:
                merge.write(self.args.json, self.report(status))
            except OSError as error:
                print(f"The report could not be written to '{self.args.json}': {error}", file=sys.stderr, flush=True)
                return status or 1
        return status

    def done(self, entry: dict) -> None:
        """Take a file's entry as it is done (from any thread)."""
        with self.lock:
            if entry["status"] == "stopped" and self.stop:  # a child stopped by its parent cannot tell why
                entry["error"] = self.stop.sentence(started=True)
            self.entries[entry["path"]] = entry
            self.progress = None
            self._print(entry)
            if self.args.json and self.jobs == 1:  # after every file, for a parent or anyone following
                self._write_progress()

    def on_progress(self, path: str, armature: str, frames: tuple[int, int], fraction: float) -> None:
        """Between two frames of a bake: stop there if asked to, else say where the file is now and then."""
        self.stop.check()
        if not self.timer.due():
            return
        if self.args.from_parent:
            self.progress = {"path": path, "armature": armature, "frames": list(frames), "fraction": fraction}
            self._write_progress()
        else:
            console.print_progress(path, armature, frames, fraction)

    def relay(self, progress: dict) -> None:
        """A child's progress, printed here."""
        with self.lock:
            console.print_progress(
                progress["path"], progress["armature"], tuple(progress["frames"]), progress["fraction"]
            )

    def report(self, status: int | None) -> dict:
        """The JSON report; ``status`` None while files are still being done."""
        frames = getattr(self.args, "frames", None)
        report = {
            "command": self.args.subcommand,
            "blender": bpy.app.version_string,
            "limb_ik": version(),
            "dry_run": self.options.dry_run,
            "frames": list(frames) if frames else None,
            "jobs": self.jobs,
            "exit_status": status,
            "stopped": self.stop.name if self.stop else None,
            "seconds": round(time.perf_counter() - self.began, 3),
            "files": self._listed(),
        }
        if self.args.from_parent:
            report["progress"] = self.progress
        return report

    def _listed(self) -> list[dict]:
        """The entries so far, in the order the files were named."""
        items = self.items
        return [
            self.entries[i] if isinstance(i, str) else i for i in items if not isinstance(i, str) or i in self.entries
        ]

    def _print(self, entry: dict) -> None:
        self.printed += 1
        console.print_entry(entry, self.args.subcommand, self.options.dry_run, self.printed, len(self.items))

    def _write_progress(self) -> None:
        with contextlib.suppress(OSError):  # progress only: the last write says if the path is unusable
            merge.write(self.args.json, self.report(None))
