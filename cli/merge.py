# SPDX-License-Identifier: GPL-3.0-or-later
"""Merging the command line's JSON reports: ``blender --command limb_ik merge REPORTS... --json OUT``.

A render farm runs the command once per file, each task writing its own report; the last task
merges them into one report of the same shape, with every file's entry. No ``bpy`` here, so the
merge is also usable (and tested) as plain Python.

A report that is missing or unreadable, a report that stopped midway (``exit_status`` null: its
process died), and two files written to the same output by different tasks all fail the merge,
each named in a sentence.
"""

import argparse
import json
import os
from pathlib import Path

#: Top-level keys copied from the per-file reports when they all agree.
SHARED = ("command", "blender", "limb_ik", "dry_run", "frames")


def _read(path: Path) -> tuple[dict | None, str | None]:
    """A report and None, or None and why it cannot be used."""
    try:
        with open(path, encoding="utf-8") as file:
            report = json.load(file)
    except FileNotFoundError:
        return None, f"The report '{path}' is missing: its task did not run or did not write it."
    except (OSError, ValueError) as error:
        return None, f"The report '{path}' could not be read: {error}"
    if not isinstance(report, dict) or not isinstance(report.get("files"), list):
        return None, f"The report '{path}' is not a Limb IK report (it has no list of files)."
    return report, None


def report_paths(items: list[str]) -> list[Path]:
    """The report files named by ``items``: files as given, folders as the ``*.json`` files directly in them."""
    paths = []
    for item in items:
        path = Path(item)
        paths += sorted(path.glob("*.json")) if path.is_dir() else [path]
    return paths


def merge(paths: list[Path]) -> dict:
    """One report from the per-task reports at ``paths``, in their order."""
    reports, files, seconds = [], [], 0.0
    shared: dict[str, list] = {key: [] for key in SHARED}
    for path in paths:
        report, error = _read(path)
        if report is not None:
            if report.get("exit_status") is None:
                error = f"The report '{path}' is incomplete: its process stopped before the end."
            files += [entry for entry in report["files"] if isinstance(entry, dict)]
            seconds += float(report.get("seconds") or 0.0)
            for key in SHARED:
                if report.get(key) not in shared[key]:
                    shared[key].append(report.get(key))
        reports.append(
            {
                "path": str(path),
                "exit_status": None if report is None else report.get("exit_status"),
                "files": 0 if report is None else len(report["files"]),
                "error": error,
            }
        )
    _fail_shared_outputs(files)
    merged = {key: values[0] if len(values) == 1 else None for key, values in shared.items()}
    if len(shared["command"]) > 1:  # reports of different commands: merged, but not a valid whole
        for entry in reports:
            entry["error"] = entry["error"] or "The reports are of different commands: " + ", ".join(
                str(c) for c in shared["command"]
            )
    failed = any(entry.get("status") != "ok" for entry in files) or any(
        entry["error"] or entry["exit_status"] != 0 for entry in reports
    )
    merged.update(
        jobs=len(reports),
        exit_status=1 if failed or not reports else 0,
        seconds=round(seconds, 3),
        reports=reports,
        files=files,
    )
    return merged


def _fail_shared_outputs(files: list[dict]) -> None:
    """Two tasks that wrote the same output overwrote each other's result: fail both files."""
    writers: dict[str, list[dict]] = {}
    for entry in files:
        if entry.get("status") == "ok" and entry.get("written") and entry.get("output"):
            writers.setdefault(os.path.normpath(entry["output"]), []).append(entry)
    for output, entries in writers.items():
        if len(entries) > 1:
            for entry in entries:
                others = ", ".join(f"'{e['path']}'" for e in entries if e is not entry)
                entry.update(
                    status="failed",
                    error=f"Its output '{output}' was also written for {others}; only the last one written is there.",
                )


def print_summary(merged: dict) -> None:
    """The failures, one line each, and a closing count, as the command line prints them."""
    for entry in merged["reports"]:
        if entry["error"]:
            print(f"FAILED  {entry['error']}", flush=True)
    failed = [entry for entry in merged["files"] if entry.get("status") != "ok"]
    for entry in failed:
        print(f"FAILED  {os.path.basename(entry.get('path', '?'))}: {entry.get('error')}", flush=True)
    total = len(merged["files"])
    print(
        f"{total - len(failed)} of {total} files done, {len(failed)} failed ({len(merged['reports'])} reports merged).",
        flush=True,
    )


def write(path: str, report: dict) -> None:
    """Write ``report`` through a temporary file, so a reader never sees half of it."""
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        json.dump(report, file, indent=2)
        file.write("\n")
    os.replace(temporary, path)


def main(argv: list[str], prog: str) -> int:
    """``merge REPORT... --json OUT``; exit status 0 when every file is fine, 1 otherwise, 2 for a usage error."""
    parser = argparse.ArgumentParser(
        prog=prog,
        fromfile_prefix_chars="@",
        description="Merge the JSON reports of several runs (a farm's tasks) into one report.",
        epilog="@LIST reads the arguments from the file LIST, one a line.",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="report files, or folders of them (*.json)")
    parser.add_argument("--json", required=True, metavar="OUT", help="where to write the merged report")
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 2
    merged = merge(report_paths(args.reports))
    print_summary(merged)
    try:
        write(args.json, merged)
    except OSError as error:
        print(f"The report could not be written to '{args.json}': {error}", flush=True)
        return 1
    return merged["exit_status"]
