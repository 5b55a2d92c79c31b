# SPDX-License-Identifier: GPL-3.0-or-later
"""What live solving costs per frame, against no IK and against Blender's own IK constraint.

    ~/.cache/limb_ik/venv-blender-5.2/bin/python benchmarks/live.py [--rounds 2] [--profile]

For 2, 20, 100 and 500 legs (``scene.py``), plays the 250 frames with ``scene.frame_set`` and
reports milliseconds per frame with no IK (FK), with Limb IK live, and with Blender's IK
constraint (Legacy and iTaSC solvers). Each set-up is built afresh for every round; a round
plays a few frames to warm up, then all 250 timed. Afterwards a few frames are checked to show
that every IK set-up really puts the feet on their targets. Then where Limb IK's frame goes: its
handlers' phases (reading, solving, writing) and Blender's evaluation around them.

Then a real character (``character.py``: the glTF CesiumMan, a skinned mesh on 19 bones, Detect Limbs'
four limbs, a target Empty at each tip): its 48 frames played four ways in one process (the character
alone, Blender's IK constraints on the same chains and targets, Limb IK live, Live with the legs planted on
a ramp), best of three sweeps, and where each frame goes, Blender's evaluations included.
"""

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(1, str(BENCHMARKS.parent))  # takes/, for the character's ramp
sys.path.insert(1, str(BENCHMARKS.parent / "tools"))
sys.path.insert(1, str(BENCHMARKS.parent / "tests" / "blender"))

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, I001
import character  # noqa: E402
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


CHARACTER_LABELS = {
    "CHARACTER": "the character alone",
    "BLENDER_IK": "Blender's IK constraints",
    "BLENDER_IK_2": "Blender's IK as on bare chains (misses)",
    "LIMB_IK": "Limb IK, live",
    "PLANTED": "Limb IK, live, legs planted on a ramp",
}
#: Issue 24's goals on the character: Live's frame at most this many times Blender's IK frame, and planting
#: adding at most this many seconds to Live's frame
CHARACTER_GOALS = (2.0, 1e-3)


def character_frames() -> range:
    return range(character.FRAMES[0], character.FRAMES[1] + 1)


def measure_character(lik, sweeps: int) -> dict[str, tuple[report.Timing, tuple[float, float] | None]]:
    """Seconds per frame of each set-up over the character's frames, one sweep each per round (set-ups
    interleaved, each built afresh and warmed up), and the worst tip and turn errors of the last round."""
    runs: dict[str, list[float]] = {setup: [] for setup in character.SETUPS}
    errors: dict[str, tuple[float, float] | None] = dict.fromkeys(character.SETUPS)
    for sweep in range(sweeps):
        for setup in character.SETUPS:
            with report.quiet():  # the glTF importer's messages
                built = character.build(setup, lik)
            play(range(character.FRAMES[0], character.FRAMES[0] + WARM_UP))
            runs[setup].append(play(character_frames()) / len(character_frames()))
            if sweep == sweeps - 1 and built.reaching:
                worst = [0.0, 0.0]
                for frame in character.check_frames():
                    bpy.context.scene.frame_set(frame)
                    worst = [max(w, e) for w, e in zip(worst, character.tip_errors(built))]
                errors[setup] = (worst[0], worst[1])
    return {setup: (report.Timing(tuple(runs[setup])), errors[setup]) for setup in character.SETUPS}


