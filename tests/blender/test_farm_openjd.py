# SPDX-License-Identifier: GPL-3.0-or-later
"""The Open Job Description template (``farm/limb_ik.openjd.yaml``) checked and run by the real
``openjd`` command line, with the ``bpy`` launcher standing in for the workers' Blender: one task per
file, a report each, and the merged report; a file that fails is a failed task."""

import importlib
import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import batch_files
import bpy
import pytest
import source_extension

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "farm" / "limb_ik.openjd.yaml"
OPENJD = Path(sys.executable).with_name("openjd")
GOOD = ("leg", "leg_rolls", "leg_right")


def openjd(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(OPENJD), *map(str, args)], capture_output=True, text=True, timeout=300)


def run_job(blender: Path, files: list[Path], output: Path, *parameters: str) -> subprocess.CompletedProcess:
    """The whole job, as a farm runs it: every file's task, then the merge."""
    values = [
        "-p",
        f"Files={json.dumps([str(f) for f in files])}",
        "-p",
        f"OutputDir={output}",
        "-p",
        f"Blender={blender}",
    ]
    for parameter in parameters:
        values += ["-p", parameter]
    return openjd("run", TEMPLATE, "--step", "MergeReports", "--run-dependencies", *values)


def report_name(path: Path) -> str:
    """The name the template gives a file's report: its whole path, made one file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(path))[-150:] + ".json"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    api = importlib.import_module(source_extension.MODULE).api  # enabled by conftest
    folder = tmp_path_factory.mktemp("farm_inputs")
    return batch_files.write(folder, api, tmp_path_factory.mktemp("scratch"), (*GOOD, "broken_limb"))


@pytest.fixture(scope="module")
def blender(tmp_path_factory) -> Path:
    """An executable named like Blender that runs the launcher on the wheel (it takes Blender's
    ``--background --command limb_ik ...`` form)."""
    path = tmp_path_factory.mktemp("bin") / "blender"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "tools" / "limb_ik_cli.py"}" "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_template_passes_openjd_check():
    done = openjd("check", TEMPLATE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passes validation checks" in done.stdout


def test_three_files_run_as_three_tasks_and_merge(inputs, blender, tmp_path):
    output = tmp_path / "baked"
    done = run_job(
        blender,
        [inputs[name] for name in GOOD],
        output,
        "Command=bake",
        "Frames=2:4",
        "Addons=bl_ext.limb_ik_dev.limb_ik",
    )  # before --command, where the launcher skips it
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert sorted(p.name for p in output.glob("*.blend")) == sorted(f"{name}.blend" for name in GOOD)
    reports = {path.name: json.loads(path.read_text()) for path in (output / "limb_ik_reports").iterdir()}
    assert reports.keys() == {report_name(inputs[name]) for name in GOOD}
    for name in GOOD:  # one task, one file, one report
        assert [entry["path"] for entry in reports[report_name(inputs[name])]["files"]] == [str(inputs[name])]
    merged = json.loads((output / "limb_ik_report.json").read_text())
    assert (merged["command"], merged["frames"], merged["exit_status"], merged["jobs"]) == ("bake", [2, 4], 0, 3)
    assert [r["error"] for r in merged["reports"]] == [None] * 3
    entries = {Path(entry["path"]).stem: entry for entry in merged["files"]}
    assert entries.keys() == set(GOOD)
    for name, entry in entries.items():
        assert entry["status"] == "ok" and entry["written"], entry["error"]
        assert entry["output"] == str(output / f"{name}.blend")
        assert [part["frames"] for part in entry["armatures"]] == [[2, 4]]
        assert all(part["keys"] > 0 for part in entry["armatures"])
    # The outputs are real bakes of frames 2 to 4 only.
    bpy.ops.wm.open_mainfile(filepath=str(output / "leg.blend"), load_ui=False)
    actions = importlib.import_module(source_extension.MODULE).rig.keys.actions
    curves = actions.fcurves(bpy.data.objects["Leg"])
    assert curves and {tuple(actions.read_keys(curve)["co"][:, 0]) for curve in curves} == {(2.0, 3.0, 4.0)}


def test_a_file_that_fails_is_a_failed_task_and_holds_back_the_merge(inputs, blender, tmp_path):
    output = tmp_path / "checked"
    pattern = inputs["leg"].parent / "leg*.blend"  # one task for the three legs
    done = run_job(blender, [pattern, inputs["broken_limb"]], output, "Command=check")
    assert done.returncode != 0
    log = done.stdout + done.stderr
    assert "FAILED  broken_limb.blend: Limb 'leg.L': bone 'shin.L' does not exist in armature 'Broken'." in log
    assert not (output / "limb_ik_report.json").exists(), "the merge ran although a task failed"
    assert not list(output.glob("*.blend")), "check writes no .blend file"
    reports = {p.name: json.loads(p.read_text()) for p in (output / "limb_ik_reports").iterdir()}
    assert reports.keys() == {report_name(pattern), report_name(inputs["broken_limb"])}
    legs = reports[report_name(pattern)]
    assert legs["exit_status"] == 0
    assert sorted(entry["path"] for entry in legs["files"]) == sorted(str(inputs[name]) for name in GOOD)
    broken = reports[report_name(inputs["broken_limb"])]
    assert broken["exit_status"] == 1 and broken["files"][0]["status"] == "failed"
