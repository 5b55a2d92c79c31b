# SPDX-License-Identifier: GPL-3.0-or-later
"""The batch command line on twenty small files (good rigs of every kind, a file without an armature,
a truncated file, a broken limb set-up), run through the ``bpy`` launcher as a user runs it, and
in this process through the same ``cli.main`` for the cheaper cases."""

import hashlib
import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import batch_files
import bpy
import numpy as np
import pytest
import rigs
import source_extension
from batch_files import CASES, FRAMES

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "tools" / "limb_ik_cli.py"
ZSTD = b"\x28\xb5\x2f\xfd"


# Running the command and reading its results


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def launch(*args) -> subprocess.CompletedProcess:
    """The launcher in a new Python, as ``python3.13 tools/limb_ik_cli.py ...``."""
    return subprocess.run([sys.executable, str(LAUNCHER), *map(str, args)], capture_output=True, text=True)


def by_name(report: dict) -> dict[str, dict]:
    return {Path(entry["path"]).stem: entry for entry in report["files"]}


def open_file(path: Path) -> None:
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)


def armature_state(extension, path: Path) -> dict[str, dict]:
    """Each armature's limbs, keys and evaluated pose at every frame of the range, as saved in ``path``."""
    open_file(path)
    window, state = bpy.context.window, {}
    for obj in [o for o in bpy.data.objects if o.type == "ARMATURE"]:
        window.scene = obj.users_scene[0]
        curves = extension.rig.keys.actions.fcurves(obj) or []
        keys = {(c.data_path, c.array_index): extension.rig.keys.actions.read_keys(c)["co"] for c in curves}
        poses = []
        for frame in range(FRAMES[0], FRAMES[1] + 1):
            window.scene.frame_set(frame)
            poses.append(rigs.pose_snapshot(obj))
        state[obj.name] = {"limbs": rigs.limbs_table(obj), "keys": keys, "poses": np.array(poses)}
    return state


def assert_same_state(first: dict, second: dict, tolerance: float, where: str) -> None:
    assert first.keys() == second.keys(), where
    for name, one in first.items():
        other = second[name]
        assert one["limbs"] == other["limbs"], f"{where}: {name}"
        assert one["keys"].keys() == other["keys"].keys(), f"{where}: {name}"
        for channel, keys in one["keys"].items():
            np.testing.assert_allclose(keys, other["keys"][channel], atol=tolerance, err_msg=f"{where}: {channel}")
        np.testing.assert_allclose(one["poses"], other["poses"], atol=tolerance, err_msg=f"{where}: {name}")


def good(subcommand: str) -> list[str]:
    return [name for name, case in CASES.items() if not getattr(case, f"{subcommand}_error")]


# Fixtures: the files, made once, and the parallel bake of all of them


@pytest.fixture(scope="module")
def extension():
    return importlib.import_module(source_extension.MODULE)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, extension) -> tuple[Path, dict[str, str]]:
    """The twenty files in a folder of their own, and their checksums."""
    folder = tmp_path_factory.mktemp("inputs")
    batch_files.write(folder, extension.api, tmp_path_factory.mktemp("scratch"))
    return folder, {path.name: sha256(path) for path in folder.iterdir()}


@pytest.fixture(scope="module")
def baked(inputs, tmp_path_factory) -> tuple[Path, dict, subprocess.CompletedProcess]:
    """``bake`` over all twenty files, two processes at a time, through the launcher."""
    folder, _ = inputs
    output = tmp_path_factory.mktemp("baked")
    report = output.parent / "baked.json"
    done = launch("bake", folder / "*.blend", "--output-dir", output, "--jobs", 2, "--json", report)
    return output, json.loads(report.read_text()), done


# The parallel batch


