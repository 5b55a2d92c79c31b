# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting on real motion capture and keyed animals, measured independently.

    ~/.cache/limb_ik/venv-blender-5.2/bin/python benchmarks/planting.py [--set first|second|all] [--only boxing walk]
        [--pelvis-modes] [--grounds stairs descent step_down steep across] [--backwards] [--other-actions]
        [--pelvis-mode AVERAGE|FRONT_UPHILL|LOWEST] [--no-lock] [--bone-option BLENDER|TEMPERANCE|FORTUNE]

Every clip of ``../shared/mocap`` is staged on each ground (``takes/grounds.py``), its legs found
by Detect Limbs, planted and baked by ``api.plant``, and measured by
``../shared/tools/plant_metrics.py``, which uses nothing of Limb IK's: contacts from the source
motion, bone heads and tails, Blender's ray cast. Then the cost of live planting on the longest
clip: the analysis of the whole take, and a frame. With ``--pelvis-modes``, only a table of every pelvis mode
(the rig's *Pelvis* setting) on the slope and the step for the human clips. With ``--grounds``, every clip on those
grounds instead, such as the ones planting was not developed on; with ``--backwards``, every clip played from its
last frame to its first; with ``--other-actions``, instead of the clips, the actions of the second set's glTF rigs that
no clip plays (idles, attacks, jumps: takes nobody here had planted). ``--pelvis-mode`` and ``--no-lock`` plant
every row with that Pelvis mode, or without the Foot Lock, instead of the rig's defaults; ``--bone-option`` imports
the glTF characters with that Bone Dir option (the bones' tails the importer guesses).
"""

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCHMARKS.parent), str(BENCHMARKS.parent / "tools")]

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, I001  (bpy first: it puts addon_utils on the path)
import report  # noqa: E402

from takes import clips, grounds, measure  # noqa: E402

HUMAN_GROUNDS = ("slope", "step", "rough", "boulders", "flat")
QUADRUPED_GROUNDS = ("slope", "step", "rough", "flat")  #: and the second set's clips
LIMITS = (
    "in contact, the ball's height above the surface off its authored height above the floor: p95 ≤ 10 mm, "
    "median ≤ 5 mm; nothing above the floor in the source deeper than 5 mm into the surface; in contact, pitch "
    "against the surface off the authored pitch against the floor ≤ 5° (p95); the knee never turns more than 10° "
    "in one frame beyond the source's turn; stance slide ≤ 5 mm (humans; the quadrupeds' in-place cycles: height "
    "and depth only); the animals are held to the human limits too, but for the slide of an in-place cycle; "
    "jump: no limit set, reported"
)


def row(
    name: str, ground: str, backwards: bool = False, mode: str | None = None, lock: bool = True, bones: str = "BLENDER"
) -> list:
    label = f"{name} (backwards)" if backwards else name
    try:
        result = measure.planted(name, ground, lock=lock, pelvis_mode=mode, backwards=backwards, bone_heuristic=bones)
    except measure.extension().api.LimbIKError as error:  # what planting says instead, once for every ground
        return [label, "any", f"{measure.fps():.0f}", *["–"] * 11, f"not planted: {error}", "all"]
    f, frames = result["figures"], result["frames"]
    missed = measure.over(f, measure.limits(name))
    return [
        label,
        ground,
        f"{measure.fps():.0f}",
        len(frames),
        f["contact_frames"],
        f"{1e3 * f['ball_height_p95']:.1f}",
        f"{1e3 * f['ball_height_median']:.1f}",
        f"{1e3 * f['deepest']:.1f}",
        f"{f['pitch_p95_deg']:.1f}",
        f"{f['knee_pop_deg']:.1f}",
        "–" if clips.CLIPS[name].in_place else f"{1e3 * f['stance_slide']:.1f}",
        f"{1e3 * f['pelvis_drop']:.0f}",
        f"{1e3 * f['jump']:.0f}",
        f"{result['seconds']:.2f}",
        ", ".join(missed) or "–",
        ", ".join(sorted({**result["bake"].problems, **result["bake"].warnings})) or "–",
    ]


def said(rows) -> str:
    """How many of the planted rows beyond a limit (and beyond the knee's) the bake named a leg in: what it
    reports as a problem or a warning, against what the independent measure finds."""
    planted = [r for r in rows if r[1] != "any"]
    beyond = [r for r in planted if r[-2] != "–"]
    knees = [r for r in beyond if "knee_pop_deg" in r[-2]]
    named = [r for r in planted if r[-1] != "–"]
    return (
        f"- rows beyond a limit: {len(beyond)} of {len(planted)}; the bake named a leg in "
        f"{sum(r in named for r in beyond)} of them; beyond the knee limit: {len(knees)}, named in "
        f"{sum(r in named for r in knees)}; rows within every limit where the bake named a leg: "
        f"{sum(r not in beyond for r in named)}"
    )


#: Millimetres a loop's planted keys may move between its last frame and its first (a loop whose last frame is its
#: first again plays on repeat without a jump; planted, neither should it).
SEAM = 5.0


def seams(rows, args) -> str:
    """The rows whose take is a loop (its last frame is its first again) and what the planted keys jump by at the seam
    when it plays on repeat (:func:`takes.measure.seam`), in a table with a count of those beyond :data:`SEAM`."""
    looped = []
    for r in (r for r in rows if r[1] != "any"):
        options = dict(lock=not args.no_lock, pelvis_mode=args.pelvis_mode, backwards=args.backwards)
        name = r[0].removesuffix(" (backwards)")
        figure = measure.planted(name, r[1], **options, bone_heuristic=args.bone_option)["figures"]["seam"]
        if not math.isnan(figure):
            looped.append([r[0], r[1], f"{1e3 * figure:.1f}"])
    if not looped:
        return "- no take here is a loop whose last frame is its first again"
    beyond = [float(r[2]) for r in looped if float(r[2]) > SEAM]
    return (
        "Loops (the take's last frame is its first again): the most any foot point's planted last frame is from its "
        "first (mm), what the planted take jumps by at the seam when it plays on repeat\n\n"
        + report.table(["clip", "ground", "seam"], looped, right=[False, False, True])
        + f"\n\n- loops: {len(looped)} rows; the planted seam is beyond {SEAM:.0f} mm in {len(beyond)}"
        + (f" (up to {max(beyond):.1f} mm)" if beyond else "")
    )


#: Actions of the second set's glTF rigs that no clip plays, by the clip whose rig plays them (``--other-actions``).
OTHER_ACTIONS = {
    "quaternius_horse": ("Idle", "Eating", "Gallop_Jump", "Attack_Kick"),
    "quaternius_wolf": ("Idle", "Gallop_Jump", "Attack"),
    "quaternius_stag": ("Attack_Kick",),
    "knight": ("Idle", "Jump", "Run_swordAttack"),
    "leela": ("Idle", "Dance", "Kick", "Jump"),
}


def other_actions() -> list[str]:
    """The clips of :data:`OTHER_ACTIONS`, added to ``clips.CLIPS`` for this run: their names."""
    names = []
    for base, actions in OTHER_ACTIONS.items():
        clip = clips.CLIPS[base]
        armature = clip.action.rpartition("|")[0]  # a glTF action is named after its armature, if at all
        for action in actions:
            name = f"{base}_{action.lower()}"
            clips.CLIPS[name] = dataclasses.replace(clip, action=f"{armature}|{action}" if armature else action)
            names.append(name)
    return names


MODE_GROUNDS = ("slope", "step", "course")  # the course: the demo's 15° ramp and 20 cm step


def mode_row(name: str, ground: str, mode: str) -> list:
    f = measure.planted(name, ground, pelvis_mode=mode)["figures"]
    return [
        name,
        ground,
        mode,
        f"{1e3 * f['pelvis_drop']:.0f}",
        f"{f['knee_pop_deg']:.1f}",
        f"{1e3 * f['ball_height_p95']:.1f}",
        f"{1e3 * f['ball_height_median']:.1f}",
        f"{f['pitch_p95_deg']:.1f}",
        f"{1e3 * f['deepest']:.1f}",
        f"{1e3 * f['stance_slide']:.1f}",
        ", ".join(measure.over(f, measure.LIMITS)) or "–",
    ]


def pelvis_modes(lik, names) -> str:
    """Every pelvis mode on the slope and the step, for the human clips among ``names``."""
    modes = [item.identifier for item in lik.properties.LIMB_IK_PG_rig.bl_rna.properties["pelvis_mode"].enum_items]
    rows = []
    for name in [n for n in names if clips.CLIPS[n].kind == "human"]:
        for ground in MODE_GROUNDS:
            for mode in modes:
                with report.quiet():
                    rows.append(mode_row(name, ground, mode))
                print(f"measured {name} on {ground} with {mode}", file=sys.stderr, flush=True)
    headings = ["clip", "ground", "pelvis mode", "pelvis", "knee", "ball p95", "ball median", "pitch", "deepest"]
    return report.table([*headings, "slide", "beyond the limits"], rows, right=[False] * 3 + [True] * 7 + [False])


def live_cost(lik, name: str = "boxing", ground: str = "step") -> list[str]:
    """Live planting on the longest clip: the first frame analyses the take, later ones look it up."""
    rig, frames, collection = clips.stage(name, ground)
    lik.api.detect_limbs(rig)
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.enabled = "leg" in limb.name
    rig.limb_ik.ground = collection
    scene = bpy.context.scene
    began = time.perf_counter()
    rig.limb_ik.live = True  # solves the current frame: the analysis of the whole take
    analysis = time.perf_counter() - began
    sample = list(frames[100:400])
    began = time.perf_counter()
    for frame in sample:
        scene.frame_set(frame)
    per_frame = (time.perf_counter() - began) / len(sample)
    duration = len(frames) / measure.fps()
    return [
        f"analysing the {len(frames)}-frame {name} take ({duration:.1f} s of motion) when Live is switched on: "
        f"{analysis:.2f} s ({analysis / duration:.3f} of its duration)",
        f"then a frame of live planting (lookup, two-leg solve, write): {1e3 * per_frame:.2f} ms",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=("first", "second", "all"), default="all", help="which set of clips")
    parser.add_argument("--only", nargs="+", choices=list(clips.CLIPS), help="these clips (default: the set's)")
    parser.add_argument(
        "--pelvis-modes", action="store_true", help="only the table of every pelvis mode on the slope and the step"
    )
    parser.add_argument(
        "--grounds",
        nargs="+",
        choices=[kind for kind in grounds.KINDS if kind != "course"],
        help="these grounds for every clip (default: slope, step, rough and flat, and boulders for the first set's "
        "humans); stairs, descent, step_down, steep and across are grounds planting was not developed on",
    )
    parser.add_argument(
        "--backwards", action="store_true", help="every clip played from its last frame to its first: takes nobody made"
    )
    parser.add_argument(
        "--pelvis-mode",
        choices=("AVERAGE", "FRONT_UPHILL", "LOWEST"),
        help="the rig's Pelvis mode for every row (default: the rig's default)",
    )
    parser.add_argument("--no-lock", action="store_true", help="Foot Lock off for every row")
    parser.add_argument(
        "--bone-option",
        choices=("BLENDER", "TEMPERANCE", "FORTUNE"),
        default="BLENDER",
        help="the glTF importer's Bone Dir option for the glTF characters (their bones' tails; default: Blender's)",
    )
    parser.add_argument(
        "--other-actions",
        action="store_true",
        help="the glTF rigs' actions that no clip plays, instead of the clips: takes nobody here had planted",
    )
    args = parser.parse_args()
    names = args.only or [n for n, c in clips.CLIPS.items() if args.set in ("all", c.part)]
    if args.other_actions:
        names = other_actions()
    with report.quiet():
        lik = source_extension.enable()
    report.header(
        "Foot planting on real motion, measured independently",
        (
            "figures by ../shared/tools/plant_metrics.py: contacts from the source motion (the ball within 3 cm "
            "of its lowest and slower than 0.3 m/s; in-place quadruped cycles: by height alone), positions "
            "from bone heads and tails, the ground by Blender's ray cast",
            "ball height: p95 and median (mm); deepest: any ankle or ball (mm); pitch: p95 (°); knee: the most "
            "it turns in one frame beyond the source's turn (°); slide: in one contact (mm; none for an in-place "
            "cycle, whose standing feet slide by design); pelvis: the most it "
            "sits lower above the ground than authored above the floor (mm); jump: the most any foot point (the "
            "foot's and toe's heads and tails) moves in one frame beyond its move in the source (mm); plant: seconds "
            "of `api.plant` (analysis of the take, solve, keys); glTF characters: the ball is the lowest vertex "
            "of the skinned foot (plant_metrics.sample_sole)",
            f"limits: {LIMITS}",
            f"settings: Pelvis {args.pelvis_mode or 'the rig default'}, Foot Lock {'off' if args.no_lock else 'on'}, "
            f"glTF bone option {args.bone_option}",
        ),
    )
    if args.pelvis_modes:
        print(pelvis_modes(lik, names), flush=True)
        return 0
    headings = [
        "clip",
        "ground",
        "fps",
        "frames",
        "contacts",
        "ball p95",
        "ball median",
        "deepest",
        "pitch",
        "knee",
        "slide",
        "pelvis",
        "jump",
        "plant s",
        "beyond the limits",
        "named by the bake",
    ]
    rows = []
    for name in names:
        first_human = clips.CLIPS[name].kind == "human" and clips.CLIPS[name].part == "first"
        for ground in args.grounds or (HUMAN_GROUNDS if first_human else QUADRUPED_GROUNDS):
            with report.quiet():
                rows.append(row(name, ground, args.backwards, args.pelvis_mode, not args.no_lock, args.bone_option))
            print(f"measured {name} on {ground}", file=sys.stderr, flush=True)
            if rows[-1][1] == "any":
                break
    print(report.table(headings, rows, right=[False, False] + [True] * 12 + [False, False]), flush=True)
    print("\n" + said(rows), flush=True)
    print("\n" + seams(rows, args), flush=True)
    if "boxing" in names:
        with report.quiet():
            lines = live_cost(lik)
        print("\n" + "\n".join(f"- {line}" for line in lines), flush=True)
    return 0


if __name__ == "__main__":
    source_extension.leave(main())
