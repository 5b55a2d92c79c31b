# SPDX-License-Identifier: GPL-3.0-or-later
"""Targets are safe by default: a plain Empty keeps the end bone turned as it was and turns it after;
a target made for the limb is copied exactly; files saved before offsets existed keep their meaning.
Detect Limbs creates targets on request, and a limb added by hand gets the toe Detect would find."""

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Euler, Matrix, Vector

#: Goals met to this distance (metres); world axes compared to this.
REACHED, TURNED = 1e-5, 1e-5


def world_rotation(rig, bone: str) -> np.ndarray:
    matrix = rigs.world_matrix(rig, bone)[:3, :3]
    return matrix / np.linalg.norm(matrix, axis=0)


def plain_empty_target(rig, limb, offset) -> bpy.types.Object:
    """An unrotated Empty near the limb's tip, set as its target: what a user adds by hand."""
    target = rigs.empty("Plain", Vector(rigs.world_tip(rig, limb.end_bone)) + Vector(offset))
    bpy.context.view_layer.update()
    limb.target = target
    return target


def test_a_plain_empty_keeps_the_foot_turned_and_turns_it_after(capfd):
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    limb = rig.limb_ik.limbs["leg.L"]
    foot = world_rotation(rig, "foot.L")
    target = plain_empty_target(rig, limb, (0.05, -0.1, 0.15))
    # The Empty's own rotation is nowhere near the foot's: copying it would point the foot up and back.
    assert np.abs(np.array(target.matrix_world)[:3, :3] - foot).max() > 0.9

    capfd.readouterr()
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert "off its goal" not in capfd.readouterr().out
    assert rigs.goal_error(rig, limb) <= REACHED
    np.testing.assert_allclose(world_rotation(rig, "foot.L"), foot, atol=TURNED)

    # Turning the Empty afterwards turns the foot with it, by the same world turn.
    turn = Euler((0.3, -0.2, 0.4)).to_matrix().to_4x4()
    target.matrix_world = Matrix.Translation(target.matrix_world.translation) @ turn
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert rigs.goal_error(rig, limb) <= REACHED
    np.testing.assert_allclose(world_rotation(rig, "foot.L"), np.array(turn)[:3, :3] @ foot, atol=TURNED)


@pytest.mark.parametrize("parented", [False, True])
def test_a_target_set_up_by_a_script_before_any_update_keeps_the_foot_turned(parented):
    """A script makes an Empty, turns and places it (under a turned parent, or not) and sets it as the target
    at once, before Blender evaluates the scene: the offset was taken from the Empty's stale (identity)
    matrix, and the foot turned about 157 degrees and missed its target."""
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    bpy.ops.object.mode_set(mode="OBJECT")
    limb = rig.limb_ik.limbs["leg.L"]
    foot = world_rotation(rig, "foot.L")
    tip = Vector(rigs.world_tip(rig, "foot.L")) + Vector((0.02, -0.03, 0.01))
    target = bpy.data.objects.new("Scripted", None)
    bpy.context.scene.collection.objects.link(target)
    place = Matrix.Identity(4)
    if parented:
        holder = bpy.data.objects.new("Holder", None)
        bpy.context.scene.collection.objects.link(holder)
        holder.location, holder.rotation_euler, holder.scale = (0.3, -0.2, 0.1), (0.0, 0.5, 1.0), (2.0, 2.0, 2.0)
        target.parent = holder
        place = Matrix.LocRotScale(holder.location, holder.rotation_euler, holder.scale)
    target.rotation_euler = (0.7, -0.4, 1.9)
    target.location = place.inverted() @ tip
    limb.target = target  # no update in between, as a script does

    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert rigs.goal_error(rig, limb) <= REACHED
    np.testing.assert_allclose(world_rotation(rig, "foot.L"), foot, atol=TURNED)


def test_a_bone_of_another_armature_as_target_keeps_the_turn_too():
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    bpy.ops.object.mode_set(mode="OBJECT")
    controls = rigs.leg_armature("Controls")  # its bones are turned nothing like the metarig's foot
    controls.location = (0.3, -0.2, 0.0)
    bpy.context.view_layer.update()
    limb = rig.limb_ik.limbs["leg.R"]
    foot = world_rotation(rig, "foot.R")
    limb.target, limb.target_bone = controls, "shin.L"
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert np.linalg.norm(rigs.world_tip(rig, "foot.R") - rigs.world_matrix(controls, "shin.L")[:3, 3]) <= REACHED
    np.testing.assert_allclose(world_rotation(rig, "foot.R"), foot, atol=TURNED)


