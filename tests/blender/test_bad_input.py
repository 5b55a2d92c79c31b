# SPDX-License-Identifier: GPL-3.0-or-later
"""Bad input: the operator fails with a sentence naming what is wrong, and the scene is left as it was."""

from contextlib import contextmanager

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Vector


@contextmanager
def unchanged(rig):
    """The block must leave the rig's pose and its limbs exactly as they were."""
    pose, limbs, objects = rigs.pose_snapshot(rig), rigs.limbs_table(rig), set(bpy.data.objects.keys())
    yield
    np.testing.assert_array_equal(rigs.pose_snapshot(rig), pose)
    assert rigs.limbs_table(rig) == limbs
    assert set(bpy.data.objects.keys()) == objects


@pytest.fixture
def leg():
    """The test leg in Pose Mode with its limb set up and a target it can reach."""
    rig = rigs.leg_armature()
    assert bpy.ops.limb_ik.detect_limbs() == {"FINISHED"}
    rigs.target_at_tip(rig, rig.limb_ik.limbs["leg.L"], (0.0, -0.1, 0.1))
    return rig


def test_active_object_is_not_an_armature(leg):
    cube = bpy.data.objects["Cube"]
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.objects.active = cube
    with unchanged(leg):
        for operator in (bpy.ops.limb_ik.solve, bpy.ops.limb_ik.detect_limbs, bpy.ops.limb_ik.add_limb):
            with pytest.raises(RuntimeError, match="The active object must be an armature"):
                operator()


def test_no_limbs_yet():
    rig = rigs.leg_armature()
    with unchanged(rig), pytest.raises(RuntimeError, match="has no limbs yet"):
        bpy.ops.limb_ik.solve()


@pytest.mark.parametrize(
    ("bones", "message"),
    [
        (("thigh.L", "nope", ""), "Limb 'leg.L': bone 'nope' does not exist in armature 'Leg'"),
        (("thigh.L", "hips", ""), "'hips' is not a child of 'thigh.L', so they do not form a chain"),
        (("thigh.L", "shin.L", "hips"), "'hips' is not a child of 'shin.L'"),
        (("thigh.L", "shin.L", "shin.L"), "uses the same bone twice"),
        (("", "shin.L", ""), "Limb 'leg.L' has no upper bone"),
    ],
)
def test_bones_that_are_not_a_chain(leg, bones, message):
    limb = leg.limb_ik.limbs["leg.L"]
    limb.upper_bone, limb.lower_bone, limb.end_bone = bones
    with unchanged(leg), pytest.raises(RuntimeError, match=message):
        bpy.ops.limb_ik.solve()


def test_selected_bones_that_are_not_a_chain():
    rig = rigs.leg_armature()
    with unchanged(rig):
        rigs.select_bones(rig, ["hips", "toe.L", "thigh.L"], active="shin.L")
        with pytest.raises(RuntimeError, match="Select two or three bones of one chain, not 4"):
            bpy.ops.limb_ik.add_limb()
        rigs.select_bones(rig, ["toe.L"], active="shin.L")
        with pytest.raises(RuntimeError, match="'toe.L' is not above the active bone 'shin.L'"):
            bpy.ops.limb_ik.add_limb()
        rigs.select_bones(rig, [], active="shin.L")
        with pytest.raises(RuntimeError, match="Select two or three bones of one chain, not 1"):
            bpy.ops.limb_ik.add_limb()


def test_zero_length_segment():
    rig = rigs.leg_armature(connected=False)
    bpy.ops.object.mode_set(mode="EDIT")
    shin = rig.data.edit_bones["shin.L"]
    shin.head = rig.data.edit_bones["thigh.L"].head  # unconnected, its head on the thigh's head
    bpy.ops.object.mode_set(mode="POSE")
    with unchanged(rig):
        rigs.select_bones(rig, ["thigh.L"], active="shin.L")
        with pytest.raises(RuntimeError, match="bone 'thigh.L' has zero length between its joints"):
            bpy.ops.limb_ik.add_limb()
    limb = rig.limb_ik.limbs.add()
    limb.name, limb.upper_bone, limb.lower_bone = "leg.L", "thigh.L", "shin.L"
    with unchanged(rig), pytest.raises(RuntimeError, match="bone 'thigh.L' has zero length"):
        bpy.ops.limb_ik.solve()


