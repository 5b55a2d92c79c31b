# SPDX-License-Identifier: GPL-3.0-or-later
"""What live solving costs per frame, against no IK and against Blender's own IK constraint.

    ~/.cache/limb_ik/venv-blender-5.2/bin/python benchmarks/live.py [--rounds 2] [--profile]

For 2, 20, 100 and 500 legs (``scene.py``), plays the 250 frames with ``scene.frame_set`` and
reports milliseconds per frame with no IK (FK), with Limb IK live, and with Blender's IK
constraint (Legacy and iTaSC solvers). Each set-up is built afresh for every round; a round
plays a few frames to warm up, then all 250 timed. Afterwards a few frames are checked to show
that every IK set-up really puts the feet on their targets. Then where Limb IK's frame goes: its
handlers' phases (reading, solving, writing) and Blender's evaluation around them.
"""

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(1, str(BENCHMARKS.parent / "tools"))
sys.path.insert(1, str(BENCHMARKS.parent / "tests" / "blender"))

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, I001
import report  # noqa: E402
import scene  # noqa: E402

SIZES = (2, 20, 100, 500)
#: Issue 12's goals, by number of legs: (what, the largest Limb IK frame in ms or None, the largest ratio of
#: Limb IK's frame to Legacy IK's)
GOALS = {2: ("<= 0.3 ms and <= 5x Legacy", 0.3, 5.0), 100: ("no slower than Legacy", None, 1.0)}
REACHED = 1e-3  #: metres: a set-up whose feet end further than this from their targets is not comparable
WARM_UP = 10  #: frames played after building, before timing
LABELS = {
    "FK": "no IK (FK only)",
    "LIMB_IK": "Limb IK, live",
    "LEGACY": "Blender IK, Legacy",
    "ITASC": "Blender IK, iTaSC",
}


@dataclass
class Result:
    legs: int
    setup: str
    frame: report.Timing  #: seconds per frame
    handlers: report.Timing  #: seconds per frame inside Limb IK's frame handlers (whatever drives the legs)
    errors: tuple[float, float] | None  #: worst tip distance (m) and foot angle (degrees) at the checked frames


class HandlerClock:
    """Times Limb IK's frame-change handlers (any defined in the extension) by swapping in timing
    wrappers while in use."""

    def __init__(self):
        self.seconds = 0.0
        self._swapped: list[tuple[list, Callable, Callable]] = []

    def __enter__(self):
        for handlers in (bpy.app.handlers.frame_change_pre, bpy.app.handlers.frame_change_post):
            for index, function in enumerate(handlers):
                if getattr(function, "__module__", "").startswith(source_extension.MODULE):
                    wrapper = self._wrap(function)
                    handlers[index] = wrapper
                    self._swapped.append((handlers, function, wrapper))
        if not self._swapped:
            raise RuntimeError("Limb IK has no frame-change handlers registered: is the extension enabled?")
        return self

    def _wrap(self, function: Callable) -> Callable:
        def timed(*args):
            began = time.perf_counter()
            try:
                function(*args)
            finally:
                self.seconds += time.perf_counter() - began

        return timed

    def __exit__(self, *_exc):
        for handlers, function, wrapper in self._swapped:
            handlers[handlers.index(wrapper)] = function
        self._swapped.clear()


def frames() -> range:
    return range(scene.FRAMES[0], scene.FRAMES[1] + 1)


def play(frame_numbers) -> float:
    """Seconds to evaluate the scene at each of ``frame_numbers`` in turn."""
    current = bpy.context.scene
    began = time.perf_counter()
    for frame in frame_numbers:
        current.frame_set(frame)
    return time.perf_counter() - began


def accuracy(legs: scene.LegScene) -> tuple[float, float]:
    worst = [0.0, 0.0]
    for frame in scene.check_frames():
        bpy.context.scene.frame_set(frame)
        worst = [max(w, e) for w, e in zip(worst, scene.goal_errors(legs))]
    return worst[0], worst[1]


def one_round(lik, legs: int, setup: str) -> tuple[float, float, scene.LegScene]:
    """Seconds per frame in all, and in Limb IK's handlers, over the 250 frames of a freshly built scene."""
    built = scene.build(legs, setup, lik)
    play(range(scene.FRAMES[0], scene.FRAMES[0] + WARM_UP))
    with HandlerClock() as clock:
        seconds = play(frames())
    return seconds / len(frames()), clock.seconds / len(frames()), built


