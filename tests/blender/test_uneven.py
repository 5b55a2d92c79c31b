# SPDX-License-Identifier: GPL-3.0-or-later
"""Takes captured on ground that is not flat (issue 20): CMU 03_02, a walk over blocks whose stances stand from
-3 cm to +24 cm, planted on flat ground and on a step; the same take on another rig whose ground is 0.86 m below
its floor setting; CMU 07_12 on that rig, whose floor rises a few centimetres as it goes, on stairs. Measured with
``plant_metrics`` (bone heads and tails, Blender's ray cast) and stances found here from the source ball alone:
nothing of the planting code measures itself."""

import re

import bpy
import numpy as np
import pytest
import rigs

from takes import clips, grounds
from takes import measure as mocap

WALK = clips.SHARED / "mocap" / "tgriebel-mocap-project" / "03_02.bvh"
RETARGETED = clips.SHARED / "mocap" / "iclone-cmu-mocap" / "003_02.bvh"
FLOOR = -0.03  #: 03_02's floor: its right ball rests at -2.7 cm there
LEGS = {"L": ("lThigh", "lShin", "lFoot", None), "R": ("rThigh", "rShin", "rFoot", None)}
#: m/s: a ball slower than this across the ground (over 1/30 s) for 0.1 s stands, if it stays within RISE metres
#: of one height (03_02's left foot rises 8 cm over one such run: it is stepping up, not standing)
SLOW, RISE = 0.3, 0.03
#: Metres a stance's planted ball may be off its height above what it stood on, and the median over the stances:
#: 03_02's right foot creeps up 2 cm while it stands on its second block (frames 55-81; 1.6 cm), the others stand
#: within 2 mm
HEIGHT, MEDIAN = 0.02, 0.003


def _stage(path, scale: float = 0.01) -> tuple[bpy.types.Object, range]:
    bpy.ops.wm.read_homefile(app_template="")
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    bpy.ops.import_anim.bvh(
        filepath=str(path), global_scale=scale, rotate_mode="NATIVE", update_scene_fps=True, update_scene_duration=True
    )
    rig = bpy.context.object
    first, last = (int(round(f)) for f in rig.animation_data.action.frame_range)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = first, last
    return rig, range(first, last + 1)


def _ground(rig, frames, kind: str, name: str, floor: float, feet=("lFoot", "rFoot")) -> bpy.types.Collection:
    """A ground of ``kind`` (:mod:`takes.grounds`) at ``floor`` under the take, in a new collection ``name``."""
    scene = bpy.context.scene
    at = []
    for frame in frames:
        scene.frame_set(frame)
        at.append([rig.matrix_world @ rig.pose.bones[bone].head for bone in feet])
    at = np.array(at, dtype=np.float64)
    collection = bpy.data.collections.new(name)
    scene.collection.children.link(collection)
    grounds.build(kind, at.mean(axis=1), at.reshape(-1, 3), collection, floor)
    return collection


def _stances(source, frames, leg: str, fps: float) -> list[list[int]]:
    """Runs of at least 0.1 s where the source ball moves slower than :data:`SLOW` across the ground, over 1/30 s,
    and stays within :data:`RISE` of one height."""
    span = max(1, round(fps / 30))
    ball = np.array([source[f][leg]["ball"] for f in frames])
    moved = np.zeros((len(ball), 3))
    moved[span:] = (ball[span:] - ball[:-span]) * fps / span
    still = np.linalg.norm(moved[:, :2], axis=1) < SLOW
    still[:span] = False
    runs, start = [], None
    for i, s in enumerate([*still, False]):
        if s and start is None:
            start = i
        elif not s and start is not None:
            if i - start >= 0.1 * fps and np.ptp(ball[start:i, 2]) <= RISE:
                runs.append([frames[k] for k in range(start, i)])
            start = None
    return runs


def _heights(lik, rig, frames, ground: bpy.types.Collection, **plant):
    """Plant ``rig`` on ``ground``; per stance, (source ball height, planted ball height above the ground) at the
    stance's lowest source frame, and the deepest any planted ankle or ball goes into the ground."""
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    source = mocap.plant_metrics.sample(rig, LEGS, frames)
    report = lik.api.plant(rig, ground, **plant)
    assert not report.problems, report.problems
    planted = mocap.plant_metrics.sample(rig, LEGS, frames)
    surface = mocap.plant_metrics.Ground(list(ground.all_objects))
    out = []
    for leg in LEGS:
        for run in _stances(source, frames, leg, fps):
            lowest = min(run, key=lambda f: source[f][leg]["ball"].z)
            ball = planted[lowest][leg]["ball"]
            out.append((leg, lowest, source[lowest][leg]["ball"].z, ball.z - surface.under(ball)[0]))
    depth = max(
        surface.under(planted[f][leg][p])[0] - planted[f][leg][p].z
        for f in frames
        for leg in LEGS
        for p in ("ankle", "ball")
    )
    return out, depth