@pytest.mark.parametrize(
    ("bone", "message"),
    [
        ("shin.L", "its target 'shin.L' is a bone of the limb itself"),
        ("toe.L", "its target 'toe.L' moves with the chain bone 'foot.L'"),
        ("", "the target is the armature itself"),
        ("heel", "target bone 'heel' does not exist in 'Leg'"),
    ],
)
def test_target_on_its_own_chain(leg, bone, message):
    limb = leg.limb_ik.limbs["leg.L"]
    limb.target, limb.target_bone = leg, bone
    with unchanged(leg), pytest.raises(RuntimeError, match=message):
        bpy.ops.limb_ik.solve()


def test_target_parented_to_its_own_chain(leg):
    limb = leg.limb_ik.limbs["leg.L"]
    holder = rigs.empty("Holder")
    holder.parent, holder.parent_type, holder.parent_bone = leg, "BONE", "toe.L"
    limb.target.parent = holder  # through another object, under a bone below the chain
    with unchanged(leg), pytest.raises(RuntimeError, match="the target 'leg.L_target' is parented to the limb"):
        bpy.ops.limb_ik.solve()


def test_deleted_target(leg):
    bpy.data.objects.remove(leg.limb_ik.limbs["leg.L"].target)
    with unchanged(leg), pytest.raises(RuntimeError, match="its target 'leg.L_target' no longer exists"):
        bpy.ops.limb_ik.solve()


def test_edit_mode(leg):
    bpy.ops.object.mode_set(mode="EDIT")
    for operator in (bpy.ops.limb_ik.solve, bpy.ops.limb_ik.detect_limbs, bpy.ops.limb_ik.remove_limb):
        with pytest.raises(RuntimeError, match="Leave Edit Mode first"):
            operator()
    bpy.ops.object.mode_set(mode="POSE")
    assert len(leg.limb_ik.limbs) == 1


def test_add_limb_outside_pose_mode(leg):
    bpy.ops.object.mode_set(mode="OBJECT")
    with unchanged(leg), pytest.raises(RuntimeError, match="Switch the armature to Pose Mode"):
        bpy.ops.limb_ik.add_limb()


@pytest.mark.parametrize("mode", ["QUATERNION", "XYZ"])
def test_locked_rotation(leg, mode):
    bone = leg.pose.bones["shin.L"]
    bone.rotation_mode = mode
    if mode == "QUATERNION":
        bone.lock_rotations_4d, bone.lock_rotation_w = True, True
    else:
        bone.lock_rotation[2] = True
    with unchanged(leg), pytest.raises(RuntimeError, match="bone 'shin.L' has locked rotation"):
        bpy.ops.limb_ik.solve()


def test_one_bad_limb_stops_the_whole_solve(leg):
    # Solve is all or nothing: the good limb is not posed either when another one is broken.
    bpy.ops.object.mode_set(mode="EDIT")
    right = rig_side = leg.data.edit_bones.new("thigh.R")
    right.head, right.tail, right.parent = (-0.1, 0.0, 0.95), (-0.1, 0.0, 0.5), leg.data.edit_bones["hips"]
    shin = leg.data.edit_bones.new("shin.R")
    shin.head, shin.tail, shin.parent = rig_side.tail, Vector((-0.1, 0.0, 0.08)), right
    bpy.ops.object.mode_set(mode="POSE")
    limb = leg.limb_ik.limbs.add()
    limb.name, limb.upper_bone, limb.lower_bone = "leg.R", "thigh.R", "shin.R"
    leg.pose.bones["shin.R"].lock_rotation[0] = True
    with unchanged(leg), pytest.raises(RuntimeError, match="Limb 'leg.R'"):
        bpy.ops.limb_ik.solve()


def test_rig_linked_from_a_library(tmp_path):
    rig = rigs.leg_armature("Linked")
    bpy.ops.limb_ik.detect_limbs()
    bpy.ops.object.mode_set(mode="OBJECT")
    library = tmp_path / "library.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_homefile(app_template="")

    with bpy.data.libraries.load(str(library), link=True) as (source, linked):
        linked.objects = ["Linked"]
    rig = linked.objects[0]
    assert rig.library is not None and len(rig.limb_ik.limbs) == 1
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    for operator in (bpy.ops.limb_ik.solve, bpy.ops.limb_ik.detect_limbs):
        with unchanged(rig), pytest.raises(RuntimeError, match="^Error: Armature 'Linked' is linked from a library"):
            operator()
