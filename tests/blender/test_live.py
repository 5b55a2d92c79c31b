# SPDX-License-Identifier: GPL-3.0-or-later
"""Live solving on frame change: goals met on every frame, broken limbs marked and skipped, the
animator's pose of unkeyed bones never drifts, Euler channels stay continuous."""

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Euler

FRAMES = range(1, 9)
REACHED = 1e-5


def test_goals_met_on_every_frame_and_a_deleted_target_is_marked(capfd):
    rig = rigs.human_with_targets(FRAMES)
    limbs = rig.limb_ik.limbs
    scene = bpy.context.scene
    rig.limb_ik.live = True
    for frame in FRAMES:
        scene.frame_set(frame)
        for name in ("leg.L", "leg.R", "arm.L"):
            assert rigs.goal_error(rig, limbs[name]) <= REACHED, (frame, name)
            assert rigs.rotation_error(rig, limbs[name]) <= REACHED, (frame, name)
        assert not any(limb.status for limb in limbs)

    bpy.data.objects.remove(limbs["leg.L"].target)
    for frame in (3, 4):
        scene.frame_set(frame)
        assert "its target 'leg.L_target' no longer exists" in limbs["leg.L"].status
        for name in ("leg.R", "arm.L"):
            assert rigs.goal_error(rig, limbs[name]) <= REACHED, (frame, name)
            assert limbs[name].status == ""
    assert "Traceback" not in capfd.readouterr().err

    # Clearing the broken target (as the sidebar's X does) makes the limb reach for its own animated tip.
    limbs["leg.L"].target = None
    scene.frame_set(5)
    assert limbs["leg.L"].status == ""


def test_unkeyed_bones_do_not_drift():
    rig = rigs.human_with_targets(FRAMES)
    rigs.enter_pose_mode(rig)
    # The animator's pose, without keys: a bent knee and a turned hip in three rotation modes.
    animator_pose = (
        ("thigh.L", "XZY", (0.3, 0.1, -0.2)),
        ("shin.L", "QUATERNION", (0.4, 0.0, 0.1)),
        ("foot.L", "AXIS_ANGLE", (0.1, 0.3, 0.0)),
        ("thigh.R", "ZYX", (-0.2, 0.2, 0.3)),
    )
    for name, mode, turn in animator_pose:
        bone = rig.pose.bones[name]
        bone.rotation_mode = mode
        rigs.set_rotation(bone, Euler(turn).to_quaternion())
    animator = rigs.channels(rig)
    start = rigs.pose_snapshot(rig)
    scene = bpy.context.scene

    rig.limb_ik.live = True
    solved = []
    for _ in range(3):  # back and forth: every visit of a frame gives the same result
        for frame in (*FRAMES, *reversed(FRAMES)):
            scene.frame_set(frame)
            assert rigs.goal_error(rig, rig.limb_ik.limbs["leg.L"]) <= REACHED
            solved.append(rigs.pose_snapshot(rig))
    runs = np.array(solved).reshape(3, -1, *solved[0].shape)
    np.testing.assert_array_equal(runs[1], runs[0])
    np.testing.assert_array_equal(runs[2], runs[0])

    rig.limb_ik.live = False
    scene.frame_set(1)
    np.testing.assert_array_equal(rigs.channels(rig), animator)
    np.testing.assert_array_equal(rigs.pose_snapshot(rig), start)


def test_turning_live_off_shows_the_animated_pose_at_once():
    rig = rigs.human_with_targets(FRAMES)
    animator = rigs.channels(rig)
    scene = bpy.context.scene
    rig.limb_ik.live = True
    scene.frame_set(4)
    assert rigs.goal_error(rig, rig.limb_ik.limbs["leg.L"]) <= REACHED
    rig.limb_ik.live = False
    np.testing.assert_array_equal(rigs.channels(rig), animator)
    rig.limb_ik.live = True
    assert rigs.goal_error(rig, rig.limb_ik.limbs["leg.L"]) <= REACHED


def test_an_edit_by_the_animator_is_kept():
    rig = rigs.human_with_targets(FRAMES)
    scene = bpy.context.scene
    rig.limb_ik.live = True
    scene.frame_set(2)
    edited = Euler((0.1, 0.2, 0.3)).to_quaternion()
    rig.pose.bones["shin.L"].rotation_quaternion = edited  # the animator turns a solved bone by hand
    scene.frame_set(3)
    rig.limb_ik.live = False
    scene.frame_set(4)
    np.testing.assert_allclose(rig.pose.bones["shin.L"].rotation_quaternion, edited, atol=1e-7)


@pytest.mark.parametrize("mode", ["XYZ", "YXZ"])
def test_euler_channels_stay_continuous(mode):
    rig = rigs.leg_armature(modes=(mode, mode, mode))
    thigh = rig.pose.bones["thigh.L"]
    # Keyed FK twist of the thigh about its own axis passing through 180°, where a plain
    # conversion would jump by 360°.
    for frame, twist in ((FRAMES[0], 2.9), (FRAMES[-1], 3.4)):
        thigh.rotation_euler = (0.0, twist, 0.0)
        thigh.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_set(FRAMES[0])
    bpy.ops.limb_ik.detect_limbs()
    limb = rig.limb_ik.limbs["leg.L"]
    rigs.keyed_target(rig, limb, lambda f: (0.01 * f, -0.02 * f, 0.02 * f), FRAMES)
    rig.limb_ik.live = True
    values = {name: [] for name in ("thigh.L", "shin.L", "foot.L")}
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        assert rigs.goal_error(rig, limb) <= REACHED
        for name, history in values.items():
            history.append(np.array(rig.pose.bones[name].rotation_euler))
    for name, history in values.items():
        steps = np.abs(np.diff(np.array(history), axis=0))
        assert steps.max() < 0.3, (name, np.array(history))


def test_moving_a_target_by_hand_solves_again_from_the_animated_pose(lik):
    """With Live on, dragging a target (no frame change) re-solves once the update is over; the
    solve starts from the animator's pose, not from the previous IK result."""
    rig = rigs.human_with_targets(FRAMES)
    limb = rig.limb_ik.limbs["leg.L"]
    bpy.context.scene.frame_set(2)
    animated = rigs.channels(rig)
    rig.limb_ik.live = True
    limb.target.location.z += 0.05
    bpy.context.view_layer.update()  # the depsgraph update notes the moved target...
    lik.rig.live.frame.solve_moved(bpy.context)  # ...and what the timer runs solves it again
    assert rigs.goal_error(rig, limb) <= REACHED
    rig.limb_ik.live = False  # the animator's pose underneath is untouched
    assert np.array_equal(rigs.channels(rig), animated)