def test_a_file_saved_before_offsets_copies_the_target_rotation(tmp_path):
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    limb = rig.limb_ik.limbs["leg.L"]
    target = plain_empty_target(rig, limb, (0.0, -0.1, 0.25))
    target.rotation_euler = (0.2, 0.1, 0.0)  # made to face where the foot should, as such files have it
    assert tuple(limb.target_offset) != (1.0, 0.0, 0.0, 0.0)
    del limb["target_offset"]  # what a file from before the offset holds: no value, End Rotation = Target
    path = tmp_path / "before.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))

    rig = bpy.data.objects["metarig"]
    limb = rig.limb_ik.limbs["leg.L"]
    assert limb.end_rotation == "TARGET" and tuple(limb.target_offset) == (1.0, 0.0, 0.0, 0.0)
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert rigs.goal_error(rig, limb) <= REACHED
    assert rigs.rotation_error(rig, limb) <= TURNED  # the foot copies the target's rotation, as it did


@pytest.mark.parametrize("how", ["operator", "api"])
def test_detect_limbs_creates_targets_where_the_limbs_are(lik, how):
    rig = rigs.human_metarig()
    before = rigs.pose_snapshot(rig)
    if how == "operator":
        assert bpy.ops.limb_ik.detect_limbs(with_targets=True) == {"FINISHED"}
    else:
        assert set(lik.api.detect_limbs(rig, with_targets=True)) == {"leg.L", "leg.R", "arm.L", "arm.R"}
    for limb in rig.limb_ik.limbs:
        assert limb.target is not None and limb.target.name == f"metarig_{limb.name}_target"
        assert tuple(limb.target_offset) == (1.0, 0.0, 0.0, 0.0)
        assert limb.target.name in bpy.context.scene.objects
        assert rigs.goal_error(rig, limb) <= 1e-6 and rigs.rotation_error(rig, limb) <= 1e-6
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    np.testing.assert_allclose(rigs.pose_snapshot(rig), before, atol=1e-6)
    # Moving a target moves its limb.
    rig.limb_ik.limbs["arm.R"].target.location.z += 0.2
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert rigs.goal_error(rig, rig.limb_ik.limbs["arm.R"]) <= REACHED


def test_a_limb_added_by_hand_gets_the_toe_detect_finds():
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    assert rig.limb_ik.limbs["leg.L"].toe_bone == "toe.L"
    rig.limb_ik.active_limb_index = 0
    assert bpy.ops.limb_ik.remove_limb() == {"FINISHED"}
    rigs.enter_pose_mode(rig)
    rigs.select_bones(rig, ["thigh.L", "shin.L"], active="foot.L")
    assert bpy.ops.limb_ik.add_limb() == {"FINISHED"}
    assert rig.limb_ik.limbs["leg.L"].toe_bone == "toe.L"
    rigs.select_bones(rig, ["upper_arm.L", "forearm.L"], active="hand.L")
    bpy.ops.limb_ik.remove_limb(index=rig.limb_ik.limbs.find("arm.L"))
    assert bpy.ops.limb_ik.add_limb() == {"FINISHED"}
    assert rig.limb_ik.limbs["arm.L"].toe_bone == ""  # a hand has fingers, not a toe


def test_an_unnamed_toe_is_found_by_shape():
    rig = rigs.leg_armature()
    bpy.ops.object.mode_set(mode="EDIT")
    rig.data.edit_bones["toe.L"].tail.y = -0.23  # 9 cm: long enough beside the 15 cm foot
    bpy.ops.object.mode_set(mode="POSE")
    for number, name in enumerate(("hips", "thigh.L", "shin.L", "foot.L", "toe.L")):
        rig.data.bones[name].name = f"Bone.{number:03d}"
    rigs.select_bones(rig, ["Bone.001", "Bone.002"], active="Bone.003")
    assert bpy.ops.limb_ik.add_limb() == {"FINISHED"}
    assert rig.limb_ik.limbs[0].toe_bone == "Bone.004"
    # A 6 cm toe beside the same foot is too short to tell from a heel or a spur: no toe.
    bpy.ops.object.mode_set(mode="EDIT")
    rig.data.edit_bones["Bone.004"].tail.y = -0.20
    bpy.ops.object.mode_set(mode="POSE")
    bpy.ops.limb_ik.remove_limb()
    assert bpy.ops.limb_ik.add_limb() == {"FINISHED"}
    assert rig.limb_ik.limbs[0].toe_bone == ""
