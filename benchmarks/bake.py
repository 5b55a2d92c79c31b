# SPDX-License-Identifier: GPL-3.0-or-later
"""How long baking leg IK to keys takes: Limb IK's bake against Blender's ``nla.bake``, in one run.

    ~/.cache/limb_ik/venv-blender-5.2/bin/python benchmarks/bake.py [--rounds 3] [--profile]

1. For 2, 20 and 100 legs over 250 frames and 20 legs over 2500 (``scene.py``): Limb IK's bake
   (``rig.bake.bake``, what the Bake operator runs) of a rig with one limb per leg, with the way it
   read the animation (F-curves in bulk, or the scene stepped), and Blender's Bake Action
   (``bpy.ops.nla.bake``, visual keying, selected bones, pose only) of the same motion driven by
   Blender's IK constraints (Legacy solver). Also timed: playing the frames with no IK, which any
   bake that lets Blender evaluate every frame pays. Each bake is then played back alone (live
   solving off, constraints muted) to show that both keyed the same, correct motion.
2. A 10-frame bake on a rig whose action holds 100,000 keys on every channel of its legs, both bakes.
3. Planting and baking the 3070-frame boxing capture (``../shared/mocap``) on a step (``api.plant``),
   against the clip's own duration and against stepping Blender through its frames.
"""

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCHMARKS.parent), str(BENCHMARKS.parent / "tools"), str(BENCHMARKS.parent / "tests" / "blender")]

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, I001
import numpy as np  # noqa: E402
from bpy_extras import anim_utils  # noqa: E402
import report  # noqa: E402
import rigs  # noqa: E402
import scene  # noqa: E402

CASES = ((2, 250), (20, 250), (100, 250), (20, 2500))  #: (legs, frames)
GOALS = {(100, 250): 6.0, (2, 250): 2.0}  #: issue goals: Limb IK's bake at least this many times faster than nla.bake
LONG_KEYS, LONG_RANGE, LONG_GOAL = 100_000, (50_000, 50_009), 0.050  #: keys per channel, frames baked, seconds
BOXING = ("boxing", "step")  #: clip and ground of ``takes/clips.py`` and ``takes/grounds.py``
BAKES = ("PLAY", "LIMB_IK", "BLENDER")
LABELS = {
    "PLAY": "scene evaluation only (`frame_set` each frame, no IK, no keys)",
    "LIMB_IK": "Limb IK bake (`rig.bake.bake`)",
    "BLENDER": "Blender `nla.bake`, Legacy IK constraints, visual keying",
}
SETUP = {"PLAY": "FK", "LIMB_IK": "LIMB_IK", "BLENDER": "LEGACY"}


@dataclass
class Result:
    legs: int
    frames: int
    bake: str
    seconds: report.Timing
    path: str  #: how Limb IK read the animation
    tips: np.ndarray | None  #: (frames, legs, 3) baked tip positions at the checked frames
    errors: tuple[float, float] | None  #: worst tip distance (m) and foot angle (degrees) there

    @property
    def bone_frames(self) -> int:
        return 3 * self.legs * self.frames


def play_all(frames: tuple[int, int]) -> None:
    for frame in range(frames[0], frames[1] + 1):
        bpy.context.scene.frame_set(frame)


def limb_ik_bake(lik, legs: scene.LegScene, frames: tuple[int, int]):
    """Limb IK's bake of the frames, as the Bake operator runs it; its report."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return lik.rig.bake.bake(legs.rig, depsgraph, frame_start=frames[0], frame_end=frames[1])


def prepare_blender_bake(legs: scene.LegScene) -> None:
    """Pose Mode on the rig with exactly the leg bones selected, as an animator would call Bake Action."""
    bpy.context.view_layer.objects.active = legs.rig
    legs.rig.select_set(True)
    bpy.ops.object.mode_set(mode="POSE")
    rigs.select_bones(legs.rig, legs.bones, legs.bones[-1])


def blender_bake(frames: tuple[int, int]) -> None:
    result = bpy.ops.nla.bake(
        frame_start=frames[0], frame_end=frames[1], visual_keying=True, only_selected=True, bake_types={"POSE"}
    )
    if result != {"FINISHED"}:
        raise RuntimeError(f"nla.bake returned {result}")


def timed_bake(lik, legs: int, frames: tuple[int, int], bake: str) -> tuple[float, scene.LegScene, str]:
    built = scene.build(legs, SETUP[bake], lik, frames)
    if bake == "BLENDER":
        prepare_blender_bake(built)
    path = ""
    began = time.perf_counter()
    if bake == "PLAY":
        play_all(frames)
    elif bake == "LIMB_IK":
        path = limb_ik_bake(lik, built, frames).path
    else:
        blender_bake(frames)
    return time.perf_counter() - began, built, path


def played_back(legs: scene.LegScene, bake: str, frames) -> tuple[np.ndarray, tuple[float, float]]:
    """Tip positions and worst errors at the checked frames, playing the keys alone."""
    if bake == "BLENDER":
        scene.set_constraints_enabled(legs, False)
    elif legs.rig.limb_ik.live:
        raise RuntimeError("the bake left live solving on, so playback would not show the keys alone")
    tips, worst = [], [0.0, 0.0]
    for frame in scene.check_frames(frames=frames):
        bpy.context.scene.frame_set(frame)
        tips.append(scene.tip_positions(legs))
        worst = [max(w, e) for w, e in zip(worst, scene.goal_errors(legs))]
    return np.array(tips), (worst[0], worst[1])


def measure(lik, legs: int, count: int, rounds: int) -> list[Result]:
    """Every bake of one case. Rounds interleave the bakes, so a busy spell on the machine slows one
    round of each rather than every round of one; the last round's keys are played back."""
    frames = (1, count)
    runs: dict[str, list[float]] = {bake: [] for bake in BAKES}
    paths: dict[str, str] = dict.fromkeys(BAKES, "")
    checked: dict[str, tuple] = dict.fromkeys(BAKES, (None, None))
    for round_number in range(rounds):
        for bake in BAKES:
            seconds, built, paths[bake] = timed_bake(lik, legs, frames, bake)
            runs[bake].append(seconds)
            if round_number == rounds - 1 and bake != "PLAY":
                checked[bake] = played_back(built, bake, frames)
    return [Result(legs, count, bake, report.Timing(tuple(runs[bake])), paths[bake], *checked[bake]) for bake in BAKES]