def measure(lik, legs: int, setups: list[str], rounds: int) -> list[Result]:
    """Every set-up at one size. Rounds interleave the set-ups, so a busy spell on the machine
    slows one round of each rather than every round of one; the last round is checked for accuracy."""
    runs: dict[str, list[tuple[float, float]]] = {setup: [] for setup in setups}
    errors: dict[str, tuple[float, float] | None] = dict.fromkeys(setups)
    for round_number in range(rounds):
        for setup in setups:
            frame, handlers, built = one_round(lik, legs, setup)
            runs[setup].append((frame, handlers))
            if round_number == rounds - 1 and setup != "FK":
                errors[setup] = accuracy(built)
    results = []
    for setup in setups:
        frame_times, handler_times = zip(*runs[setup])
        results.append(Result(legs, setup, report.Timing(frame_times), report.Timing(handler_times), errors[setup]))
    return results


def ik_cost(result: Result, fk: Result) -> float:
    """Seconds per limb per frame added by the IK set-up over plain FK (best runs)."""
    return (result.frame.best - fk.frame.best) / result.legs


def results_table(results: list[Result]) -> str:
    fk = {r.legs: r for r in results if r.setup == "FK"}
    rows = []
    for r in results:
        over = "—" if r.setup == "FK" else f"{ik_cost(r, fk[r.legs]) * 1e6:.1f}"
        handlers = f"{r.handlers.best * 1e3:.3f}"
        tip, angle = ("—", "—") if r.errors is None else (f"{r.errors[0] * 1e3:.3f}", f"{r.errors[1]:.3f}")
        rows.append(
            (
                r.legs,
                LABELS[r.setup],
                f"{r.frame.best * 1e3:.2f}",
                f"{r.frame.median * 1e3:.2f}",
                report.percent(r.frame.spread),
                over,
                handlers,
                tip,
                angle,
            )
        )
    return report.table(
        (
            "legs",
            "driven by",
            "ms/frame best",
            "ms/frame median",
            "spread",
            "µs/limb/frame over FK",
            "in Limb IK handlers, ms/frame",
            "max tip error, mm",
            "max foot angle error, °",
        ),
        rows,
        right=[True, False, True, True, True, True, True, True, True],
    )


def ratio_table(results: list[Result]) -> tuple[str, list[bool]]:
    by = {(r.legs, r.setup): r for r in results}
    rows, verdicts = [], []
    for legs in sorted({r.legs for r in results}):
        fk, ours = by[(legs, "FK")], by[(legs, "LIMB_IK")]
        legacy, itasc = by[(legs, "LEGACY")], by.get((legs, "ITASC"))
        frame = ours.frame.best
        goal = "—"
        if legs in GOALS:
            what, most_ms, most_ratio = GOALS[legs]
            passed = (most_ms is None or frame * 1e3 <= most_ms) and frame / legacy.frame.best <= most_ratio
            verdicts.append(passed)
            goal = f"{what}: {report.verdict(passed)}"
        rows.append(
            (
                legs,
                f"{frame * 1e3:.3f}",
                f"{legacy.frame.best * 1e3:.3f}",
                "—" if itasc is None else f"{itasc.frame.best * 1e3:.3f}",
                f"{frame / legacy.frame.best:.2f}x",
                "—" if itasc is None else f"{frame / itasc.frame.best:.2f}x",
                f"{ik_cost(legacy, fk) / ik_cost(ours, fk):.2f}x",
                goal,
            )
        )
    table = report.table(
        (
            "legs",
            "Limb IK, ms/frame",
            "Legacy, ms/frame",
            "iTaSC, ms/frame",
            "Limb IK / Legacy, whole frame",
            "Limb IK / iTaSC, whole frame",
            "Legacy IK cost / Limb IK cost",
            "goal",
        ),
        rows,
        right=[True, True, True, True, True, True, True, False],
    )
    return table, verdicts


class PhaseClock:
    """Times the phases of Limb IK's live frame by swapping in timing wrappers while in use: the
    frame-change handlers, and within them reading (``gather``, of which composing the animator's pose
    under the last write, ``compose.compose``), solving (``solve_frames``) and writing (``write``)."""

    PHASES = (
        ("rig.solve", "gather"),
        ("rig.live.compose", "compose"),
        ("rig.solve", "solve_frames"),
        ("rig.solve", "write"),
    )

    def __init__(self, lik):
        self.lik = lik
        self.seconds = dict.fromkeys(("pre", "post", *(name for _, name in self.PHASES)), 0.0)
        self._swapped = []

    def __enter__(self):
        for handlers, key in ((bpy.app.handlers.frame_change_pre, "pre"), (bpy.app.handlers.frame_change_post, "post")):
            for index, function in enumerate(handlers):
                if getattr(function, "__module__", "").startswith(source_extension.MODULE):
                    handlers[index] = self._wrap(function, key)
                    self._swapped.append((handlers, index, function))
        for module_name, name in self.PHASES:
            module = self.lik
            for part in module_name.split("."):
                module = getattr(module, part)
            function = getattr(module, name)
            setattr(module, name, self._wrap(function, name))
            self._swapped.append((module, name, function))
        return self

    def _wrap(self, function: Callable, key: str) -> Callable:
        def timed(*args, **kwargs):
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[key] += time.perf_counter() - began

        return timed

    def __exit__(self, *_exc):
        for owner, where, function in reversed(self._swapped):
            if isinstance(owner, list):
                owner[where] = function
            else:
                setattr(owner, where, function)
        self._swapped.clear()


