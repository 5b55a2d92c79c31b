# SPDX-License-Identifier: GPL-3.0-or-later
"""Throughput of the batch command line: files per minute with ``--jobs 1`` and ``--jobs 2``.

    ~/.cache/limb_ik/venv-blender-5.2/bin/python benchmarks/cli.py [--rounds 2] [--jobs 1 2]

Writes the twenty files of the command-line tests (``tests/blender/batch_files.py``: Rigify
metarigs, BVH imports, test legs, one file without an armature, one truncated, one broken set-up)
and runs ``tools/limb_ik_cli.py detect`` and ``bake`` over all of them as a user would, timing
the whole command (Python and Blender start-up included). ``--jobs 1`` does every file in one
process; ``--jobs N`` shares the files out over N child processes. Best of ``--rounds``.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
ROOT = BENCHMARKS.parent
sys.path.insert(1, str(ROOT / "tools"))
sys.path.insert(1, str(ROOT / "tests" / "blender"))

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, I001
import addon_utils  # noqa: E402
import batch_files  # noqa: E402
import report  # noqa: E402

LAUNCHER = ROOT / "tools" / "limb_ik_cli.py"
#: (subcommand, extra arguments): the files' own six frames, and a long bake where the work per file grows
RUNS = (("detect", ()), ("bake", ()), ("bake", ("--frames", "1:250")))


def timed_run(subcommand: str, extra, inputs: Path, jobs: int, scratch: Path) -> tuple[float, dict]:
    """Seconds for the whole command over ``inputs/*.blend``, and its JSON report."""
    output, json_report = Path(tempfile.mkdtemp(dir=scratch)), scratch / "report.json"
    command = [
        sys.executable,
        str(LAUNCHER),
        subcommand,
        str(inputs / "*.blend"),
        *extra,
        "--output-dir",
        str(output),
        "--jobs",
        str(jobs),
        "--json",
        str(json_report),
    ]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} exited with {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds, json.loads(json_report.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2, help="runs of each command; the best counts")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="values of --jobs to compare")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="limb_ik_bench_cli_") as folder:
        folder = Path(folder)
        inputs = folder / "inputs"
        inputs.mkdir()
        with report.quiet():
            extension = source_extension.enable()
            addon_utils.enable("rigify", default_set=True)
            paths = batch_files.write(inputs, extension.api, folder)
        size = sum(path.stat().st_size for path in paths.values())
        report.header(
            "Batch command line: files per minute",
            [
                f"{len(paths)} files, {size / len(paths) / 1024:.0f} KiB on average, frames "
                f"{batch_files.FRAMES[0]}-{batch_files.FRAMES[1]}; best of {args.rounds} runs",
                "Wall-clock time of the whole command, start-up of every process included",
            ],
        )
        rows, baseline = [], {}
        for subcommand, extra in RUNS:
            label = " ".join([subcommand, *extra])
            for jobs in args.jobs:
                timing = []
                for _ in range(args.rounds):
                    seconds, result = timed_run(subcommand, extra, inputs, jobs, folder)
                    timing.append(seconds)
                best = report.Timing(tuple(timing)).best
                baseline.setdefault(label, best)
                ok = sum(entry["status"] == "ok" for entry in result["files"])
                per_file = sorted(entry["seconds"] for entry in result["files"] if entry["status"] == "ok")
                rows.append(
                    [
                        f"`{label}`",
                        jobs,
                        f"{ok} ok, {len(result['files']) - ok} failed",
                        f"{best:.1f}",
                        f"{60.0 * len(paths) / best:.0f}",
                        f"{baseline[label] / best:.2f}x",
                        f"{per_file[len(per_file) // 2]:.2f}",
                    ]
                )
        print(
            report.table(
                ["Command", "--jobs", "Files", "Seconds", "Files per minute", "Speed-up", "Median s per file"],
                rows,
                [False, True, False, True, True, True, True],
            )
        )
        print("\nMedian s per file: the file's own time in the process that did it.")
    bpy.ops.wm.read_homefile(app_template="")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    source_extension.leave(main())
