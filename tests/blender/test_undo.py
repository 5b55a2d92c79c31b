# SPDX-License-Identifier: GPL-3.0-or-later
"""Undo: every operator that changes data is one undo step, and a failed one is none.

Undo runs headless. In background mode Blender starts without an undo stack (``ed.undo_push()``
creates it), and an operator called from Python pushes a step only when asked to, with the
positional ``undo=True`` argument: ``bpy.ops.limb_ik.solve("EXEC_DEFAULT", True)``. Without a step
to go back to, ``ed.undo``'s poll fails with the generic "context is incorrect".
"""

import bpy
import numpy as np
import pytest
import rigs


def undo_steps(capfd) -> list[str]:
    """Names of the steps on the undo stack, oldest first."""
    capfd.readouterr()
    bpy.context.window_manager.print_undo_steps()
    lines = capfd.readouterr().out.splitlines()
    return [line.split("name='", 1)[1].rstrip("'") for line in lines if "name='" in line]


@pytest.fixture
def leg():
    rig = rigs.leg_armature()
    bpy.ops.limb_ik.detect_limbs()
    rigs.target_at_tip(rig, rig.limb_ik.limbs["leg.L"], (0.0, -0.1, 0.15))
    assert bpy.ops.ed.undo_push(message="Set up") == {"FINISHED"}
    return rig


def test_undo_after_solve_restores_the_pose(leg, capfd):
    before, limbs = rigs.pose_snapshot(leg), rigs.limbs_table(leg)
    assert bpy.ops.limb_ik.solve("EXEC_DEFAULT", True) == {"FINISHED"}
    solved = rigs.pose_snapshot(leg)
    assert np.abs(solved - before).max() > 0.01
    assert undo_steps(capfd)[-2:] == ["Set up", "Solve"]

    assert bpy.ops.ed.undo() == {"FINISHED"}
    leg = bpy.data.objects["Leg"]  # undo reloads the data: references from before are stale
    np.testing.assert_array_equal(rigs.pose_snapshot(leg), before)
    assert rigs.limbs_table(leg) == limbs

    assert bpy.ops.ed.redo() == {"FINISHED"}
    leg = bpy.data.objects["Leg"]
    np.testing.assert_array_equal(rigs.pose_snapshot(leg), solved)
    assert rigs.goal_error(leg, leg.limb_ik.limbs["leg.L"]) <= 1e-5


def test_failed_operator_pushes_no_step(leg, capfd):
    leg.pose.bones["shin.L"].lock_rotation[0] = True
    bpy.ops.ed.undo_push(message="Locked")
    steps = undo_steps(capfd)
    with pytest.raises(RuntimeError, match="has locked rotation"):
        bpy.ops.limb_ik.solve("EXEC_DEFAULT", True)
    with pytest.raises(RuntimeError, match="already belongs to limb 'leg.L'"):
        rigs.select_bones(leg, ["thigh.L"], active="shin.L")
        bpy.ops.limb_ik.add_limb("EXEC_DEFAULT", True)
    assert bpy.ops.limb_ik.detect_limbs("EXEC_DEFAULT", True) == {"CANCELLED"}  # nothing new to add
    assert undo_steps(capfd) == steps


def test_undo_limb_set_up(leg):
    rig_limbs = rigs.limbs_table(leg)
    leg.limb_ik.active_limb_index = 0
    assert bpy.ops.limb_ik.remove_limb("EXEC_DEFAULT", True) == {"FINISHED"}
    assert len(bpy.data.objects["Leg"].limb_ik.limbs) == 0
    assert bpy.ops.limb_ik.detect_limbs("EXEC_DEFAULT", True) == {"FINISHED"}
    assert rigs.limbs_table(bpy.data.objects["Leg"])[0][:5] == rig_limbs[0][:5]  # back, without its target
    assert bpy.ops.ed.undo() == {"FINISHED"}
    assert len(bpy.data.objects["Leg"].limb_ik.limbs) == 0
    assert bpy.ops.ed.undo() == {"FINISHED"}
    assert rigs.limbs_table(bpy.data.objects["Leg"]) == rig_limbs


def test_undo_after_plant_puts_the_settings_and_the_keys_back(capfd):
    """Plant and Bake marks the legs planted and sets the ground as it keys: one step undoes all three."""
    bpy.ops.object.mode_set(mode="OBJECT")
    ground = rigs.plane_ground()
    rig = rigs.leg_armature()
    bpy.ops.limb_ik.detect_limbs()
    assert bpy.ops.ed.undo_push(message="Set up") == {"FINISHED"}
    assert bpy.ops.limb_ik.plant("EXEC_DEFAULT", True, ground=ground.name, frame_start=1, frame_end=5) == {"FINISHED"}
    assert rig.limb_ik.ground == ground and rig.limb_ik.limbs["leg.L"].plant and rig.animation_data.action
    assert undo_steps(capfd)[-2:] == ["Set up", "Plant and Bake"]

    assert bpy.ops.ed.undo() == {"FINISHED"}
    rig = bpy.data.objects["Leg"]
    assert rig.limb_ik.ground is None and not rig.limb_ik.limbs["leg.L"].plant
    assert rig.animation_data is None or rig.animation_data.action is None


@pytest.mark.parametrize("operator", ["add_limb", "detect_limbs", "remove_limb", "solve", "match_fk", "plant"])
def test_operators_that_change_data_are_undoable(operator):
    options = getattr(bpy.types, f"LIMB_IK_OT_{operator}").bl_options
    assert {"REGISTER", "UNDO"} <= set(options)


def test_undo_across_frames_while_live_keeps_the_animators_pose():
    """An undo step stores the channels as they are, live-solved values included; after undo, those
    values must still be swapped back for the animator's, not taken for an edit."""
    rig = rigs.human_with_targets()
    animator = rigs.channels(rig)
    rig.limb_ik.live = True
    for frame in (2, 6):
        bpy.context.scene.frame_set(frame)
        bpy.ops.ed.undo_push(message=f"Frame {frame}")
    assert bpy.ops.ed.undo() == {"FINISHED"}
    rig = bpy.data.objects["metarig"]
    assert bpy.context.scene.frame_current == 2
    bpy.context.scene.frame_set(4)
    assert rigs.goal_error(rig, rig.limb_ik.limbs["leg.L"]) <= 1e-5
    rig.limb_ik.live = False
    np.testing.assert_array_equal(rigs.channels(rig), animator)
