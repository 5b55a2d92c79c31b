# SPDX-License-Identifier: GPL-3.0-or-later
"""What the command line prints: a line per file as it is done, progress through long files, the
batch's last line; and not Blender's own log lines."""

import contextlib
import ctypes
import os
import sys
import time
from contextlib import contextmanager

#: Seconds between two progress lines of one file (the first comes after this long in the file).
PROGRESS_INTERVAL = 1.0


def print_entry(entry: dict, subcommand: str, dry_run: bool, count: int, total: int) -> None:
    """The line of a file done, ``count`` of ``total``, and for ``check`` its foot figures."""
    name = os.path.basename(entry["path"])
    position = f"[{count:>{len(str(total))}}/{total}]"
    if entry["status"] != "ok":
        print(
            f"{position} {'FAILED' if entry['status'] == 'failed' else 'stopped':7} {name}: {entry['error']}",
            flush=True,
        )
        return
    details = [f"{part['name']}: {_armature_summary(part, subcommand)}" for part in entry["armatures"]]
    if entry["written"]:
        where = f" -> {entry['output']}"
    elif entry["output"] and dry_run and (entry["changed"] or entry["output"] != entry["path"]):
        where = f" (dry run, would write {entry['output']})"
    elif entry["output"]:
        where = " (unchanged, not rewritten)"
    else:
        where = ""
    lines = [f"{position} ok      {name}{where} [{entry['seconds']:.1f} s] " + " | ".join(details)]
    indent = " " * (len(position) + 9)
    for part in entry["armatures"]:
        lines += [f"{indent}{part['name']}: {line}" for line in _foot_lines(part.get("feet"))]
    print("\n".join(lines), flush=True)


def _armature_summary(part: dict, subcommand: str) -> str:
    bits = [f"detected {', '.join(part['detected'])}" if part["detected"] else ""]
    if part["baked"]:
        bits.append(f"baked {', '.join(part['baked'])} ({part['keys']} keys); {part['why']}")
    said = (part["problems"], part.get("warnings", {}))  # a limb may have both: each is said
    bits += [f"{limb}: {text}" for texts in said for limb, text in texts.items()] + [part.get("note", "")]
    return "; ".join(b for b in bits if b) or ("no problems" if subcommand == "check" else "nothing to do")


def _foot_lines(report: dict | None) -> list[str]:
    """``check``'s foot report (``api.foot_report``) in the README's terms: a line per foot, one for the pelvis."""
    return report["lines"] if report else []


class ProgressTimer:
    """When a progress line is due: every :data:`PROGRESS_INTERVAL` seconds, the first that long
    after the file started, so quick files print none."""

    def __init__(self):
        self._last = time.monotonic()

    def start(self) -> None:
        """A new file starts now."""
        self._last = time.monotonic()

    def due(self) -> bool:
        """Whether a line is due now; if so, the next one is due an interval later."""
        now = time.monotonic()
        if now - self._last < PROGRESS_INTERVAL:
            return False
        self._last = now
        return True


def print_progress(path: str, armature: str, frames: tuple[int, int], fraction: float) -> None:
    start, end = frames
    print(f"        {os.path.basename(path)}: {armature}, {100 * fraction:.0f}% of frames {start}-{end}", flush=True)


def print_summary(entries: list[dict], seconds: float, stopped_by: str | None) -> None:
    statuses = [entry["status"] for entry in entries]
    done, failed, stopped = (statuses.count(status) for status in ("ok", "failed", "stopped"))
    line = f"{done} of {len(entries)} files done, {failed} failed"
    if stopped_by:
        line = f"Stopped by {stopped_by}: {line}, {stopped} not done"
    print(f"{line} ({seconds:.1f} s).", flush=True)


@contextmanager
def blender_quiet():
    """Keep Blender's own log lines ("Read blend: …", "Saved copy as …") out of the output for a while.

    Blender's C code writes them to the process's standard output, below Python's ``sys.stdout``,
    so the descriptor itself points at the null device meanwhile. A ``--jobs`` child's output is
    dropped whole; this makes one process print the same as many.
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no standard output at all
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        _flush_c_output()
        os.dup2(saved, 1)
        os.close(saved)


def _flush_c_output() -> None:
    """Flush C's buffered standard output into the null device before it is pointed back."""
    with contextlib.suppress(OSError, TypeError, AttributeError):  # no C library by that name (Windows)
        ctypes.CDLL(None).fflush(None)
