# SPDX-License-Identifier: GPL-3.0-or-later
"""Merging per-file reports (``cli/merge.py``, the ``merge`` subcommand), without Blender."""

import importlib.util
import json
from pathlib import Path

import pytest

# cli/merge.py imports nothing from Blender or the rest of the package: load it on its own.
_SPEC = importlib.util.spec_from_file_location("merge", Path(__file__).resolve().parents[2] / "cli" / "merge.py")
merge = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(merge)


def entry(path: str, error: str | None = None, output: str | None = None) -> dict:
    """A file's entry as the command line writes it."""
    return {
        "path": path,
        "status": "failed" if error else "ok",
        "error": error,
        "output": None if error else output,
        "written": bool(output) and not error,
        "changed": bool(output) and not error,
        "armatures": [],
        "seconds": 0.5,
    }


def report(folder: Path, name: str, *entries: dict, command: str = "bake", status: int | None | str = "auto") -> Path:
    """A per-task report in ``folder``; exit status from its entries unless given (None: a process that died)."""
    if status == "auto":
        status = 1 if any(e["status"] != "ok" for e in entries) else 0
    body = {
        "command": command,
        "blender": "5.0.1",
        "limb_ik": "0.1.0",
        "dry_run": False,
        "frames": [1, 6],
        "jobs": 1,
        "exit_status": status,
        "seconds": 1.25,
        "files": list(entries),
    }
    path = folder / name
    path.write_text(json.dumps(body))
    return path


def test_reports_merge_in_order_with_their_shared_fields(tmp_path):
    first = report(tmp_path, "b.json", entry("/s/b.blend", output="/o/b.blend"))
    second = report(
        tmp_path, "a.json", entry("/s/a.blend", output="/o/a.blend"), entry("/s/c.blend", output="/o/c.blend")
    )
    merged = merge.merge([first, second])
    assert [e["path"] for e in merged["files"]] == ["/s/b.blend", "/s/a.blend", "/s/c.blend"]
    assert merged["files"][0] == entry("/s/b.blend", output="/o/b.blend")
    assert {k: merged[k] for k in merge.SHARED} == {
        "command": "bake",
        "blender": "5.0.1",
        "limb_ik": "0.1.0",
        "dry_run": False,
        "frames": [1, 6],
    }
    assert (merged["exit_status"], merged["jobs"], merged["seconds"]) == (0, 2, 2.5)
    assert merged["reports"] == [
        {"path": str(first), "exit_status": 0, "files": 1, "error": None},
        {"path": str(second), "exit_status": 0, "files": 2, "error": None},
    ]


def test_a_failed_file_fails_the_merge_and_keeps_its_sentence(tmp_path):
    paths = [
        report(tmp_path, "ok.json", entry("/s/a.blend", output="/o/a.blend")),
        report(tmp_path, "bad.json", entry("/s/b.blend", error="Limb 'leg.L': bone 'shin.L' does not exist.")),
    ]
    merged = merge.merge(paths)
    assert merged["exit_status"] == 1
    assert merged["files"][1]["error"] == "Limb 'leg.L': bone 'shin.L' does not exist."
    assert [r["exit_status"] for r in merged["reports"]] == [0, 1]


def test_missing_unreadable_and_incomplete_reports_are_named(tmp_path):
    good = report(tmp_path, "good.json", entry("/s/a.blend", output="/o/a.blend"))
    torn = tmp_path / "torn.json"
    torn.write_text('{"files": [')
    stopped = report(tmp_path, "stopped.json", entry("/s/b.blend", output="/o/b.blend"), status=None)
    other = tmp_path / "other.json"
    other.write_text("[1, 2]")
    merged = merge.merge([good, tmp_path / "missing.json", torn, stopped, other])
    errors = [r["error"] for r in merged["reports"]]
    assert errors[0] is None
    assert (
        errors[1] == f"The report '{tmp_path / 'missing.json'}' is missing: its task did not run or did not write it."
    )
    assert errors[2].startswith(f"The report '{torn}' could not be read: ")
    assert errors[3] == f"The report '{stopped}' is incomplete: its process stopped before the end."
    assert errors[4] == f"The report '{other}' is not a Limb IK report (it has no list of files)."
    assert [e["path"] for e in merged["files"]] == ["/s/a.blend", "/s/b.blend"], "what a stopped task did is kept"
    assert merged["exit_status"] == 1


def test_two_tasks_writing_one_output_fail_both_files(tmp_path):
    paths = [
        report(tmp_path, "1.json", entry("/a/sh010.blend", output="/o/sh010.blend")),
        report(tmp_path, "2.json", entry("/b/sh010.blend", output="/o/./sh010.blend")),
        report(tmp_path, "3.json", entry("/c/sh020.blend", output="/o/sh020.blend")),
    ]
    merged = merge.merge(paths)
    errors = [e["error"] for e in merged["files"]]
    assert errors == [
        "Its output '/o/sh010.blend' was also written for '/b/sh010.blend'; only the last one written is there.",
        "Its output '/o/sh010.blend' was also written for '/a/sh010.blend'; only the last one written is there.",
        None,
    ]
    assert merged["exit_status"] == 1


def test_reports_of_different_commands_do_not_make_a_whole(tmp_path):
    paths = [
        report(tmp_path, "1.json", entry("/s/a.blend")),
        report(tmp_path, "2.json", entry("/s/b.blend"), command="check"),
    ]
    merged = merge.merge(paths)
    assert merged["command"] is None and merged["blender"] == "5.0.1"
    assert merged["reports"][0]["error"] == "The reports are of different commands: bake, check"
    assert merged["exit_status"] == 1


def test_no_report_at_all_is_a_failure(tmp_path):
    assert merge.merge([])["exit_status"] == 1


def test_command_line_takes_folders_files_and_lists(tmp_path, capsys):
    folder = tmp_path / "reports"
    folder.mkdir()
    report(folder, "b.json", entry("/s/b.blend", output="/o/b.blend"))
    report(folder, "a.json", entry("/s/a.blend", error="'a.blend' has no armature."))
    (folder / "notes.txt").write_text("not a report")
    single = report(tmp_path, "c.json", entry("/s/c.blend", output="/o/c.blend"))
    listing = tmp_path / "list.txt"
    listing.write_text(f"{single}\n")
    out = tmp_path / "merged" / "report.json"
    assert merge.main([str(folder), f"@{listing}", "--json", str(out)], "merge") == 1
    merged = json.loads(out.read_text())
    assert [e["path"] for e in merged["files"]] == ["/s/a.blend", "/s/b.blend", "/s/c.blend"]
    assert capsys.readouterr().out.splitlines() == [
        "FAILED  a.blend: 'a.blend' has no armature.",
        "2 of 3 files done, 1 failed (3 reports merged).",
    ]
    assert merge.main([str(single), "--json", str(out)], "merge") == 0
    assert json.loads(out.read_text())["exit_status"] == 0


@pytest.mark.parametrize("argv", [[], ["a.json"], ["--json", "out.json"]])
def test_usage_errors_exit_2(argv, capsys):
    assert merge.main(argv, "blender --command limb_ik merge") == 2
    assert "usage: blender --command limb_ik merge" in capsys.readouterr().err