def results_table(results: list[Result]) -> str:
    rows = []
    for r in results:
        tip, angle = ("—", "—") if r.errors is None else (f"{r.errors[0] * 1e3:.3f}", f"{r.errors[1]:.3f}")
        per_bone_frame = f"{r.seconds.best / r.bone_frames * 1e6:.1f}"
        rows.append(
            (
                r.legs,
                r.frames,
                LABELS[r.bake],
                r.path or "—",
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
            "frames",
            "bake",
            "path",
            "s best",
            "s median",
            "spread",
            "µs/bone-frame",
            "max tip error, mm",
            "max foot angle error, °",
        ),
        rows,
        right=[True, True, False, False, True, True, True, True, True, True],
    )


def ratio_table(results: list[Result]) -> tuple[str, list[str]]:
    by = {(r.legs, r.frames, r.bake): r for r in results}
    rows, verdicts = [], []
    for legs, count in sorted({(r.legs, r.frames) for r in results}, key=lambda case: (case[1], case[0])):
        ours, blender, play = (by[(legs, count, bake)] for bake in ("LIMB_IK", "BLENDER", "PLAY"))
        ratio = blender.seconds.best / ours.seconds.best
        goal = "—"
        if (legs, count) in GOALS:
            passed = ratio >= GOALS[(legs, count)]
            goal = f">= {GOALS[(legs, count)]:g}x: {report.verdict(passed)}"
            verdicts.append(
                f"{legs} legs x {count} frames, at least {GOALS[(legs, count)]:g}x nla.bake: "
                f"{ratio:.2f}x, {report.verdict(passed)}"
            )
        agree = float(np.linalg.norm(ours.tips - blender.tips, axis=-1).max())
        rows.append(
            (
                legs,
                count,
                ours.path,
                f"{ratio:.2f}x",
                f"{blender.seconds.best / play.seconds.best:.1f}x",
                f"{agree * 1e3:.3f}",
                goal,
            )
        )
    table = report.table(
        (
            "legs",
            "frames",
            "Limb IK's path",
            "nla.bake / Limb IK bake",
            "nla.bake / scene evaluation only (a stepping bake's best)",
            "max tip distance between the two bakes, mm",
            "goal",
        ),
        rows,
        right=[True, True, False, True, True, True, False],
    )
    return table, verdicts


def long_action(legs: scene.LegScene) -> None:
    """Give the rig an action holding :data:`LONG_KEYS` keys, one a frame, on every rotation channel of its legs."""
    rig = legs.rig
    frames = np.arange(1, LONG_KEYS + 1, dtype=np.float64)
    for name in legs.bones:
        bone = rig.pose.bones[name]
        bone.keyframe_insert("rotation_quaternion", frame=1.0, group=name)
    data = rig.animation_data
    curves = anim_utils.action_get_channelbag_for_slot(data.action, data.action_slot).fcurves
    for curve in curves:
        wobble = 0.02 * np.sin(frames / 40.0 + curve.array_index)
        values = (1.0 if curve.array_index == 0 else 0.0) + wobble
        points = curve.keyframe_points
        points.add(LONG_KEYS - len(points))
        points.foreach_set("co", np.column_stack([frames, values]).astype(np.float32).ravel())
        curve.update()
    bpy.context.scene.frame_set(LONG_RANGE[0])  # evaluated once, as a file being worked on is before a bake


