# SPDX-License-Identifier: GPL-3.0-or-later
"""Pose I/O: written rotations and keys are, of all the ways to write the same rotation, the one next to
the animator's values, in every rotation mode, so curves never jump or spin between keys."""

import itertools
import math

import bpy
import numpy as np
import pytest
import rigs
from bpy_extras import anim_utils
from mathutils import Euler, Vector

BONES = ("thigh.L", "shin.L", "foot.L")
PATHS = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}


def equivalents(mode: str, values) -> list[np.ndarray]:
    """Other values of a rotation channel that give the same rotation, within a turn either way."""
    values = np.array(values, dtype=np.float64)
    turns = (-2 * math.pi, 0.0, 2 * math.pi)
    if mode == "QUATERNION":
        return [values, -values]
    if mode == "AXIS_ANGLE":
        angle, axis = values[0], values[1:]
        return [np.array([sign * angle + t, *(sign * axis)]) for sign in (1, -1) for t in turns]
    first, middle, last = ("XYZ".index(axis) for axis in mode)
    other = values.copy()
    other[first] += math.pi
    other[middle] = math.pi - other[middle]
    other[last] += math.pi
    return [base + np.array(shift) for base in (values, other) for shift in itertools.product(turns, repeat=3)]


def assert_nearest(mode: str, written, animated, label="") -> None:
    """``written`` is the way of writing its rotation nearest to ``animated`` (summed absolute difference)."""
    written, animated = np.array(written, dtype=np.float64), np.array(animated, dtype=np.float64)
    distance = np.abs(written - animated).sum()
    best = min(np.abs(e - animated).sum() for e in equivalents(mode, written))
    assert distance <= best + 1e-4, (label, written, animated)


def leg_with_pose(mode: str, rotations: dict):
    """The test leg, its chain in ``mode``, posed with the given channel values as they are."""
    rig = rigs.leg_armature(modes=(mode,) * 3)
    for name, value in rotations.items():
        setattr(rig.pose.bones[name], PATHS.get(mode, "rotation_euler"), value)
    bpy.ops.limb_ik.detect_limbs()
    return rig


#: Animated values that a plain conversion would not give back: whole turns, angles past 180°,
#: negative axis-angles, quaternions with negative w.
ANIMATED = {
    "XYZ": {"thigh.L": (2 * math.pi + 0.2, 0.1, -0.1), "shin.L": (0.3, 3.0, 0.0), "foot.L": (-0.1, 0.0, -3.0)},
    "ZXY": {"thigh.L": (0.2, -2 * math.pi, 0.1), "shin.L": (3.1, 0.2, 0.0), "foot.L": (-0.1, 0.4, 3.5)},
    "QUATERNION": {n: tuple(-Euler(e).to_quaternion()) for n, e in zip(BONES, ((0.2, 0, 0), (-0.3, 0, 0), (0, 0, 1)))},
    "AXIS_ANGLE": {
        "thigh.L": (-0.4, 1.0, 0.0, 0.0),
        "shin.L": (2 * math.pi + 0.3, 1.0, 0.0, 0.0),
        "foot.L": (0.2, 0.0, 0.0, -1.0),
    },
}


@pytest.mark.parametrize("mode", ANIMATED)
def test_solve_writes_next_to_the_animated_values(mode):
    rig = leg_with_pose(mode, ANIMATED[mode])
    limb = rig.limb_ik.limbs["leg.L"]
    rigs.target_at_tip(rig, limb, (0.02, -0.05, 0.1), (0.1, 0.0, 0.1))
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert rigs.goal_error(rig, limb) <= 1e-5
    for name, animated in ANIMATED[mode].items():
        assert_nearest(mode, getattr(rig.pose.bones[name], PATHS.get(mode, "rotation_euler")), animated, name)


def fcurve_values(obj, data_path: str, frame: float) -> np.ndarray:
    """A channel's keyed values at ``frame``, from the slot's channelbag."""
    action = obj.animation_data.action
    curves = anim_utils.action_get_channelbag_for_slot(action, obj.animation_data.action_slot).fcurves
    ordered = sorted((c for c in curves if c.data_path == data_path), key=lambda c: c.array_index)
    return np.array([c.evaluate(frame) for c in ordered])


@pytest.mark.parametrize("mode", ANIMATED)
def test_match_fk_keys_continue_the_animation(mode):
    """Keys inserted by Match FK sit next to the bone's earlier keys, so the curves do not spin in between."""
    rig = leg_with_pose(mode, ANIMATED[mode])
    path = PATHS.get(mode, "rotation_euler")
    for name in BONES:
        rig.pose.bones[name].keyframe_insert(path, frame=1)
    limb = rig.limb_ik.limbs["leg.L"]
    target = rigs.target_at_tip(rig, limb)
    bpy.context.scene.frame_set(5)
    target.location += Vector((0.02, -0.05, 0.1))
    assert bpy.ops.limb_ik.match_fk() == {"FINISHED"}
    assert not limb.enabled
    bpy.context.scene.frame_set(5)
    assert rigs.goal_error(rig, limb) <= 1e-5  # the keys hold the IK pose
    for name in BONES:
        curve = f'pose.bones["{name}"].{path}'
        assert_nearest(mode, fcurve_values(rig, curve, 5), fcurve_values(rig, curve, 1), name)


def test_match_fk_keys_its_frame_as_the_bake_keys_a_range(lik):
    """Keys are written one way: the keys Match FK does not replace stay bit for bit, handles included."""
    rig = leg_with_pose("XYZ", ANIMATED["XYZ"])
    for frame in (1, 9):
        for name in BONES:
            rig.pose.bones[name].rotation_euler.x += 0.1
            rig.pose.bones[name].keyframe_insert("rotation_euler", frame=frame)
    actions = lik.rig.keys.actions

    def curves():
        return {(c.data_path, c.array_index): actions.read_keys(c) for c in actions.fcurves(rig)}

    before = curves()
    limb = rig.limb_ik.limbs["leg.L"]
    target = rigs.target_at_tip(rig, limb)
    bpy.context.scene.frame_set(5)
    target.location += Vector((0.02, -0.05, 0.1))
    assert bpy.ops.limb_ik.match_fk() == {"FINISHED"}
    after = curves()
    assert after.keys() == before.keys()
    for channel, keys in before.items():
        assert after[channel]["co"][:, 0].tolist() == [1.0, 5.0, 9.0]
        for name, array in keys.items():
            assert np.array_equal(array, after[channel][name][[0, 2]]), (channel, name)
