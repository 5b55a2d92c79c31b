# SPDX-License-Identifier: GPL-3.0-or-later
"""How long baking 250 frames of leg IK to keys takes: Limb IK's bake against Blender's ``nla.bake``.

    ~/.cache/limb_ik/venv-blender-5.0/bin/python benchmarks/bake.py [--rounds 2] [--profile]

For 2, 20 and 100 legs (``scene.py``): Limb IK's bake (``rig.bake.bake``, what the Bake
operator runs) of a rig with one limb per leg, and Blender's Bake Action
(``bpy.ops.nla.bake``, visual keying, selected bones, pose only) of the same motion driven by
Blender's IK constraints (Legacy solver). Also timed: playing the 250 frames of the scene with
no IK, which any bake that lets Blender evaluate every frame pays. Afterwards each bake is
played back alone (live solving off, constraints muted) to show that both keyed the same,
correct motion.
"""

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(1, str(BENCHMARKS.parent / "tools"))
sys.path.insert(1, str(BENCHMARKS.parent / "tests" / "blender"))

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, I001
import numpy as np  # noqa: E402
import report  # noqa: E402
import rigs  # noqa: E402
import scene  # noqa: E402

SIZES = (2, 20, 100)
GOAL = 10.0  #: issue goal: at 100 legs, Limb IK's bake at least this many times faster than nla.bake
BAKES = ("PLAY", "LIMB_IK", "BLENDER")
LABELS = {
    "PLAY": "scene evaluation only (250 x `frame_set`, no IK, no keys)",
    "LIMB_IK": "Limb IK bake (`rig.bake.bake`)",
    "BLENDER": "Blender `nla.bake`, Legacy IK constraints, visual keying",
}
SETUP = {"PLAY": "FK", "LIMB_IK": "LIMB_IK", "BLENDER": "LEGACY"}


@dataclass
class Result:
    legs: int
    bake: str
    seconds: report.Timing
    tips: np.ndarray | None  #: (frames, legs, 3) baked tip positions at the checked frames
    errors: tuple[float, float] | None  #: worst tip distance (m) and foot angle (degrees) there

    @property
    def bone_frames(self) -> int:
        return 3 * self.legs * (scene.FRAMES[1] - scene.FRAMES[0] + 1)


def play_all() -> None:
    for frame in range(scene.FRAMES[0], scene.FRAMES[1] + 1):
        bpy.context.scene.frame_set(frame)


def limb_ik_bake(lik, legs: scene.LegScene) -> None:
    lik.rig.bake.bake(
        legs.rig, bpy.context.evaluated_depsgraph_get(), frame_start=scene.FRAMES[0], frame_end=scene.FRAMES[1]
    )


def prepare_blender_bake(legs: scene.LegScene) -> None:
    """Pose Mode on the rig with exactly the leg bones selected, as an animator would call Bake Action."""
    bpy.context.view_layer.objects.active = legs.rig
    legs.rig.select_set(True)
    bpy.ops.object.mode_set(mode="POSE")
    rigs.select_bones(legs.rig, legs.bones, legs.bones[-1])


def blender_bake() -> None:
    result = bpy.ops.nla.bake(
        frame_start=scene.FRAMES[0],
        frame_end=scene.FRAMES[1],
        visual_keying=True,
        only_selected=True,
        bake_types={"POSE"},
    )
    if result != {"FINISHED"}:
        raise RuntimeError(f"nla.bake returned {result}")


def timed_bake(lik, legs: int, bake: str) -> tuple[float, scene.LegScene]:
    built = scene.build(legs, SETUP[bake], lik)
    if bake == "BLENDER":
        prepare_blender_bake(built)
    began = time.perf_counter()
    if bake == "PLAY":
        play_all()
    elif bake == "LIMB_IK":
        limb_ik_bake(lik, built)
    else:
        blender_bake()
    return time.perf_counter() - began, built


def played_back(legs: scene.LegScene, bake: str) -> tuple[np.ndarray, tuple[float, float]]:
    """Tip positions and worst errors at the checked frames, playing the keys alone."""
    if bake == "BLENDER":
        scene.set_constraints_enabled(legs, False)
    elif legs.rig.limb_ik.live:
        raise RuntimeError("the bake left live solving on, so playback would not show the keys alone")
    tips, worst = [], [0.0, 0.0]
    for frame in scene.check_frames():
        bpy.context.scene.frame_set(frame)
        tips.append(scene.tip_positions(legs))
        worst = [max(w, e) for w, e in zip(worst, scene.goal_errors(legs))]
    return np.array(tips), (worst[0], worst[1])


