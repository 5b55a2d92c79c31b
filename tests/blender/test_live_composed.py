# SPDX-License-Identifier: GPL-3.0-or-later
"""Live solving that composes the animator's pose itself (:mod:`rig.live.compose`) instead of restoring it before the
frame change: the same pose as restoring, the animator's values untouched in the file and after undo, and
a fallback to restoring where Blender composes the bones otherwise."""

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Euler

FRAMES = (1, 2, 3, 5, 8, 4, 1)
#: Composed in float64 from the channels rather than evaluated by Blender in float32, the solved channels
#: agree to this.
SAME = 2e-5


@pytest.fixture
def composing(lik, monkeypatch):
    """Whether live rigs compose the animator's pose (every armature) or restore it (none)."""

    def switch(on: bool) -> None:
        monkeypatch.setattr(lik.rig.live.compose, "COMPOSE_FROM", 0 if on else 10**9)

    return switch


def _rig():
    """The human metarig with targets, an unkeyed animator's pose on the legs in three rotation modes, one
    Euler channel of the right thigh keyed (the others not), and the right leg stretching out of reach
    from frame 5."""
    rig = rigs.human_with_targets()
    leg = rig.limb_ik.limbs["leg.R"]
    leg.reach = "STRETCH"
    rigs.keyed_target(rig, leg, lambda f: (0.0, -0.05, -0.05 * max(f - 4, 0)), range(1, 9))
    rigs.enter_pose_mode(rig)
    for name, mode, turn in (
        ("thigh.L", "XZY", (0.3, 0.1, -0.2)),
        ("shin.L", "QUATERNION", (0.4, 0.0, 0.1)),
        ("foot.L", "AXIS_ANGLE", (0.1, 0.3, 0.0)),
        ("thigh.R", "XYZ", (-0.2, 0.2, 0.3)),
    ):
        bone = rig.pose.bones[name]
        bone.rotation_mode = mode
        rigs.set_rotation(bone, Euler(turn).to_quaternion())
    thigh = rig.pose.bones["thigh.R"]
    for frame, x in ((1, -0.2), (8, 0.25)):
        thigh.rotation_euler.x = x
        thigh.keyframe_insert("rotation_euler", index=0, frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig


def _play(rig):
    """The channels and the evaluated pose at each of FRAMES with Live on, and whether the channels still
    held the previous frame's solve when the frame's evaluation was over (nothing restored before it)."""
    scene = bpy.context.scene
    held = []

    def look(scene, depsgraph):
        held.append(not np.array_equal(rigs.channels(rig), animator_at(scene.frame_current)))

    def animator_at(frame):
        return animator[frame]

    animator = {}
    for frame in FRAMES:  # the animator's channels at each frame (the keyed thigh moves)
        scene.frame_set(frame)
        animator[frame] = rigs.channels(rig)
    rig.limb_ik.live = True
    bpy.app.handlers.frame_change_post.insert(0, look)  # before Limb IK's handler
    try:
        solved = []
        for frame in FRAMES:
            scene.frame_set(frame)
            for leg in ("leg.L", "leg.R"):
                assert rigs.goal_error(rig, rig.limb_ik.limbs[leg]) <= 1e-5, (frame, leg)
            stretched = rig.pose.bones["thigh.R"].scale.y > 1.0 + 1e-3
            assert stretched == (frame >= 5), frame
            solved.append((rigs.channels(rig), rigs.pose_snapshot(rig)))
    finally:
        bpy.app.handlers.frame_change_post.remove(look)
    rig.limb_ik.live = False
    np.testing.assert_array_equal(rigs.channels(rig), animator[FRAMES[-1]])
    return solved, held


def test_composing_poses_the_rig_as_restoring_does(composing, tmp_path):
    rig = _rig()
    composing(False)
    restored, held = _play(rig)
    assert not any(held)
    composing(True)
    composed, held = _play(rig)
    assert all(held[1:])  # after the first frame the animator's values were never put back in the channels
    for frame, (channels, pose), (want_channels, want_pose) in zip(FRAMES, composed, restored):
        np.testing.assert_allclose(channels, want_channels, rtol=0.0, atol=SAME, err_msg=f"frame {frame}")
        np.testing.assert_allclose(pose, want_pose, rtol=0.0, atol=SAME, err_msg=f"frame {frame}")

    # The file keeps the animator's pose, and undo across composed frames gives it back.
    rig.limb_ik.live = True
    bpy.context.scene.frame_set(3)
    bpy.ops.ed.undo_push(message="Frame 3")
    bpy.context.scene.frame_set(6)
    bpy.ops.ed.undo_push(message="Frame 6")
    assert bpy.ops.ed.undo() == {"FINISHED"}
    rig = bpy.data.objects["metarig"]
    bpy.context.scene.frame_set(5)
    assert rigs.goal_error(rig, rig.limb_ik.limbs["leg.L"]) <= 1e-5
    solved = rigs.channels(rig)
    path = tmp_path / "composed.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    np.testing.assert_array_equal(rigs.channels(rig), solved)  # solved again after saving
    rig.limb_ik.live = False
    animator = rigs.channels(rig)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    rig = bpy.data.objects["metarig"]
    rig.limb_ik.live = False
    np.testing.assert_array_equal(rigs.channels(rig), animator)


def _restored_at(lik, composing, rig, frame: int) -> np.ndarray:
    """The channels live solving gives at ``frame``, restoring before the frame change."""
    rig.limb_ik.live = False
    composing(False)
    rig.limb_ik.live = True
    bpy.context.scene.frame_set(frame + 1)
    bpy.context.scene.frame_set(frame)
    return rigs.channels(rig)


def test_a_constraint_above_a_chain_has_the_pose_restored_before_the_frame_change(lik, composing):
    rig = _rig()
    scene = bpy.context.scene
    scene.frame_set(3)
    animator = rigs.channels(rig)
    composing(True)
    rig.limb_ik.live = True
    scene.frame_set(2)
    # No limit set: it changes nothing. On a bone the solve reads; on one it writes, the limb is a problem.
    rig.pose.bones["spine"].constraints.new("LIMIT_ROTATION")
    seen = []
    bpy.app.handlers.frame_change_post.insert(0, lambda *_: seen.append(rigs.channels(rig)))  # before Limb IK's
    try:
        scene.frame_set(3)
    finally:
        del bpy.app.handlers.frame_change_post[0]
    np.testing.assert_array_equal(seen[0], animator)  # put back before the frame was evaluated
    assert rigs.goal_error(rig, rig.limb_ik.limbs["leg.L"]) <= 1e-5
    np.testing.assert_array_equal(rigs.channels(rig), _restored_at(lik, composing, rig, 3))


def test_an_ik_constraint_found_on_the_frame_falls_back_to_restoring(lik, composing):
    """Another bone's IK constraint reaching the limb, set after the plan was made: the frame shows
    Blender's matrices are not what the channels compose to, so the animator's pose is put back and
    solved once evaluated (the timer), and restored before the frame changes from then on."""
    rig = _rig()
    scene = bpy.context.scene
    scene.frame_set(3)
    animator = rigs.channels(rig)
    composing(True)
    rig.limb_ik.live = True
    scene.frame_set(2)
    ik = rig.pose.bones["toe.L"].constraints.new("IK")
    ik.target, ik.chain_count = rigs.empty("Toe goal", (0.3, -0.4, 0.3)), 4
    scene.frame_set(3)
    np.testing.assert_array_equal(rigs.channels(rig), animator)
    lik.rig.live.frame.solve_moved(bpy.context)  # what the timer runs
    fallback = rigs.channels(rig)
    assert not np.array_equal(fallback, animator)
    scene.frame_set(4)
    scene.frame_set(3)
    np.testing.assert_array_equal(rigs.channels(rig), fallback)
    np.testing.assert_array_equal(fallback, _restored_at(lik, composing, rig, 3))


def test_a_stretch_no_longer_written_goes_back_to_the_animators_scale(composing):
    rig = _rig()
    composing(True)
    rig.limb_ik.live = True
    bpy.context.scene.frame_set(8)
    assert rig.pose.bones["thigh.R"].scale.y > 1.01
    rig.limb_ik.limbs["leg.R"].reach = "EXTEND"  # nothing stretches, so no scale is solved
    bpy.context.scene.frame_set(4)
    assert tuple(rig.pose.bones["thigh.R"].scale) == (1.0, 1.0, 1.0)