def test_parallel_bake_does_the_good_files_and_names_the_bad(inputs, baked):
    folder, checksums = inputs
    output, report, done = baked
    assert done.returncode == 1, done.stderr[-3000:]
    assert report["command"] == "bake" and report["jobs"] == 2 and report["exit_status"] == 1
    files = by_name(report)
    assert files.keys() == CASES.keys()
    for name, case in CASES.items():
        entry = files[name]
        assert entry["path"] == str(folder / f"{name}.blend")
        if case.bake_error:
            assert entry["status"] == "failed", name
            assert re.fullmatch(case.bake_error.format(name=name), entry["error"]), entry["error"]
            assert entry["output"] is None and not entry["written"]
            assert f"FAILED  {name}.blend: " in done.stdout
        else:
            assert entry["status"] == "ok" and entry["error"] is None, entry["error"]
            assert entry["output"] == str(output / f"{name}.blend") and entry["written"] and entry["changed"]
            assert entry["seconds"] > 0
            for part in entry["armatures"]:
                assert part["baked"] == part["limbs"] and part["keys"] > 0 and part["frames"] == list(FRAMES)
                assert part["problems"] == {}
                assert part["path"] in ("bulk", "stepped") and part["why"] in done.stdout  # how it was read, and why
    assert files["leg_second_scene"]["armatures"][0]["scene"] == "Second"
    assert sorted(p.name for p in output.iterdir()) == sorted(f"{name}.blend" for name in good("bake"))
    assert {path.name: sha256(path) for path in folder.iterdir()} == checksums, "an input changed"


def test_outputs_keep_compression_and_relative_paths(inputs, baked, extension):
    folder, _ = inputs
    output, _, _ = baked
    assert (output / "leg_compressed.blend").read_bytes()[:4] == ZSTD
    assert (output / "leg.blend").read_bytes()[:7] == b"BLENDER"
    open_file(output / "leg.blend")
    found = Path(bpy.path.abspath(bpy.data.images["Skin"].filepath)).resolve()
    assert found == folder / "textures" / "skin.png"
    rig = bpy.data.objects["Leg"]
    assert not rig.limb_ik.live
    assert {c.data_path for c in extension.rig.keys.actions.fcurves(rig)} == {
        f'pose.bones["{bone}"].rotation_quaternion' for bone in ("thigh.L", "shin.L", "foot.L")
    }


def test_a_rig_in_a_second_scene_is_baked_from_its_own_scene(baked, extension):
    """The file opens on its first scene; the same rig in the second is baked from the second's
    animation as it is in the first, without making the second scene current."""
    output, _, _ = baked
    first = armature_state(extension, output / "leg.blend")["Leg"]
    second = armature_state(extension, output / "leg_second_scene.blend")["Elsewhere"]
    assert first["keys"].keys() == second["keys"].keys() and first["keys"]
    for channel, keys in first["keys"].items():
        np.testing.assert_allclose(second["keys"][channel], keys, atol=1e-6, err_msg=str(channel))


def test_baking_the_baked_files_again_changes_nothing(baked, extension, tmp_path):
    first, _, _ = baked
    second = tmp_path / "again"
    files = [first / f"{name}.blend" for name in good("bake")]
    code = extension.cli.main(["bake", *map(str, files), "--output-dir", str(second), "--json", str(tmp_path / "r")])
    assert code == 0
    for name in good("bake"):
        before = armature_state(extension, first / f"{name}.blend")
        after = armature_state(extension, second / f"{name}.blend")
        assert_same_state(before, after, 2e-4, name)


def test_detect_batch_then_again_is_idempotent(inputs, extension, tmp_path):
    folder, checksums = inputs
    first, second = tmp_path / "first", tmp_path / "second"
    done = launch("detect", folder / "*.blend", "--output-dir", first, "--json", tmp_path / "first.json")
    assert done.returncode == 1, done.stderr[-3000:]
    files = by_name(json.loads((tmp_path / "first.json").read_text()))
    for name, case in CASES.items():
        if case.detect_error:
            assert re.fullmatch(case.detect_error, files[name]["error"]), files[name]["error"]
        else:
            assert files[name]["status"] == "ok" and files[name]["written"], files[name]["error"]
    assert files["human_no_limbs"]["armatures"][0]["detected"] == dict.fromkeys(
        ["leg.L", "leg.R", "arm.L", "arm.R"], "name"
    )
    assert files["bvh_no_limbs"]["armatures"][0]["detected"] == {"leg.L": "name", "leg.R": "name"}
    assert files["human_detected"]["armatures"][0]["detected"] == {}
    assert {path.name: sha256(path) for path in folder.iterdir()} == checksums

    report = tmp_path / "second.json"
    code = extension.cli.main(["detect", str(first / "*.blend"), "--output-dir", str(second), "--json", str(report)])
    assert code == 0
    entries = json.loads(report.read_text())["files"]
    assert len(entries) == len(good("detect"))
    assert all(part["detected"] == {} for entry in entries for part in entry["armatures"])
    for name in good("detect"):
        before = armature_state(extension, first / f"{name}.blend")
        after = armature_state(extension, second / f"{name}.blend")
        assert_same_state(before, after, 0.0, name)