def measure(lik, legs: int, rounds: int) -> list[Result]:
    """Every bake at one size. Rounds interleave the bakes, so a busy spell on the machine slows
    one round of each rather than every round of one; the last round's keys are played back."""
    runs: dict[str, list[float]] = {bake: [] for bake in BAKES}
    checked: dict[str, tuple] = dict.fromkeys(BAKES, (None, None))
    for round_number in range(rounds):
        for bake in BAKES:
            seconds, built = timed_bake(lik, legs, bake)
            runs[bake].append(seconds)
            if round_number == rounds - 1 and bake != "PLAY":
                checked[bake] = played_back(built, bake)
    return [Result(legs, bake, report.Timing(tuple(runs[bake])), *checked[bake]) for bake in BAKES]


def results_table(results: list[Result]) -> str:
    rows = []
    for r in results:
        tip, angle = ("—", "—") if r.errors is None else (f"{r.errors[0] * 1e3:.3f}", f"{r.errors[1]:.3f}")
        per_bone_frame = f"{r.seconds.best / r.bone_frames * 1e6:.1f}"
        rows.append(
            (
                r.legs,
                LABELS[r.bake],
                f"{r.seconds.best:.3f}",
                f"{r.seconds.median:.3f}",
                report.percent(r.seconds.spread),
                per_bone_frame,
                tip,
                angle,
            )
        )
    return report.table(
        (
            "legs",
            "bake",
            "s best",
            "s median",
            "spread",
            "µs/bone-frame",
            "max tip error, mm",
            "max foot angle error, °",
        ),
        rows,
        right=[True, False, True, True, True, True, True, True],
    )


def ratio_table(results: list[Result]) -> tuple[str, bool]:
    by = {(r.legs, r.bake): r for r in results}
    largest = max(r.legs for r in results)
    rows, passed = [], False
    for legs in sorted({r.legs for r in results}):
        ours, blender, play = by[(legs, "LIMB_IK")], by[(legs, "BLENDER")], by[(legs, "PLAY")]
        ratio = blender.seconds.best / ours.seconds.best
        goal = "—"
        if legs == largest:
            passed = ratio >= GOAL
            goal = f">= {GOAL:g}x: {report.verdict(passed)}"
        agree = float(np.linalg.norm(ours.tips - blender.tips, axis=-1).max())
        rows.append(
            (legs, f"{ratio:.2f}x", f"{blender.seconds.best / play.seconds.best:.1f}x", f"{agree * 1e3:.3f}", goal)
        )
    table = report.table(
        (
            "legs",
            "nla.bake / Limb IK bake",
            "best possible ratio (nla.bake / scene evaluation only)",
            "max tip distance between the two bakes, mm",
            "goal",
        ),
        rows,
        right=[True, True, True, True, False],
    )
    return table, passed


def profile_bake(lik, legs: int, top: int = 25) -> str:
    """cProfile of one Limb IK bake, limited to the extension's and numpy's functions."""
    built = scene.build(legs, "LIMB_IK", lik)
    return report.profile(lambda: limb_ik_bake(lik, built), r"limb_ik|numpy|frame_set", top)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="fresh builds, each baked once (default 3)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="numbers of legs (even)")
    parser.add_argument(
        "--profile", action="store_true", help="also print a cProfile of Limb IK's bake at the largest size"
    )
    args = parser.parse_args()
    lik = source_extension.enable()
    frames = scene.FRAMES[1] - scene.FRAMES[0] + 1
    report.header(
        f"Bake: {frames} frames of N legs to keys",
        (
            "the live benchmark's scene; Limb IK keys the rotation of thigh, shin and foot (4 quaternion channels "
            "each); nla.bake keys location, rotation and scale (10 channels each) of the same selected bones",
            f"{args.rounds} rounds, each on a freshly built scene; best and median; spread = slowest / best - 1",
            f"µs/bone-frame = best seconds / (3 x legs x {frames}); errors: the keys played back alone, worst over "
            f"{len(scene.check_frames())} frames and all legs",
        ),
    )
    results = []
    for legs in args.sizes:
        results += measure(lik, legs, args.rounds)
    print(results_table(results), end="\n\n")
    table, passed = ratio_table(results)
    print(table, end="\n\n")
    print(
        f"Goal: Limb IK's bake at least {GOAL:g}x faster than nla.bake at {max(args.sizes)} legs: "
        f"{report.verdict(passed)}",
        flush=True,
    )
    if args.profile:
        print(f"\n### cProfile, Limb IK bake, {max(args.sizes)} legs, {frames} frames\n")
        print("```\n" + profile_bake(lik, max(args.sizes)) + "```", flush=True)
    return 0


if __name__ == "__main__":
    source_extension.leave(main())
