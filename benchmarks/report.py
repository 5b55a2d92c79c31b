# SPDX-License-Identifier: GPL-3.0-or-later
"""What every benchmark prints: a header naming the machine, timing statistics and markdown tables.

Imports neither ``bpy`` nor ``numpy``, so the solver benchmark can use it before it has set
numpy's thread count.
"""

import cProfile
import importlib.metadata
import io
import os
import platform
import pstats
import statistics
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Repeated measurements of one thing (seconds, or any unit: only ratios between runs are used)."""

    runs: tuple[float, ...]

    @property
    def best(self) -> float:
        return min(self.runs)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def spread(self) -> float:
        """Worst run over best run, minus one: how noisy the repeats were."""
        return max(self.runs) / self.best - 1.0


def blender_version() -> str:
    """The Blender version of the running ``bpy`` (imported or not; importing bpy is slow)."""
    bpy = sys.modules.get("bpy")
    if bpy is not None:
        return bpy.app.version_string
    try:
        return importlib.metadata.version("bpy") + " (bpy wheel, not imported)"
    except importlib.metadata.PackageNotFoundError:
        return "none (no bpy in this environment)"


def source_revision() -> str:
    """The repository's commit, and whether the working tree differs from it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{commit} with uncommitted changes" if changed else commit


def header(title: str, notes: Sequence[str] = ()) -> None:
    """Print the benchmark's title, the Blender version and the machine it ran on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    print(f"## {title}\n")
    print(f"- Blender: {blender_version()}; Limb IK source: {source_revision()}")
    print(f"- Python: {platform.python_version()}, {platform.platform()}")
    print(f"- CPU: {cpu}, {os.cpu_count()} logical CPUs ({usable} usable by this process)")
    if hasattr(os, "getloadavg"):
        print(f"- Load average at start: {os.getloadavg()[0]:.2f}")
    for note in notes:
        print(f"- {note}")
    print(flush=True)


def table(headings: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool] | None = None) -> str:
    """A markdown table; columns aligned so it also reads well as plain text."""
    cells = [[str(c) for c in headings]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headings))]
    right = right if right is not None else [i > 0 for i in range(len(headings))]

    def line(row):
        padded = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2)) for w, r in zip(widths, right)) + "|"
    return "\n".join([line(cells[0]), rule, *(line(row) for row in cells[1:])])


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def percent(fraction: float) -> str:
    return f"{100.0 * fraction:.0f}%"


def profile(run, functions: str, top: int = 25) -> str:
    """cProfile of ``run()``: the ``top`` entries by cumulative time among ``functions`` (a regex)."""
    profiler = cProfile.Profile()
    profiler.runcall(run)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(functions, top)
    return out.getvalue()


@contextmanager
def quiet() -> Iterator[None]:
    """Standard output silenced for the block, Blender's own messages (printed from C) included, so
    that a benchmark prints only its report; errors still reach standard error."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