@pytest.mark.parametrize("kind", ["flat", "step"])
def test_a_walk_over_blocks_stands_at_its_height_above_flat_ground_and_a_step(lik, kind):
    """Every stance of 03_02, on the floor or on a block 13-24 cm up, stands as high above the target as the
    right foot's floor stances stand above the floor (the sole's clearance): the blocks are read from the stances.
    Before, each stance kept its height above the floor: 13-24 cm in the air. Nothing goes into the ground."""
    rig, frames = _stage(WALK)
    rig.limb_ik.floor_height = FLOOR
    ground = _ground(rig, frames, kind, "Ground", FLOOR)
    lik.api.detect_limbs(rig)
    heights, depth = _heights(lik, rig, frames, ground)
    floor_stances = [source - FLOOR for leg, _, source, _ in heights if leg == "R" and source < FLOOR + 0.03]
    clearance = float(np.median(floor_stances))
    raised = [(leg, frame, round(source, 3)) for leg, frame, source, _ in heights if source > FLOOR + 0.1]
    assert len(floor_stances) >= 2 and len(raised) >= 4, heights
    off = [(leg, frame, round(above - clearance, 3)) for leg, frame, _, above in heights]
    assert all(abs(error) <= HEIGHT for _, _, error in off), off
    assert np.median(np.abs([error for _, _, error in off])) <= MEDIAN, off
    assert depth <= 0.005


def test_an_authored_ground_is_what_the_take_stood_on(lik):
    """Given a flat authored ground at the floor (the API's option, kept as the rig's Authored Ground), the take
    is read as standing on it: the stances on blocks keep their height above it, off the target by as much."""
    rig, frames = _stage(WALK)
    rig.limb_ik.floor_height = FLOOR
    ground = _ground(rig, frames, "flat", "Ground", FLOOR)
    authored = _ground(rig, frames, "flat", "Stage", FLOOR)
    lik.api.detect_limbs(rig)
    heights, _ = _heights(lik, rig, frames, ground, authored_ground="Stage")
    assert rig.limb_ik.authored_ground == authored
    for leg, frame, source, above in heights:
        assert abs(above - (source - FLOOR)) <= 0.005, (leg, frame, source, above)


def test_a_take_standing_far_under_its_floor_is_refused_naming_the_leg(lik):
    """003_02 stands 0.86 m under z = 0: with the Authored Floor left at 0 its stances stand on nothing the take
    shows. Planting refuses with a sentence naming the leg and frames, and changes nothing; check names it too.
    With the Authored Floor where the take stands, it plants."""
    rig, frames = _stage(RETARGETED)
    lik.api.detect_limbs(rig)
    feet = ("CC_Base_L_Foot", "CC_Base_R_Foot")
    ground = _ground(rig, frames, "flat", "Ground", 0.0, feet)
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError) as refused:
        lik.api.plant(rig, ground)
    text = str(refused.value)
    assert "stands far under its floor at" in text and "frames from" in text, text
    low = float(re.search(r"the lowest it stands a sole is (-?[\d.]+) m\)", text).group(1))
    assert -0.90 <= low <= -0.84, text  # its lowest stance: the floor the take was captured on
    assert any(f"'{limb.name}'" in text for limb in rig.limb_ik.limbs if limb.plant or "leg" in limb.name), text
    rig.limb_ik.ground = ground
    for limb in lik.api.legs(rig):
        rig.limb_ik.limbs[limb].plant = True
    problems = lik.api.check(rig)
    assert problems and all("stands far under its floor" in p for p in problems.values()), problems
    rig.limb_ik.floor_height = -0.86
    for obj in ground.objects:
        obj.location.z -= 0.86
    assert not lik.api.plant(rig, ground).problems


def test_a_take_whose_floor_rises_a_few_centimetres_stands_still_on_stairs(lik):
    """CMU 07_12 on the Character Creator rig (the brisk walk): its stances stand from 0 to 7 cm above its floor as
    the take goes, its capture floor rising. Planted on stairs, the ball of each of its stances (:func:`_stances`,
    less its first and last frames: where a foot lands and leaves is planting's to say, within a frame) moves no
    more than the source's does over it, give or take 1 cm. Before, a stance 3-6 cm up, off the floor's contact band
    and too low for a block, was read as a swing, and its foot was carried 407 mm up the steps as it stood."""
    rig, frames, ground = clips.stage("iclone_brisk_walk", "stairs")
    legs = clips.CLIPS["iclone_brisk_walk"].legs
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    source = mocap.plant_metrics.sample(rig, legs, frames)
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    planted = mocap.plant_metrics.sample(rig, legs, frames)
    moved = []
    for leg in legs:
        for run in (run[1:-1] for run in _stances(source, frames, leg, fps)):
            spread = {
                name: max((sample[f][leg]["ball"] - sample[run[0]][leg]["ball"]).length for f in run)
                for name, sample in (("source", source), ("planted", planted))
            }
            moved.append((leg, run[0], run[-1], round(spread["planted"] - spread["source"], 3)))
    assert len(moved) >= 6 and all(extra <= 0.01 for *_, extra in moved), moved