def character_table(measured) -> tuple[str, list[str]]:
    """The set-ups' frames against Blender's IK, and the goals' verdicts as sentences."""
    alone = measured["CHARACTER"][0].best
    blender = measured["BLENDER_IK"][0].best
    rows = []
    for setup, (timing, errors) in measured.items():
        frame = timing.best
        rows.append(
            (
                CHARACTER_LABELS[setup],
                f"{frame * 1e3:.2f}",
                f"{timing.median * 1e3:.2f}",
                report.percent(timing.spread),
                "—" if setup == "CHARACTER" else f"{(frame - alone) * 1e3:.2f}",
                f"{frame / blender:.2f}x",
                "—"
                if setup in ("CHARACTER", "BLENDER_IK", "BLENDER_IK_2")
                else f"{(frame - alone) / (blender - alone):.1f}x",
                "—" if errors is None else f"{errors[0] * 1e3:.3f}",
                "—" if errors is None else f"{errors[1]:.3f}",
            )
        )
    table = report.table(
        (
            "driven by",
            "ms/frame best",
            "ms/frame median",
            "spread",
            "adds to the character alone, ms",
            "frame / Blender's IK frame",
            "added / what Blender's IK adds",
            "max tip error, mm",
            "max end-bone angle error, °",
        ),
        rows,
        right=[False] + [True] * 8,
    )
    live, planted = measured["LIMB_IK"][0].best, measured["PLANTED"][0].best
    most_ratio, most_more = CHARACTER_GOALS
    verdicts = [
        f"Goal: Live's frame at most {most_ratio:.0f}x Blender's IK frame: {live / blender:.2f}x, "
        f"{report.verdict(live / blender <= most_ratio)}",
        f"Goal: planting within {most_more * 1e3:.0f} ms more than Live: {(planted - live) * 1e3:.2f} ms more, "
        f"{report.verdict(planted - live <= most_more)}",
    ]
    return table, verdicts


class Timeline(PhaseClock):
    """A :class:`PhaseClock` that also notes when each of Limb IK's handlers ran, so that the time between
    them (Blender evaluating the scene) is measured too, and splits reading and planting finer."""

    PHASES = (
        *PhaseClock.PHASES,
        ("rig.solve", "read_pose"),
        ("rig.solve", "take_reader"),
        ("rig.planting.legs", "analysed"),
        ("rig.planting.legs", "set_goals"),
    )
    HANDLERS = ("pre", "post", "updates")

    def __init__(self, lik):
        super().__init__(lik)
        self.seconds["updates"] = 0.0
        self.events: list[tuple[str, float, float]] = []  #: (handler, began, ended), in order

    def __enter__(self):
        super().__enter__()
        handlers = bpy.app.handlers.depsgraph_update_post
        for index, function in enumerate(handlers):
            if getattr(function, "__module__", "").startswith(source_extension.MODULE):
                handlers[index] = self._wrap(function, "updates")
                self._swapped.insert(0, (handlers, index, function))
        return self

    def _wrap(self, function: Callable, key: str) -> Callable:
        if key not in self.HANDLERS:
            return super()._wrap(function, key)

        def timed(*args, **kwargs):
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                ended = time.perf_counter()
                self.seconds[key] += ended - began
                self.events.append((key, began, ended))

        return timed

    def play(self, frame_numbers) -> dict[str, float]:
        """Plays the frames; seconds spent in all, and in Blender's evaluation before Limb IK's frame-change
        handler runs ("first") and after it ("second": what it wrote), Limb IK's other handlers left out."""
        spent = {"frame": 0.0, "first": 0.0, "second": 0.0}
        current = bpy.context.scene
        for frame in frame_numbers:
            self.events.clear()
            began = time.perf_counter()
            current.frame_set(frame)
            ended = time.perf_counter()
            post = [event for event in self.events if event[0] == "post"]
            pre = [event for event in self.events if event[0] == "pre"]
            middle = (post[0][1], post[-1][2]) if post else (ended, ended)
            start = pre[-1][2] if pre else began
            spent["frame"] += ended - began
            spent["first"] += middle[0] - start - self._updates(start, middle[0])
            spent["second"] += ended - middle[1] - self._updates(middle[1], ended)
        return spent

    def _updates(self, began: float, ended: float) -> float:
        return sum(end - start for key, start, end in self.events if key == "updates" and began <= start < ended)


