# SPDX-License-Identifier: GPL-3.0-or-later
"""What one farm task costs, and what 10,000 files mean for the job templates in ``farm/``.

    ~/.cache/limb_ik/venv-blender-5.2/bin/python benchmarks/farm.py [--rounds 5]

Measured here, with the ``bpy`` launcher standing in for Blender: the start-up of one process
(Python, ``bpy`` and the extension, nothing done), one farm task (``bake`` of one small file with its
JSON report, as ``farm/limb_ik.openjd.yaml`` runs it), the same file's own time inside a process that
does twenty; the merge of 10,000 per-file reports; creating the Open Job Description job for the
largest list of files one job takes; compiling a 10,000-file Flamenco job with node.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
ROOT = BENCHMARKS.parent
sys.path.insert(1, str(ROOT / "tools"))
sys.path.insert(1, str(ROOT / "tests" / "blender"))
sys.path.insert(1, str(ROOT))

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, I001
import batch_files  # noqa: E402
import batch_report  # noqa: E402
import report  # noqa: E402

LAUNCHER = ROOT / "tools" / "limb_ik_cli.py"
OPENJD = Path(sys.executable).with_name("openjd")
TEMPLATE = ROOT / "farm" / "limb_ik.openjd.yaml"
FILES = 10_000

# Compiles the Flamenco job type for N files with stand-ins for the Manager's globals; prints seconds and tasks.
FLAMENCO = """
const vm = require("node:vm"), fs = require("node:fs"), path = require("node:path").posix;
const author = {Task: (name, type) => ({name, type, commands: [], deps: [],
                addCommand(c) { this.commands.push(c); }, addDependency(t) { this.deps.push(t); }}),
                Command: (name, parameters) => ({name, parameters})};
const context = vm.createContext({author, path, print: () => {}});
vm.runInContext(fs.readFileSync(process.argv[1], "utf8"), context);
const files = Array.from({length: Number(process.argv[2])}, (_, i) => `/shots/sq${i % 100}/sh${i}.blend`).join("\\n");
const job = {jobID: "id", settings: {command: "bake", files, output_dir: "/out", frames: "1:250"}, tasks: []};
job.addTask = (t) => job.tasks.push(t);
const began = process.hrtime.bigint();
vm.runInContext("compileJob", context)(job);
console.log(Number(process.hrtime.bigint() - began) / 1e9, job.tasks.length);
"""


def seconds(command: list[str], rounds: int) -> float:
    """Median wall-clock seconds of ``command`` (which must succeed)."""
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        times.append(time.perf_counter() - began)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited with {done.returncode}:\n{done.stderr[-2000:]}")
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command; the median counts")
    args = parser.parse_args()
    launcher = [sys.executable, str(LAUNCHER)]
    with tempfile.TemporaryDirectory(prefix="limb_ik_bench_farm_") as folder:
        folder = Path(folder)
        with report.quiet():
            extension = source_extension.enable()
            leg = batch_files.write(folder, extension.api, folder, ("leg",))["leg"]
        many = folder / "many"
        many.mkdir()
        for n in range(20):
            shutil.copy(leg, many / f"leg_{n:02}.blend")

        startup = seconds([*launcher, "bake", "--help"], args.rounds)
        task_report = folder / "task.json"
        task = seconds(
            [
                *launcher,
                "--background",
                "--command",
                "limb_ik",
                "bake",
                str(leg),
                "--output-dir",
                str(folder / "out"),
                "--frames",
                "1:6",
                "--json",
                str(task_report),
            ],
            args.rounds,
        )
        batch_json = folder / "batch.json"
        seconds(
            [
                *launcher,
                "bake",
                str(many / "*.blend"),
                "--output-dir",
                str(folder / "batch"),
                "--frames",
                "1:6",
                "--json",
                str(batch_json),
            ],
            1,
        )
        in_batch = statistics.median(entry["seconds"] for entry in json.loads(batch_json.read_text())["files"])

        # 10,000 per-file reports like the real one, then merged as the farm's last task does.
        one = json.loads(task_report.read_text())
        reports = folder / "reports"
        reports.mkdir()
        for n in range(FILES):
            entry = dict(one["files"][0], path=f"/shots/sh{n:05}.blend", output=f"/out/sh{n:05}.blend")
            (reports / f"sh{n:05}.json").write_text(json.dumps(dict(one, files=[entry])))
        began = time.perf_counter()
        merged = batch_report.merge(batch_report.report_paths([str(reports)]))
        batch_report.write(str(folder / "merged.json"), merged)
        merge_seconds = time.perf_counter() - began
        merged_size = (folder / "merged.json").stat().st_size
        assert merged["exit_status"] == 0 and len(merged["files"]) == FILES
        merge_task = seconds([*launcher, "merge", str(reports), "--json", str(folder / "merged2.json")], 1)

        def openjd_summary(count: int) -> subprocess.CompletedProcess:
            files = json.dumps([f"/shots/sh{n:05}.blend" for n in range(count)])
            return subprocess.run(
                [str(OPENJD), "summary", str(TEMPLATE), "-p", f"Files={files}", "-p", "OutputDir=/out"],
                capture_output=True,
                text=True,
            )

        began = time.perf_counter()
        largest = openjd_summary(1024)
        openjd_seconds = time.perf_counter() - began
        assert largest.returncode == 0, largest.stdout + largest.stderr
        too_many = openjd_summary(1025)
        lines = (too_many.stdout + too_many.stderr).splitlines()
        refusal = next((line.strip() for line in lines if "1024" in line), "")

        node = subprocess.run(
            ["node", "-e", FLAMENCO, str(ROOT / "farm" / "flamenco" / "limb_ik.js"), str(FILES)],
            capture_output=True,
            text=True,
            check=True,
        )
        flamenco_seconds, flamenco_tasks = float(node.stdout.split()[0]), node.stdout.split()[1]

    report.header(
        "Farm tasks: one process per file",
        [
            "The bpy launcher stands in for Blender; median of "
            f"{args.rounds} runs. A small file (a leg, 6 frames) so start-up shows."
        ],
    )
    merged_mb = merged_size / 1e6
    print(
        report.table(
            ["Measured", "Seconds"],
            [
                ["Process start-up alone (Python, bpy, extension; `bake --help`)", f"{startup:.2f}"],
                ["One farm task: `bake` of one file with its report", f"{task:.2f}"],
                ["The same file inside one process doing 20 (its own time)", f"{in_batch:.2f}"],
                ["Per-task overhead (task minus the file's own time)", f"{task - in_batch:.2f}"],
                [f"Merging {FILES:,} per-file reports in Python ({merged_mb:.1f} MB merged)", f"{merge_seconds:.2f}"],
                [f"The merge task on {FILES:,} reports (launcher start-up included)", f"{merge_task:.2f}"],
                ["`openjd summary`: a job of 1,024 files (the most one list range takes)", f"{openjd_seconds:.2f}"],
                [
                    f"Flamenco job type compiling {FILES:,} files ({flamenco_tasks} tasks, node)",
                    f"{flamenco_seconds:.2f}",
                ],
            ],
            [False, True],
        )
    )
    print(f"\n1,025 files: {refusal or 'accepted'}")
    overhead = task - in_batch
    print(
        f"Estimated, {FILES:,} such files: {FILES * task / 3600:.1f} worker-hours of tasks, of which "
        f"{FILES * overhead / 3600:.1f} are per-task overhead; on 50 workers about "
        f"{FILES * task / 50 / 60:.0f} minutes plus the farm's own scheduling per task."
    )
    bpy.ops.wm.read_homefile(app_template="")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    source_extension.leave(main())
