# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting: motions keyed on flat ground, planted on a 15° ramp and a 20 cm step, baked.

Each motion is built, planted and baked once (:func:`demo.measure.plant_and_measure`); the tests
below read the cached figures. The surface is measured with Blender's own ``scene.ray_cast``, not
the planting code's ground, and stance comes from the motion's own ground truth. Motions run at
60 fps, a usual motion-capture rate (``benchmarks/planting.py`` prints the same walk at 24 fps).
"""

import functools
from importlib import import_module

import bpy
import numpy as np
import pytest
import rigs

from demo import measure

STANCE_DISTANCE = 0.01  # in stance the sole is within 1 cm of the surface
PENETRATION = 0.005  # nowhere deeper than 5 mm
NORMAL_ANGLE = 5.0  # degrees between sole and surface, in stance
KNEE_CHANGE = 10.0  # degrees between two frames
SLIDE = 0.005  # stance slide with foot lock
PELVIS = 0.05  # pelvis height above the ground vs. its authored height above the floor
FLAT_CHANGE = 0.001  # on flat ground at the authored height, planting moves no bone more
FPS = 60
MOTIONS = ["walk", "jog"]


@functools.cache
def planted(gait: str, ground_kind: str = "terrain") -> dict:
    """Authored and baked samples of one motion. Cached: plain arrays survive the scene resets."""
    return measure.plant_and_measure(import_module("bl_ext.limb_ik_dev.limb_ik"), gait, ground_kind, FPS)


@functools.cache
def figures(gait: str, ground_kind: str = "terrain") -> measure.Figures:
    return measure.figures(planted(gait, ground_kind))


@pytest.mark.parametrize("gait", MOTIONS)
def test_in_stance_the_sole_is_on_the_surface(gait):
    assert figures(gait).stance_distance <= STANCE_DISTANCE


@pytest.mark.parametrize("gait", MOTIONS)
def test_no_sole_point_goes_into_the_ground(gait):
    assert figures(gait).penetration <= PENETRATION


@pytest.mark.parametrize("gait", MOTIONS)
def test_in_stance_the_sole_lies_along_the_surface(gait):
    result = planted(gait)
    gap = np.abs(result["baked"]["soles"][..., :2, 2] - result["baked"]["surface"][..., :2]).max(axis=2)
    assert (result["stance"] & (gap <= 0.01)).sum() > 0.3 * result["stance"].sum()  # the feet do stand flat
    assert figures(gait).normal_angle <= NORMAL_ANGLE


@pytest.mark.parametrize("gait", MOTIONS)
def test_knees_do_not_jump(gait):
    assert figures(gait).knee_change <= KNEE_CHANGE


@pytest.mark.parametrize("gait", MOTIONS)
def test_standing_feet_do_not_slide(gait):
    assert figures(gait).slide <= SLIDE


@pytest.mark.parametrize("gait", MOTIONS)
def test_pelvis_keeps_its_height_above_the_ground(gait):
    assert figures(gait).pelvis_change <= PELVIS
    assert planted(gait)["report"].pelvis_drop <= PELVIS


@pytest.mark.parametrize("gait", MOTIONS)
def test_pelvis_drops_only_where_a_standing_leg_needs_it(gait):
    """Wherever the pelvis sits clearly lower than ground-following puts it, some standing leg is
    near full stretch within the smoothing's reach (the drop eases in and out: a widened maximum
    of 2 sigma, then a Gaussian of 3 sigma): the drop was needed there."""
    result = planted(gait)
    report, baked = result["report"], result["baked"]
    drop = report.authored_pelvis - report.pelvis_above_ground
    near_limit = (baked["stretch"] >= 0.98) & result["contact"]
    window = int(5 * measure.SMOOTHING * FPS)
    for frame in np.flatnonzero(drop > 0.01):
        nearby = near_limit[max(0, frame - window) : frame + window + 1]
        assert nearby.any(), f"frame {frame}: pelvis {1e3 * drop[frame]:.0f} mm low with no leg at full stretch"


@pytest.mark.parametrize("gait", MOTIONS)
def test_on_flat_ground_at_the_authored_height_nothing_moves(gait):
    assert figures(gait, "flat").flat_change <= FLAT_CHANGE


def test_feet_stand_on_the_evaluated_ground_with_modifiers():
    rough = figures("walk", "rough")
    assert rough.stance_distance <= STANCE_DISTANCE
    assert rough.penetration <= PENETRATION
    assert rough.normal_angle <= NORMAL_ANGLE  # its faces face down: the sole still lies along it


def test_live_planting_puts_standing_feet_on_the_surface(lik):
    rig, keyed = measure.keyed_scene("walk", "terrain", FPS)
    rig.limb_ik.live = True
    live = measure.sample(lik, rig, keyed)
    stance = np.stack([measure.frames_of(keyed.stance[s], keyed) for s in ("L", "R")], axis=1)
    gap = live["soles"][..., 2] - live["surface"]
    assert -gap.min() <= PENETRATION
    assert np.abs(gap).min(axis=2)[stance].max() <= STANCE_DISTANCE


@pytest.mark.parametrize("lock", [True, False])
def test_foot_lock_holds_feet_the_animation_lets_slide(lik, lock):
    """The whole rig drifts sideways at 3 cm/s, so every standing foot slides in the animation."""
    rig, keyed = measure.keyed_scene("walk", "flat", FPS)
    preferences = bpy.context.preferences.edit
    interpolation, preferences.keyframe_new_interpolation_type = preferences.keyframe_new_interpolation_type, "LINEAR"
    try:  # a steady drift
        for frame in (keyed.frame_start, keyed.frame_end):
            rig.location.x = 0.03 * (frame - keyed.frame_start) / FPS
            rig.keyframe_insert("location", index=0, frame=frame)
    finally:
        preferences.keyframe_new_interpolation_type = interpolation
    rig.limb_ik.use_foot_lock = lock
    contact = np.stack([measure.frames_of(keyed.contact[s], keyed) for s in ("L", "R")], axis=1)
    authored = measure.sample(lik, rig, keyed)
    lik.api.plant(rig)
    baked = measure.sample(lik, rig, keyed)
    slid = measure.slide(authored, authored, contact, keyed.floor)
    assert slid >= 0.01  # the animation does slide
    if lock:
        assert measure.slide(authored, baked, contact, keyed.floor) <= SLIDE
    else:
        assert measure.slide(authored, baked, contact, keyed.floor) >= 0.5 * slid


def _unchanged(rig, action):
    before = rigs.pose_snapshot(rig)
    limbs = rigs.limbs_table(rig)
    with pytest.raises(RuntimeError) as raised:
        action()
    assert np.array_equal(before, rigs.pose_snapshot(rig)) and limbs == rigs.limbs_table(rig)
    return str(raised.value)


def test_planting_without_ground_says_so(lik):
    rig, _ = measure.keyed_scene("walk", "flat", FPS)
    rig.limb_ik.ground = None
    message = _unchanged(rig, bpy.ops.limb_ik.solve)
    assert "no ground collection" in message


def test_planting_a_two_bone_leg_says_it_needs_a_foot(lik):
    rig, _ = measure.keyed_scene("walk", "flat", FPS)
    rig.limb_ik.limbs["leg.L"].end_bone = ""
    message = _unchanged(rig, bpy.ops.limb_ik.solve)
    assert "leg.L" in message and "planting needs thigh, shin and foot" in message


def test_a_toe_that_is_not_below_the_foot_is_refused(lik):
    rig, _ = measure.keyed_scene("walk", "flat", FPS)
    rig.limb_ik.limbs["leg.L"].toe_bone = "hand.L"
    message = _unchanged(rig, bpy.ops.limb_ik.solve)
    assert "toe bone 'hand.L' is not a child of the foot" in message


def test_a_ground_without_a_mesh_is_refused(lik):
    rig, _ = measure.keyed_scene("walk", "flat", FPS)
    empty_ground = bpy.data.collections.new("Nothing")
    bpy.context.scene.collection.children.link(empty_ground)
    empty_ground.objects.link(rigs.empty("Marker"))
    rig.limb_ik.ground = empty_ground
    message = _unchanged(rig, bpy.ops.limb_ik.solve)
    assert "has no mesh to stand on" in message


def test_foot_report_operator_and_api(lik):
    rig, keyed = measure.keyed_scene("walk", "terrain", FPS)
    bpy.context.scene.frame_end = keyed.frame_start + 150  # onto the ramp
    assert bpy.ops.limb_ik.foot_report() == {"FINISHED"}
    report = lik.api.foot_report(rig)
    assert [foot["limb"] for foot in report["feet"]] == ["leg.L", "leg.R"]
    assert report["feet"][0]["max_penetration"] > 0.05  # as animated, the feet sink into the ramp