def character_phases(lik, sweeps: int) -> str:
    """Where each set-up's character frame goes, µs per frame over the quickest of ``sweeps`` played sweeps."""
    rows = []
    count = len(character_frames())
    for setup in character.SETUPS:
        with report.quiet():
            character.build(setup, lik)
        play(range(character.FRAMES[0], character.FRAMES[0] + WARM_UP))
        runs = []
        for _ in range(sweeps):
            with Timeline(lik) as clock:
                spent = clock.play(character_frames())
            runs.append((spent, dict(clock.seconds)))
        spent, phase = min(runs, key=lambda run: run[0]["frame"])
        us = {key: value / count * 1e6 for key, value in {**spent, **phase}.items()}
        planting = us["take_reader"] + us["analysed"]
        gather_rest = us["gather"] - us["read_pose"] - us["compose"]
        solving = us["solve_frames"] - us["set_goals"]
        rest = us["post"] - us["gather"] - planting - us["solve_frames"] - us["write"]
        ours = us["pre"] + us["post"] + us["updates"]
        rows.append(
            (
                CHARACTER_LABELS[setup],
                f"{us['frame']:.0f}",
                f"{us['first']:.0f}",
                f"{us['second']:.0f}",
                f"{us['pre']:.0f}",
                f"{us['read_pose']:.0f}",
                f"{us['compose']:.0f}",
                f"{gather_rest:.0f}",
                f"{planting:.0f} + {us['set_goals']:.0f}",
                f"{solving:.0f}",
                f"{us['write']:.0f}",
                f"{rest:.0f}",
                f"{us['updates']:.0f}",
                f"{us['frame'] - us['first'] - us['second'] - ours:.0f}",
            )
        )
    return report.table(
        (
            "driven by",
            "frame",
            "Blender evaluates rig and mesh",
            "again, after Limb IK's write",
            "restoring before the frame change",
            "reading the pose",
            "composing",
            "goals and batch",
            "planting: analysis + ground and goals",
            "solving",
            "writing",
            "rest of the handler",
            "update handler",
            "the rest",
        ),
        rows,
        right=[False] + [True] * 13,
    )


def print_character(lik, sweeps: int) -> None:
    count = len(character_frames())
    print(
        f"\n### A real character: the glTF CesiumMan (3,273-vertex skinned mesh, 19 bones), its {count} frames\n\n"
        f"Detect Limbs' four limbs (three bones each), a target Empty at each tip moved {character.PULL:.0%} of the "
        "way to the limb's root. Blender's IK: the IK constraint on each end bone (Legacy, chain of 3, following "
        "the target's rotation); as on bare chains: IK (chain of 2) on each middle bone to an Empty at the end "
        "bone's head and Copy Rotation on the end bone, which misses, as Blender's IK puts the middle bone's tail "
        "on its target and the glTF importer made the tails up (timed for comparison only). Best and median of "
        f"{sweeps} sweeps (set-ups interleaved, each built afresh and "
        f"warmed up over {WARM_UP} frames); errors: worst over {len(character.check_frames())} frames and the limbs "
        "on targets (planted legs have none).\n",
        flush=True,
    )
    measured = measure_character(lik, sweeps)
    table, verdicts = character_table(measured)
    print(table, end="\n\n")
    print("\n".join(verdicts))
    for setup, (_, errors) in measured.items():
        if errors is not None and errors[0] > REACHED and setup != "BLENDER_IK_2":
            print(f"WARNING: {CHARACTER_LABELS[setup]} leaves a tip {errors[0] * 1e3:.1f} mm off its target.")
    print(
        f"\n### Where the character's frame goes (µs per frame, the quickest of {sweeps} sweeps)\n\n"
        "Blender's evaluations are the time between Limb IK's handlers: before its frame-change handler, and "
        "after it (the armature and mesh evaluated again for what it wrote). Reading, composing, planting "
        "(the take's analysis, looked up after the first frame; then the ground under the feet and the goals), "
        "solving and writing are inside the frame-change handler.\n\n"
        f"{character_phases(lik, sweeps)}\n",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2, help="fresh builds, each timed over 250 frames (default 2)")
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=list(SIZES), help="numbers of legs (even); none: the character only"
    )
    parser.add_argument("--sweeps", type=int, default=3, help="sweeps of the character's frames (default 3)")
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
        )
        if args.sizes
        else ("the real character only (no --sizes)",),
    )
    results = []
    for legs in args.sizes:
        results += measure(lik, legs, setups, args.rounds)
    if results:
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
    if character.found():
        print_character(lik, args.sweeps)
    else:
        print(f"\nThe real character is left out: {character.FILE} is not there.")
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
