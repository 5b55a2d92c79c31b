# SPDX-License-Identifier: GPL-3.0-or-later
"""Run every benchmark in turn, each in its own Python process so none inherits another's Blender state.

    python3 tools/run.py bench                # with the cached Blender 5.2 LTS environment
    ~/.cache/limb_ik/venv-blender-5.2/bin/python benchmarks/run_all.py [--only live bake]

Prints each benchmark's markdown tables as they come and exits non-zero if any benchmark fails
(a goal that is missed is a result, not a failure). Several minutes on two cores (the live benchmark,
up to 500 legs, about five).
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
SCRIPTS = ("solvers", "live", "bake", "cli", "farm", "planting")


def run(name: str) -> tuple[int, float]:
    """Exit status and seconds of one benchmark, its output passed straight through."""
    print(f"<!-- benchmarks/{name}.py -->", flush=True)
    began = time.perf_counter()
    status = subprocess.run([sys.executable, str(BENCHMARKS / f"{name}.py")], cwd=BENCHMARKS.parent).returncode
    seconds = time.perf_counter() - began
    print(f"\n<!-- benchmarks/{name}.py: exit status {status}, {seconds:.0f} s -->\n", flush=True)
    return status, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=SCRIPTS, default=list(SCRIPTS), help="benchmarks to run")
    args = parser.parse_args()
    failed = []
    for name in args.only:
        status, _ = run(name)
        if status != 0:
            failed.append(name)
    if failed:
        print(f"Failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