def long_action_bakes(lik, rounds: int) -> tuple[list[str], bool]:
    """The 10-frame bakes on the long action, best of ``rounds`` fresh builds each."""
    times: dict[str, list[float]] = {"LIMB_IK": [], "BLENDER": []}
    path, keys = "", 0
    for _ in range(rounds):
        for bake in times:
            built = scene.build(2, SETUP[bake], lik)
            long_action(built)
            if bake == "BLENDER":
                prepare_blender_bake(built)
            began = time.perf_counter()
            if bake == "LIMB_IK":
                result = limb_ik_bake(lik, built, LONG_RANGE)
                path, keys = result.path, result.keys
            else:
                blender_bake(LONG_RANGE)
            times[bake].append(time.perf_counter() - began)
    ours, blender = min(times["LIMB_IK"]), min(times["BLENDER"])
    passed = ours <= LONG_GOAL
    return [
        f"action: {LONG_KEYS:,} keys on each of the 24 rotation channels of 2 legs; frames {LONG_RANGE[0]}-"
        f"{LONG_RANGE[1]} baked, best of {rounds}",
        f"Limb IK bake ({path}, {keys} keys written): {1e3 * ours:.1f} ms; goal <= {1e3 * LONG_GOAL:.0f} ms: "
        f"{report.verdict(passed)}",
        f"Blender `nla.bake` of the same frames (Legacy IK, visual keying): {1e3 * blender:.1f} ms",
    ], passed


def boxing(lik) -> list[str]:
    """Planting and baking the boxing capture, against its duration and stepping Blender through it."""
    from takes import clips

    with report.quiet():
        rig, frames, collection = clips.stage(*BOXING)
        lik.api.detect_limbs(rig)
    duration = len(frames) / (bpy.context.scene.render.fps / bpy.context.scene.render.fps_base)
    began = time.perf_counter()
    play_all((frames[0], frames[-1]))
    stepping = time.perf_counter() - began
    began = time.perf_counter()
    with report.quiet():
        result = lik.api.plant(rig, collection)
    seconds = time.perf_counter() - began
    return [
        f"the {len(frames)}-frame {BOXING[0]} capture ({duration:.1f} s of motion at "
        f"{bpy.context.scene.render.fps} fps) planted on a {BOXING[1]} and baked by `api.plant` (the analysis of the "
        f"whole take, the solve, {result.keys} keys): {seconds:.2f} s, {seconds / duration:.3f} of the clip's "
        f"duration; path: {result.path}",
        f"Blender stepping through the clip's frames alone (`frame_set`, no IK): {stepping:.2f} s",
        f"why that path: {result.why}",
    ]


def profile_bake(lik, legs: int, frames: int, top: int = 25) -> str:
    """cProfile of one Limb IK bake, limited to the extension's and numpy's functions."""
    built = scene.build(legs, "LIMB_IK", lik, (1, frames))
    return report.profile(lambda: limb_ik_bake(lik, built, (1, frames)), r"limb_ik|numpy|frame_set", top)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="fresh builds, each baked once (default 3)")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of Limb IK's bake, 100 legs")
    parser.add_argument("--skip", nargs="*", default=[], choices=["cases", "long", "boxing"], help="sections to skip")
    parser.add_argument(
        "--cases",
        nargs="+",
        default=[f"{legs}x{frames}" for legs, frames in CASES],
        help="legs x frames to bake (default: %(default)s)",
    )
    args = parser.parse_args()
    lik = source_extension.enable()
    report.header(
        "Bake: N legs over F frames to keys; a short bake on a long action; planting a capture",
        (
            "the live benchmark's scene; Limb IK keys the rotation of thigh, shin and foot (4 quaternion channels "
            "each); nla.bake keys location, rotation and scale (10 channels each) of the same selected bones",
            "path: how Limb IK read the animation, 'bulk' (F-curves evaluated at once, checked against Blender at "
            "five frames) or 'stepped' (Blender evaluating each frame)",
            f"{args.rounds} rounds, each on a freshly built scene; best and median; spread = slowest / best - 1",
            "µs/bone-frame = best seconds / (3 x legs x frames); errors: the keys played back alone, worst over "
            "6 frames and all legs",
        ),
    )
    verdicts = []
    if "cases" not in args.skip:
        results = []
        for case in args.cases:
            legs, frames = (int(part) for part in case.split("x"))
            results += measure(lik, legs, frames, args.rounds)
        print(results_table(results), end="\n\n")
        table, verdicts = ratio_table(results)
        print(table, end="\n\n", flush=True)
    if "long" not in args.skip:
        lines, passed = long_action_bakes(lik, args.rounds)
        print("\n".join(f"- {line}" for line in lines), end="\n\n", flush=True)
        verdicts.append(
            f"10 frames on a {LONG_KEYS:,}-key action within {1e3 * LONG_GOAL:.0f} ms: {report.verdict(passed)}"
        )
    if "boxing" not in args.skip:
        print("\n".join(f"- {line}" for line in boxing(lik)), end="\n\n", flush=True)
    for verdict in verdicts:
        print(f"Goal: {verdict}", flush=True)
    if args.profile:
        print("\n### cProfile, Limb IK bake, 100 legs, 250 frames\n")
        print("```\n" + profile_bake(lik, 100, 250) + "```", flush=True)
    return 0


if __name__ == "__main__":
    source_extension.leave(main())
