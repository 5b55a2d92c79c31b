# SPDX-License-Identifier: GPL-3.0-or-later
"""``--jobs N``: the files shared out over N child processes, each running this command on its share.

A child writes its JSON report after every file, and now and then its progress through a long one;
this process follows those reports. A child that dies fails only the file it was on, and a new
child takes the rest of its share.
"""

import os
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import bpy

from .json_report import entry as new_entry
from .json_report import read_json
from .stop import stopped_by

COMMAND = "limb_ik"


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
    extension = __package__.rpartition(".")[0]  # this package is the extension's cli
    return [binary, "--background", *factory, "--addons", extension, "--command", COMMAND]


def _child_flags(args, report: str) -> list[str]:
    """The options of a child's command line: this run's, one process each, reporting to ``report``."""
    flags = ["--json", report, "--jobs", "1"]
    if getattr(args, "in_place", False):
        flags.append("--in-place")
    elif getattr(args, "output_dir", None):
        flags += ["--output-dir", os.path.abspath(args.output_dir)]
    if getattr(args, "dry_run", False):
        flags.append("--dry-run")
    if getattr(args, "frames", None):
        flags += ["--frames", "{}:{}".format(*args.frames)]
    if getattr(args, "ground", None):
        flags += ["--ground", args.ground]
    if getattr(args, "pelvis_mode", None):
        flags += ["--pelvis-mode", args.pelvis_mode]
    if getattr(args, "max_pelvis_drop", None) is not None:
        flags += ["--max-pelvis-drop", repr(args.max_pelvis_drop)]
    if getattr(args, "authored_ground", None):
        flags += ["--authored-ground", args.authored_ground]
    for state in ("down", "up"):
        for limb, first, last in getattr(args, f"force_{state}", None) or ():
            flags += [f"--force-{state}", f"{limb}:{first}-{last}"]
    return [*flags, "--from-parent"]


def _run_share(worker: list[str], subcommand: str, share: list[str], flags: list[str], done, relay, stop) -> None:
    """Do ``share`` in child processes, one after another, calling ``done(entry)`` for each file as
    its child reports it and ``relay(progress)`` with its progress through a long file. A child that
    stops early fails the file it was on; a new child takes the rest of the share.

    A child reads its standard input, a pipe from here, and stops as on SIGTERM when it closes:
    here when ``stop`` is requested, or by the system when this process ends, however it ends. A
    child stopped by SIGINT or SIGTERM (a terminal's Ctrl-C reaches all of them) stops the batch.
    """
    todo = list(share)
    report = flags[flags.index("--json") + 1]
    while todo and not stop:
        if os.path.exists(report):
            os.remove(report)  # the last child's
        with tempfile.TemporaryFile("w+", errors="replace") as errors:
            command = [*worker, subcommand, *todo, *flags]
            child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors)
            try:
                _follow(child, report, todo, done, relay, stop)
            finally:
                child.stdin.close()
            number = stopped_by(child.returncode)
            if number is not None:
                stop.request(number)
            if todo and not stop:  # a child that finishes reports every file: it stopped on the first one left
                errors.seek(0)
                last = [line for line in errors.read().splitlines() if line.strip()][-3:]
                detail = (": " + " / ".join(last)) if last else ""
                name = os.path.basename(todo[0])
                error = f"Blender stopped on '{name}' (exit status {child.returncode}){detail}"
                done(new_entry(todo.pop(0), error=error))


def _follow(child: subprocess.Popen, report: str, todo: list[str], done, relay, stop) -> None:
    """Read ``child``'s report until it exits, taking the files it reports off ``todo``; close its
    standard input once ``stop`` is requested."""
    shown = None
    while True:
        if stop and not child.stdin.closed:
            child.stdin.close()
        exited = child.poll() is not None  # read once more after the child has exited
        found = read_json(report) or {}
        for entry in _reported(found, todo):
            todo.remove(entry["path"])
            done(entry)
        if found.get("progress") and found["progress"] != shown:
            shown = found["progress"]
            relay(shown)
        if exited:
            return
        time.sleep(0.1)


def _reported(report: dict, waiting: list[str]) -> list[dict]:
    """The entries of a child's report for files still ``waiting`` for one."""
    return [entry for entry in report.get("files", []) if isinstance(entry, dict) and entry.get("path") in waiting]


def run_parallel(worker: list[str], jobs: int, args, todo: list[str], done, relay, stop) -> None:
    """Do the files ``todo`` in ``jobs`` children of ``worker``, with the options ``args``."""
    with tempfile.TemporaryDirectory(prefix="limb_ik_cli_") as folder, ThreadPoolExecutor(jobs) as pool:
        shares = [todo[n::jobs] for n in range(jobs)]  # every jobs-th file: heavy runs of files spread
        reports = [os.path.join(folder, f"{n}.json") for n in range(jobs)]
        children = [
            pool.submit(_run_share, worker, args.subcommand, share, _child_flags(args, report), done, relay, stop)
            for share, report in zip(shares, reports)
        ]
        for child in children:
            child.result()