# Options and error paths, in this process (same cli.main as the launcher)


def test_dry_run_writes_nothing(inputs, extension, tmp_path):
    folder, checksums = inputs
    output, report = tmp_path / "never", tmp_path / "report.json"
    code = extension.cli.main(
        ["bake", str(folder / "*.blend"), "--output-dir", str(output), "--dry-run", "--json", str(report)]
    )
    assert code == 1
    assert not output.exists()
    result = json.loads(report.read_text())
    assert result["dry_run"]
    for name, entry in by_name(result).items():
        assert not entry["written"]
        if not CASES[name].bake_error:
            assert entry["status"] == "ok" and entry["changed"] and entry["output"] == str(output / f"{name}.blend")
            assert entry["armatures"][0]["keys"] > 0
    code = extension.cli.main(["detect", str(folder / "human_no_limbs.blend"), "--in-place", "--dry-run"])
    assert code == 0
    assert {path.name: sha256(path) for path in folder.iterdir()} == checksums


def test_in_place_rewrites_only_changed_files(inputs, extension, tmp_path):
    folder, _ = inputs
    for name in ("human_no_limbs", "human_detected"):
        shutil.copy(folder / f"{name}.blend", tmp_path)
    before = {path.name: sha256(path) for path in tmp_path.iterdir()}
    report = tmp_path.parent / f"{tmp_path.name}.json"
    assert extension.cli.main(["detect", str(tmp_path / "*.blend"), "--in-place", "--json", str(report)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["human_detected.blend", "human_no_limbs.blend"]
    assert sha256(tmp_path / "human_no_limbs.blend") != before["human_no_limbs.blend"]
    assert sha256(tmp_path / "human_detected.blend") == before["human_detected.blend"]
    files = by_name(json.loads(report.read_text()))
    assert files["human_no_limbs"]["written"] and not files["human_detected"]["written"]
    open_file(tmp_path / "human_no_limbs.blend")
    assert [limb.name for limb in bpy.data.objects["metarig"].limb_ik.limbs] == ["leg.L", "leg.R", "arm.L", "arm.R"]


def test_check_names_each_problem(inputs, extension, tmp_path):
    folder, _ = inputs
    report = tmp_path / "check.json"
    assert extension.cli.main(["check", str(folder / "*.blend"), "--json", str(report)]) == 1
    files = by_name(json.loads(report.read_text()))
    for name, case in CASES.items():  # check fails exactly the files bake fails
        entry = files[name]
        assert (entry["status"] == "failed") == bool(case.bake_error), name
        assert entry["output"] is None and not entry["written"]
    broken_rig = files["broken_limb"]["armatures"][0]
    assert broken_rig["problems"] == {"leg.L": "Limb 'leg.L': bone 'shin.L' does not exist in armature 'Broken'."}


def test_frames_option_limits_the_bake(inputs, extension, tmp_path):
    folder, _ = inputs
    code = extension.cli.main(
        [
            "bake",
            str(folder / "leg.blend"),
            "--frames",
            "2:4",
            "--output-dir",
            str(tmp_path),
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 0
    assert json.loads((tmp_path / "r.json").read_text())["files"][0]["armatures"][0]["frames"] == [2, 4]
    open_file(tmp_path / "leg.blend")
    curves = extension.rig.keys.actions.fcurves(bpy.data.objects["Leg"])
    assert {tuple(extension.rig.keys.actions.read_keys(c)["co"][:, 0]) for c in curves} == {(2.0, 3.0, 4.0)}


def test_unusable_inputs_fail_alone(inputs, extension, tmp_path):
    folder, _ = inputs
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(folder / "leg.blend", other)
    output = tmp_path / "out"
    output.mkdir()
    shutil.copy(folder / "leg_rolls.blend", output)
    report = tmp_path / "r.json"
    argv = [
        "detect",
        str(folder / "leg.blend"),
        str(other / "leg.blend"),
        str(output / "leg_rolls.blend"),
        str(tmp_path / "missing.blend"),
        str(tmp_path / "nothing_*.blend"),
        str(folder / "leg.blend"),
        "--output-dir",
        str(output),
        "--json",
        str(report),
    ]
    assert extension.cli.main(argv) == 1
    entries = json.loads(report.read_text())["files"]
    errors = [entry["error"] for entry in entries]
    assert len(entries) == 5, "a file named twice is done once"
    assert errors == [
        None,
        f"Its output '{output / 'leg.blend'}' would overwrite the output of '{folder / 'leg.blend'}'.",
        "'leg_rolls.blend' is already in the output folder; writing it there would overwrite the input "
        "(pass --in-place to do that).",
        f"'{tmp_path / 'missing.blend'}' does not exist.",
        f"No file matches '{tmp_path / 'nothing_*.blend'}'.",
    ]
    assert sorted(p.name for p in output.iterdir()) == ["leg.blend", "leg_rolls.blend"]


def test_a_report_that_cannot_be_written_fails_the_run_after_the_files(inputs, extension, tmp_path, capsys):
    folder, _ = inputs
    (tmp_path / "taken").write_text("a file, not a folder")
    report = tmp_path / "taken" / "r.json"
    argv = [
        "detect",
        str(folder / "leg.blend"),
        str(folder / "leg_rolls.blend"),
        "--output-dir",
        str(tmp_path / "out"),
        "--json",
        str(report),
    ]
    assert extension.cli.main(argv) == 1
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["leg.blend", "leg_rolls.blend"]
    assert f"The report could not be written to '{report}'" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["a folder in its place", "in place, its folder gone", "in place, immutable"])
def test_a_file_that_cannot_be_saved_fails_alone_naming_the_path_and_the_reason(
    inputs, extension, tmp_path, how, capsys
):
    """Saving used to fail the file as "failed unexpectedly", with a traceback. The tests run as root, whom no
    permission stops, so the first two ways fail for anyone: a folder where the output goes (renaming the saved
    file onto it is refused), and the folder of a file done in place moved away once the file is open (by a
    load handler, as a share that goes away mid-batch). The third, the reported case, needs ``chattr +i``."""
    folder, _ = inputs
    bad, good = tmp_path / "in" / "human_no_limbs.blend", tmp_path / "good" / "human_no_limbs_scaled.blend"
    for path in (bad, good):
        path.parent.mkdir()
        shutil.copy(folder / path.name, path)
    before = sha256(bad)
    report = tmp_path / "r.json"
    argv = ["detect", str(bad), str(good), "--json", str(report)]

    @bpy.app.handlers.persistent
    def move_away(_filepath, _=None):
        if Path(bpy.data.filepath) == bad:
            bad.parent.rename(tmp_path / "moved")

    if how == "a folder in its place":
        output = tmp_path / "out"
        (output / bad.name).mkdir(parents=True)
        argv += ["--output-dir", str(output)]
        reason, written = "Is a directory", output / bad.name
    else:
        argv.append("--in-place")
        written = bad
        if how == "in place, its folder gone":
            bpy.app.handlers.load_post.append(move_away)
            reason = "No such file or directory"
        else:
            if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(bad)]).returncode:
                pytest.skip("chattr cannot make a file immutable here")
            reason = "Operation not permitted"
    try:
        assert extension.cli.main(argv) == 1
    finally:
        if move_away in bpy.app.handlers.load_post:
            bpy.app.handlers.load_post.remove(move_away)
        if how == "in place, immutable":
            subprocess.run(["chattr", "-i", str(bad)], check=True)
    error = f"'{written}' could not be written: {reason}."
    entries = json.loads(report.read_text())["files"]
    assert [(e["status"], e["error"], e["written"]) for e in entries] == [("failed", error, False), ("ok", None, True)]
    printed = capsys.readouterr()
    assert f"FAILED  {bad.name}: {error}" in printed.out and "Traceback" not in printed.err
    moved = tmp_path / "moved" / bad.name if how == "in place, its folder gone" else bad
    assert sha256(moved) == before
    assert not [p for p in tmp_path.rglob("*") if "limb_ik-tmp" in p.name], "a temporary file was left"


def test_a_child_that_dies_fails_only_its_file(inputs, extension, tmp_path):
    folder, _ = inputs
    worker = [sys.executable, "-c", "import sys; print('segmentation fault', file=sys.stderr); sys.exit(139)"]
    report = tmp_path / "r.json"
    argv = ["check", str(folder / "leg.blend"), str(folder / "leg_rolls.blend"), "--jobs", "2", "--json", str(report)]
    assert extension.cli.main(argv, worker=worker) == 1
    entries = json.loads(report.read_text())["files"]
    assert [entry["error"] for entry in entries] == [
        f"Blender stopped on '{name}' (exit status 139): segmentation fault"
        for name in ("leg.blend", "leg_rolls.blend")
    ]


def test_children_take_file_names_literally(inputs, tmp_path):
    """A file named like a pattern is that file, in this process and in the children."""
    folder, _ = inputs
    names = ["take[2].blend", "take*.blend"]
    for name in names:
        shutil.copy(folder / "leg.blend", tmp_path / name)
    report = tmp_path / "r.json"
    done = launch(
        "detect", *(tmp_path / name for name in names), "--output-dir", tmp_path / "out", "--jobs", 2, "--json", report
    )
    assert done.returncode == 0, done.stdout + done.stderr
    entries = json.loads(report.read_text())["files"]
    assert [(Path(entry["path"]).name, entry["error"]) for entry in entries] == [(name, None) for name in names]
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == sorted(names)


# Reports its first file done, then dies as a crashing Blender would.
CRASH_AFTER_ONE = """
import json, sys
files = sys.argv[2 : sys.argv.index("--json")]
entry = {"path": files[0], "status": "ok", "error": None, "output": None, "written": False, "changed": False,
         "armatures": [], "seconds": 0.1}
with open(sys.argv[sys.argv.index("--json") + 1], "w") as report:
    json.dump({"files": [entry]}, report)
print("segmentation fault", file=sys.stderr)
sys.exit(139)
"""


def test_a_child_that_dies_midway_fails_only_the_file_it_was_on(inputs, extension, tmp_path):
    """Each of the two children gets every other file; a new child takes over after each crash."""
    folder, _ = inputs
    names = ["leg.blend", "leg_rolls.blend", "leg_euler.blend", "leg_second_scene.blend", "leg_right.blend"]
    report = tmp_path / "r.json"
    argv = ["check", *(str(folder / name) for name in names), "--jobs", "2", "--json", str(report)]
    assert extension.cli.main(argv, worker=[sys.executable, "-c", CRASH_AFTER_ONE]) == 1
    errors = {Path(entry["path"]).name: entry["error"] for entry in json.loads(report.read_text())["files"]}
    shares = [names[0::2], names[1::2]]
    crashed = {name for share in shares for name in share[1::2]}  # each child does one file, dies on the next
    assert crashed == {names[2], names[3]}
    for name in names:
        expected = f"Blender stopped on '{name}' (exit status 139): segmentation fault" if name in crashed else None
        assert errors[name] == expected


USAGE_ERRORS = [
    [],
    ["plant-everything", "a.blend"],
    ["bake", "a.blend"],  # neither --output-dir nor --in-place
    ["bake", "a.blend", "--output-dir", "out", "--in-place"],
    ["bake", "a.blend", "--in-place", "--frames", "5:1"],
    ["bake", "a.blend", "--in-place", "--frames", "1-5"],
    ["detect", "a.blend", "--in-place", "--jobs", "0"],
    ["detect", "a.blend", "--in-place", "--frames", "1:5"],  # detect has no frame range
    ["check", "a.blend", "--output-dir", "out"],  # check writes nothing
    ["plant", "a.blend", "--in-place", "--force-down", "leg.L"],  # no frames
    ["plant", "a.blend", "--in-place", "--force-up", "leg.L:20-10"],
    ["bake", "a.blend", "--in-place", "--force-down", "leg.L:1-5"],  # only plant forces contacts
    ["check"],
]


@pytest.mark.parametrize("argv", USAGE_ERRORS, ids=[" ".join(a) or "nothing" for a in USAGE_ERRORS])
def test_usage_errors_exit_2(extension, argv, capsys):
    assert extension.cli.main(argv) == 2
    assert "usage:" in capsys.readouterr().err


def test_launcher_exit_status_of_a_usage_error():
    done = launch("bake", "a.blend")
    assert done.returncode == 2
    assert "pass --output-dir DIR, or --in-place" in done.stderr


def test_blender_entry_point_and_child_command(extension, capsys):
    assert extension.cli.execute(["check", "--help"]) == 0
    assert "usage: blender --command limb_ik check" in capsys.readouterr().out
    assert extension.cli.blender_worker() is None, "the bpy wheel has no Blender executable"
    package = extension.__name__
    assert extension.cli.blender_worker("/opt/blender/blender", False) == [
        "/opt/blender/blender",
        "--background",
        "--addons",
        package,
        "--command",
        "limb_ik",
    ]
    assert extension.cli.blender_worker("blender", True)[:3] == ["blender", "--background", "--factory-startup"]


@pytest.mark.parametrize("where", ["a file", "inside a file"])
def test_an_unusable_output_folder_is_a_usage_error_before_any_file(inputs, extension, tmp_path, where, capsys):
    folder, checksums = inputs
    (tmp_path / "taken").write_text("a file, not a folder")
    output = tmp_path / "taken" if where == "a file" else tmp_path / "taken" / "out"
    report = tmp_path / "r.json"
    argv = ["bake", str(folder / "*.blend"), "--output-dir", str(output), "--json", str(report)]
    assert extension.cli.main(argv) == 2
    error = capsys.readouterr().err.splitlines()
    assert error[0].startswith("usage: blender --command limb_ik bake ")
    if where == "a file":
        assert error[-1] == f"blender --command limb_ik bake: error: --output-dir '{output}' is a file, not a folder"
    else:
        assert error[-1] == (
            f"blender --command limb_ik bake: error: --output-dir '{output}' cannot be created: "
            f"'{tmp_path / 'taken'}' is a file, not a folder"
        )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["taken"], "the report was written"
    assert {path.name: sha256(path) for path in folder.iterdir()} == checksums


def normalised(stdout: str, output: Path) -> list[str]:
    """The lines of a batch's output with what varies from run to run (order, times, folder) taken out."""
    lines = [re.sub(r"^\[ ?\d+/\d+\] ", "", line) for line in stdout.splitlines()]
    lines = [re.sub(r"\d+\.\d s\b", "_ s", line.replace(str(output), "OUT")) for line in lines]
    return sorted(lines)


def test_one_process_prints_what_many_do_and_none_of_blenders_log(inputs, baked, tmp_path):
    folder, _ = inputs
    parallel_output, _, parallel = baked
    output = tmp_path / "out"
    done = launch("bake", folder / "*.blend", "--output-dir", output, "--jobs", 1)
    assert done.returncode == 1, done.stderr[-3000:]
    assert normalised(done.stdout, output) == normalised(parallel.stdout, parallel_output)
    assert len(done.stdout.splitlines()) == len(CASES) + 1
    for text in (done.stdout, done.stderr, parallel.stdout, parallel.stderr):
        assert not re.search("Read blend|Saved copy|limb_ik-tmp|Info:", text), text


def test_a_clean_check_says_so_with_the_foot_figures(extension, tmp_path, capsys):
    rig = rigs.leg_armature()
    bpy.ops.object.mode_set(mode="OBJECT")
    extension.api.add_limb(rig, ["thigh.L", "shin.L", "foot.L"])
    rig.limb_ik.ground = rigs.plane_ground()  # 2 cm below the sole
    rig.limb_ik.limbs["leg.L"].plant = True
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES
    path, report = tmp_path / "planted.blend", tmp_path / "r.json"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    capsys.readouterr()
    assert extension.cli.main(["check", str(path), "--json", str(report)]) == 0
    lines = capsys.readouterr().out.splitlines()
    feet = json.loads(report.read_text())["files"][0]["armatures"][0]["feet"]
    foot = feet["feet"][0]  # a standing leg: in contact from the second frame, nothing off
    assert foot["contact_frames"] == 5 and foot["ball_height_p95"] == 0.0 and foot["frames_without_ground"] == 0
    assert re.fullmatch(r"\[1/1\] ok      planted\.blend \[\d+\.\d s\] Leg: no problems", lines[0]), lines[0]
    assert lines[1:] == [
        "              Leg: leg.L: 5 contact frames, ball height off by 0.0 mm (p95 0.0), deepest 0.0 mm, "
        "pitch off by 0.0° (p95), knee pop 0.0°, slide 0.0 mm",
        "              Leg: pelvis drop 0.0 mm, lift 0.0 mm (against the animation)",
        lines[-1],
    ]
    assert lines[-1].startswith("1 of 1 files done, 0 failed (")


def test_usage_lines_name_the_command_typed(extension, capsys):
    assert extension.cli.main(["bake", "a.blend"], prog="my-batch") == 2
    assert capsys.readouterr().err.startswith("usage: my-batch bake ")
    done = launch("bake", "a.blend")
    assert done.returncode == 2
    # argparse breaks the usage line after the command where the path is long (a clone in a temporary folder)
    assert re.match(rf"usage: {re.escape(f'{Path(sys.executable).name} {LAUNCHER}')} bake\s", done.stderr), done.stderr
    run = importlib.import_module("run")  # tools/run.py
    version = "{}.{}".format(*bpy.app.version[:2])
    if Path(sys.executable) != run.cache_dir() / f"venv-blender-{version}" / "bin" / "python":
        pytest.skip("tools/run.py would set up a virtual environment of its own (this is not one of its)")
    done = subprocess.run(
        [sys.executable, ROOT / "tools" / "run.py", "cli", "bake", "a.blend"], capture_output=True, text=True
    )
    assert done.returncode == 2
    typed = f"{Path(sys.executable).name} {ROOT / 'tools' / 'run.py'} cli"
    assert re.match(rf"usage: {re.escape(typed)} bake\s", done.stderr), done.stderr


def test_a_body_planted_far_from_its_floor_fails_the_file_with_the_distance(extension, tmp_path):
    rig = rigs.human_metarig()
    extension.api.detect_limbs(rig)
    ground = rigs.plane_ground(size=10.0)
    ground.objects[0].location.z = 2.0
    path, report = tmp_path / "high.blend", tmp_path / "r.json"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    argv = ["plant", str(path), "--ground", "Ground", "--frames", "1:5", "--output-dir", str(tmp_path / "out")]
    assert extension.cli.main([*argv, "--json", str(report)]) == 1
    entry = json.loads(report.read_text())["files"][0]
    part = entry["armatures"][0]
    assert entry["status"] == "failed" and not entry["written"]
    assert part["lift"] == pytest.approx(2.0, abs=1e-4) and set(part["problems"]) == {"leg.L", "leg.R"}
    assert "2.00 m up" in entry["error"] and "2.00 m up" in part["problems"]["leg.L"]


def test_plant_takes_the_authored_ground_and_fails_a_take_standing_under_it(extension, tmp_path):
    """``--authored-ground``: the metarig standing 0.5 m under the collection given as what it was made on stands on
    nothing there: the file fails with the leg named, unwritten; without the option it plants."""
    rig = rigs.human_metarig()
    extension.api.detect_limbs(rig)
    rigs.plane_ground(size=10.0)
    stage = rigs.plane_ground(size=10.0)
    stage.name = "Stage"
    stage.objects[0].location.z = 0.5
    path, report = tmp_path / "staged.blend", tmp_path / "r.json"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    argv = ["plant", str(path), "--ground", "Ground", "--frames", "1:5", "--output-dir", str(tmp_path / "out")]
    assert extension.cli.main([*argv, "--authored-ground", "Stage", "--json", str(report)]) == 1
    entry = json.loads(report.read_text())["files"][0]
    assert entry["status"] == "failed" and not entry["written"]
    assert "stands far under the authored ground 'Stage'" in entry["error"], entry["error"]
    assert extension.cli.main(argv) == 0