def phases(lik, sizes, rounds: int) -> str:
    """Where Limb IK's live frame goes, µs per frame over the quickest of ``rounds`` played ranges at each size."""
    rows = []
    for legs in sizes:
        runs = []
        for _ in range(rounds):
            scene.build(legs, "LIMB_IK", lik)
            play(range(scene.FRAMES[0], scene.FRAMES[0] + WARM_UP))
            with PhaseClock(lik) as clock:
                runs.append((play(frames()), clock.seconds))
        seconds, spent = min(runs, key=lambda run: run[0])
        per = {key: value / len(frames()) * 1e6 for key, value in spent.items()}
        frame = seconds / len(frames()) * 1e6
        handlers = per["pre"] + per["post"]
        rest = per["post"] - per["gather"] - per["solve_frames"] - per["write"]
        rows.append(
            (
                legs,
                f"{frame:.0f}",
                f"{per['pre']:.0f}",
                f"{per['gather']:.0f} ({per['compose']:.0f})",
                f"{per['solve_frames']:.0f}",
                f"{per['write']:.0f}",
                f"{rest:.0f}",
                f"{frame - handlers:.0f}",
            )
        )
    return report.table(
        (
            "legs",
            "frame, µs",
            "before the frame change (restoring)",
            "reading (of which composing)",
            "solving",
            "writing",
            "rest of the handler",
            "Blender's evaluation and the rest",
        ),
        rows,
        right=[True] * 8,
    )


def profile_live(lik, legs: int, top: int = 25) -> str:
    """cProfile of one played range with Limb IK live, limited to the extension's functions."""
    scene.build(legs, "LIMB_IK", lik)
    play(range(scene.FRAMES[0], scene.FRAMES[0] + WARM_UP))
    return report.profile(lambda: play(frames()), r"limb_ik|numpy", top)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2, help="fresh builds, each timed over 250 frames (default 2)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="numbers of legs (even)")
    parser.add_argument("--no-itasc", action="store_true", help="leave out Blender's iTaSC solver")
    parser.add_argument(
        "--profile", action="store_true", help="also print a cProfile of Limb IK live at the largest size"
    )
    args = parser.parse_args()
    lik = source_extension.enable()
    setups = [s for s in scene.SETUPS if not (args.no_itasc and s == "ITASC")]
    report.header(
        "Live solving: cost of `scene.frame_set()` per frame",
        (
            f"one armature, N/2 characters of two legs (thigh, shin, foot), each leg chasing its own Empty keyed "
            f"over frames {scene.FRAMES[0]}-{scene.FRAMES[1]}",
            "Blender IK: IK constraint on the shin (chain 2, target at the ankle: a child of the foot's target) and "
            f"Copy Rotation on the foot; iTaSC with {scene.ITASC_SETTINGS}",
            f"{args.rounds} rounds: each builds the scene afresh, plays {WARM_UP} frames, then times all "
            f"{len(frames())}; best and median of the rounds; spread = slowest / best - 1",
            "IK cost = (ms/frame - FK ms/frame) / legs, best rounds; errors: worst over "
            f"{len(scene.check_frames())} frames and all legs",
        ),
    )
    results = []
    for legs in args.sizes:
        results += measure(lik, legs, setups, args.rounds)
    print(results_table(results), end="\n\n")
    table, verdicts = ratio_table(results)
    print(table, end="\n\n")
    for legs, passed in zip([n for n in sorted(args.sizes) if n in GOALS], verdicts):
        print(f"Goal at {legs} legs, Limb IK's frame {GOALS[legs][0]}: {report.verdict(passed)}")
    print(
        f"\n### Where Limb IK's live frame goes (µs per frame, the quickest of {args.rounds} played ranges)\n\n"
        f"{phases(lik, args.sizes, args.rounds)}\n"
    )
    sys.stdout.flush()
    for r in results:
        if r.errors is not None and r.errors[0] > REACHED:
            print(
                f"WARNING: {LABELS[r.setup]} at {r.legs} legs leaves a foot {r.errors[0] * 1e3:.1f} mm off its "
                "target: its timing is not comparable."
            )
    if args.profile:
        print(f"\n### cProfile, Limb IK live, {max(args.sizes)} legs, {len(frames())} frames\n")
        print("```\n" + profile_live(lik, max(args.sizes)) + "```", flush=True)
    return 0


if __name__ == "__main__":
    source_extension.leave(main())
