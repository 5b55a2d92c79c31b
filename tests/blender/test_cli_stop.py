# SPDX-License-Identifier: GPL-3.0-or-later
"""Stopping the batch command line: real launcher processes, real signals, real files.

Each batch is made slow enough (many files, or a long frame range) to be stopped in the middle,
and the signal is sent once the batch has printed the line that shows it is there.
"""

import importlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import batch_files
import bpy
import pytest
import source_extension

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "tools" / "limb_ik_cli.py"
LONG = (1, 90000)  #: a frame range that takes the test leg several seconds to bake, the scene stepped


class Batch:
    """The launcher running in a new process, its output read line by line as it comes."""

    def __init__(self, *args, folder: Path):
        self.stderr = folder / "stderr.txt"
        with open(self.stderr, "w") as errors:
            self.process = subprocess.Popen(
                [sys.executable, str(LAUNCHER), *map(str, args)], stdout=subprocess.PIPE, stderr=errors, text=True
            )
        self.lines: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, timeout: float = 120.0) -> re.Match:
        """The first line from here on that matches ``pattern``; fails if the batch ends first."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                self.process.kill()
                pytest.fail(f"no line matching {pattern!r} in {timeout} s; output so far:\n" + "\n".join(self.lines))
            if line is None:
                pytest.fail(f"the batch ended without a line matching {pattern!r}:\n" + "\n".join(self.lines))
            self.lines.append(line)
            found = re.search(pattern, line)
            if found:
                return found

    def finish(self, timeout: float = 120.0) -> int:
        """The exit status, once every line is read."""
        status = self.process.wait(timeout)
        while (line := self._queue.get(timeout=timeout)) is not None:
            self.lines.append(line)
        return status


@pytest.fixture(scope="module")
def leg_file(tmp_path_factory) -> Path:
    """The command-line tests' leg: a three-bone limb chasing an animated target. A constraint on its hips
    (with no target, it moves nothing) makes the bake step the scene frame by frame, which is what
    stopping between frames needs: read from its F-curves in bulk, the animation is read in one step."""
    path = tmp_path_factory.mktemp("leg") / "leg.blend"
    bpy.ops.wm.read_homefile(app_template="")
    batch_files.leg(importlib.import_module(source_extension.MODULE).api, path.parent)
    bpy.data.objects["Leg"].pose.bones["hips"].constraints.new("COPY_LOCATION")
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def copies(leg_file: Path, folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    paths = [folder / f"leg_{n:02}.blend" for n in range(count)]
    for path in paths:
        shutil.copy(leg_file, path)
    return paths


def assert_clean(output: Path, report: dict) -> None:
    """The output folder holds exactly the outputs the report says were written: no partial or
    temporary file."""
    written = sorted(Path(entry["output"]).name for entry in report["files"] if entry["written"])
    assert sorted(path.name for path in output.iterdir()) == written


def processes_naming(text: str) -> list[int]:
    """The processes whose command line mentions ``text``."""
    if not Path("/proc/self/cmdline").exists():
        pytest.skip("needs /proc to find the child processes")
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:  # ended meanwhile
            pass
    return found


def test_sigint_stops_the_batch_after_the_file_being_done(leg_file, tmp_path):
    inputs = copies(leg_file, tmp_path / "inputs", 40)
    output, report = tmp_path / "out", tmp_path / "report.json"
    batch = Batch(
        "bake",
        tmp_path / "inputs" / "*.blend",
        "--frames",
        "1:250",
        "--output-dir",
        output,
        "--json",
        report,
        folder=tmp_path,
    )
    batch.wait_for(r"\bok +leg_01\.blend")
    batch.process.send_signal(signal.SIGINT)
    assert batch.finish() == 130, batch.stderr.read_text()
    result = json.loads(report.read_text())
    assert (result["exit_status"], result["stopped"]) == (130, "SIGINT")
    statuses = [entry["status"] for entry in result["files"]]
    done = statuses.count("ok")
    assert [entry["path"] for entry in result["files"]] == [str(path) for path in inputs]
    assert 2 <= done < len(inputs) and statuses == ["ok"] * done + ["stopped"] * (len(inputs) - done)
    assert result["files"][-1]["error"] == "Not started: the batch was stopped by SIGINT."
    assert batch.lines[-1].startswith(f"Stopped by SIGINT: {done} of 40 files done, 0 failed, {40 - done} not done (")
    assert_clean(output, result)
    for entry in result["files"][:done]:  # whole files, baked
        bpy.ops.wm.open_mainfile(filepath=entry["output"], load_ui=False)
        assert bpy.data.objects["Leg"].animation_data.action is not None


def test_sigterm_stops_a_long_bake_between_frames_and_writes_nothing(leg_file, tmp_path):
    """Progress lines come every second or so; the file being baked is dropped, whole."""
    inputs = copies(leg_file, tmp_path / "inputs", 3)
    output, report = tmp_path / "out", tmp_path / "report.json"
    batch = Batch(
        "bake", *inputs, "--frames", "{}:{}".format(*LONG), "--output-dir", output, "--json", report, folder=tmp_path
    )
    progress = r"^        leg_00\.blend: Leg, (\d+)% of frames 1-90000$"
    first = int(batch.wait_for(progress).group(1))
    second = int(batch.wait_for(progress).group(1))
    assert 0 < first < second < 100
    batch.process.send_signal(signal.SIGTERM)
    assert batch.finish() == 143, batch.stderr.read_text()
    result = json.loads(report.read_text())
    assert (result["exit_status"], result["stopped"]) == (143, "SIGTERM")
    assert [(entry["status"], entry["error"], entry["written"]) for entry in result["files"]] == [
        ("stopped", "Stopped by SIGTERM before it was done; nothing was written for it.", False),
        ("stopped", "Not started: the batch was stopped by SIGTERM.", False),
        ("stopped", "Not started: the batch was stopped by SIGTERM.", False),
    ]
    assert batch.lines[-2].startswith("[1/3] stopped leg_00.blend: Stopped by SIGTERM before it was done")
    assert list(output.iterdir()) == []


def test_sigterm_to_the_parent_stops_its_children(leg_file, tmp_path):
    inputs = copies(leg_file, tmp_path / "inputs", 4)
    output, report = tmp_path / "out", tmp_path / "report.json"
    batch = Batch(
        "bake",
        *inputs,
        "--frames",
        "{}:{}".format(*LONG),
        "--output-dir",
        output,
        "--json",
        report,
        "--jobs",
        2,
        folder=tmp_path,
    )
    batch.wait_for(r"^        leg_0[01]\.blend: Leg, \d+% of frames 1-90000$")  # from a child
    batch.process.send_signal(signal.SIGTERM)  # to the parent alone, not its process group
    assert batch.finish() == 143, batch.stderr.read_text()
    assert processes_naming(str(output)) == [], "a child outlived its parent"
    result = json.loads(report.read_text())
    assert (result["exit_status"], result["stopped"], result["jobs"]) == (143, "SIGTERM", 2)
    assert [entry["status"] for entry in result["files"]] == ["stopped"] * 4
    in_flight = "Stopped by SIGTERM before it was done; nothing was written for it."
    errors = [entry["error"] for entry in result["files"]]
    assert in_flight in errors[:2]  # a child's first file, the one its progress came from
    assert set(errors) <= {in_flight, "Not started: the batch was stopped by SIGTERM."}
    assert list(output.iterdir()) == []


def test_children_stop_when_their_parent_is_killed(leg_file, tmp_path):
    """SIGKILL leaves the parent no say: its children see their pipe from it close, and each ends
    after the file it is on."""
    inputs = copies(leg_file, tmp_path / "inputs", 40)
    output = tmp_path / "out"
    batch = Batch(
        "bake",
        tmp_path / "inputs" / "*.blend",
        "--frames",
        "1:250",
        "--output-dir",
        output,
        "--jobs",
        2,
        folder=tmp_path,
    )
    batch.wait_for(r"\bok +leg_\d\d\.blend")
    batch.process.send_signal(signal.SIGKILL)
    assert batch.finish() == -signal.SIGKILL
    deadline = time.monotonic() + 30.0
    while processes_naming(str(output)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_naming(str(output)) == [], "the children go on without their parent"
    written = sorted(output.iterdir())
    assert 1 <= len(written) < len(inputs), "the children did every file after their parent was gone"
    for path in written:  # whole files, baked: no partial or temporary one
        assert path.name in {path.name for path in inputs}
        bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)
        assert bpy.data.objects["Leg"].animation_data.action is not None


def wait_for_bpy_import(pid: int, timeout: float = 60.0) -> None:
    """Until the process ``pid`` has begun importing ``bpy`` (its library is mapped): a second or so before
    the batch can start."""
    maps = Path(f"/proc/{pid}/maps")
    if not maps.exists():
        pytest.skip("needs /proc to see the launcher import bpy")
    deadline = time.monotonic() + timeout
    while "/bpy/__init__." not in maps.read_text():
        assert time.monotonic() < deadline, "the launcher never imported bpy"
        time.sleep(0.005)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_launcher_starts_stops_the_batch_before_its_first_file(leg_file, tmp_path, number):
    """Ctrl-C or SIGTERM while the launcher was still importing bpy used to print a raw KeyboardInterrupt
    traceback (or be swallowed by that import, and every file done) or kill the launcher (exit -15), with no
    report."""
    inputs = copies(leg_file, tmp_path / "inputs", 4)
    output, report = tmp_path / "out", tmp_path / "report.json"
    batch = Batch("bake", *inputs, "--output-dir", output, "--json", report, "--jobs", 2, folder=tmp_path)
    wait_for_bpy_import(batch.process.pid)
    batch.process.send_signal(number)
    name = signal.Signals(number).name
    assert batch.finish() == 128 + number, batch.stderr.read_text()
    assert "Traceback" not in batch.stderr.read_text()
    assert batch.lines[-1].startswith(f"Stopped by {name}: 0 of 4 files done, 0 failed, 4 not done (")
    result = json.loads(report.read_text())
    assert (result["exit_status"], result["stopped"]) == (128 + number, name)
    assert [(entry["status"], entry["error"]) for entry in result["files"]] == [
        ("stopped", f"Not started: the batch was stopped by {name}.")
    ] * 4
    assert list(output.iterdir()) == []


def test_ctrl_c_through_tools_run_stops_the_batch_cleanly(leg_file, tmp_path):
    """``tools/run.py cli`` waits for the launcher it starts. A terminal's Ctrl-C reaches both; the wrapper used to
    end with a KeyboardInterrupt traceback and kill the launcher a quarter of a second later, so no report."""
    run = importlib.import_module("run")  # tools/run.py
    version = "{}.{}".format(*bpy.app.version[:2])
    if Path(sys.executable) != run.cache_dir() / f"venv-blender-{version}" / "bin" / "python":
        pytest.skip("tools/run.py would set up a virtual environment of its own (this is not one of its)")
    inputs = copies(leg_file, tmp_path / "inputs", 4)
    output, report = tmp_path / "out", tmp_path / "report.json"
    arguments = ["--blender", version, "cli", "bake", *inputs, "--output-dir", output, "--json", report, "--jobs", 2]
    with open(tmp_path / "stderr.txt", "w") as errors:
        wrapper = subprocess.Popen(
            [sys.executable, ROOT / "tools" / "run.py", *map(str, arguments)],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            start_new_session=True,  # a process group of its own, as a terminal gives a command
        )
    children = Path(f"/proc/{wrapper.pid}/task/{wrapper.pid}/children")
    if not children.exists():
        pytest.skip("needs /proc to find the launcher")
    while not children.read_text().split():
        assert wrapper.poll() is None, "the wrapper ended before starting the launcher"
        time.sleep(0.005)
    wait_for_bpy_import(int(children.read_text().split()[0]))
    os.killpg(wrapper.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    stdout = wrapper.communicate(timeout=120)[0]
    assert wrapper.returncode == 130, (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
    assert stdout.splitlines()[-1].startswith("Stopped by SIGINT: 0 of 4 files done, 0 failed, 4 not done (")
    assert json.loads(report.read_text())["stopped"] == "SIGINT"
