# SPDX-License-Identifier: GPL-3.0-or-later
"""Feet that are rigid parts: a mesh parented to each foot bone, no skin, the foot bones under the root where the
shins end (a robot exported with baked IK feet, as three.js' RobotExpressive is). Detect Limbs gives each leg its
foot by name, and planting stands the feet's meshes, not their bones, on the ground."""

import math

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Matrix

TOE_DOWN = math.radians(20.0)  #: how far the take pitches the left foot toe down at frames 5-8


def _robot() -> bpy.types.Object:
    """root → hips → thigh > shin on each side, and an arm whose forearm carries two fingers 45 cm long; foot.L and
    foot.R under the root where the shins end, short bones pointing ahead at the ankle's height, each carrying a box
    8 cm deep whose underside is the floor at rest. Keyed standing for frames 1-12, the left foot pitched toe down at
    frames 5-8: its box's toe 6 cm into the floor."""
    obj, bones = rigs.edit_armature("Robot")
    root = bones.new("root")
    root.head, root.tail = (0.0, 0.0, 0.0), (0.0, 0.2, 0.0)
    hips = bones.new("hips")
    hips.head, hips.tail, hips.parent = (0.0, 0.0, 1.0), (0.0, 0.0, 1.15), root
    for side, x in (("L", 0.1), ("R", -0.1)):
        _, shin, spare = rigs.add_leg(bones, hips, (f"thigh.{side}", f"shin.{side}", f"spare.{side}"), x)
        bones.remove(spare)
        foot = bones.new(f"foot.{side}")
        foot.head, foot.tail, foot.parent = shin.tail, (x, -0.03, 0.08), root
        # An arm hanging from the shoulders, no hand bone, two long fingers below its forearm (three bones each).
        _, forearm, spare = rigs.add_leg(
            bones, hips, (f"upper_arm.{side}", f"forearm.{side}", f"spare.{side}"), x * 2.5, 0.6
        )
        bones.remove(spare)
        for finger, across in (("A", -0.03), ("B", 0.03)):
            parent, top = forearm, forearm.tail
            for number in range(3):
                bone = bones.new(f"Finger{finger}{number}{side}")
                bone.head, bone.tail = top, (x * 2.5 + across, 0.0, top[2] - 0.15)
                bone.parent, parent, top = parent, bone, bone.tail
    bpy.ops.object.mode_set(mode="POSE")
    for bone in obj.pose.bones:
        bone.rotation_mode = "QUATERNION"
    for side, x in (("L", 0.1), ("R", -0.1)):
        corners = [(x + dx, y, z) for dx in (-0.05, 0.05) for y in (0.05, -0.2) for z in (0.0, 0.08)]
        faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
        mesh = bpy.data.meshes.new(f"Foot{side}")
        mesh.from_pydata(corners, [], faces)
        part = bpy.data.objects.new(f"Foot{side}", mesh)
        bpy.context.scene.collection.objects.link(part)
        part.parent, part.parent_type, part.parent_bone = obj, "BONE", f"foot.{side}"
        bone = obj.data.bones[f"foot.{side}"]
        part.matrix_parent_inverse = (bone.matrix_local @ Matrix.Translation((0.0, bone.length, 0.0))).inverted()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 12
    foot = obj.pose.bones["foot.L"]
    for frame in range(1, 13):
        pitch = TOE_DOWN if 5 <= frame <= 8 else 0.0
        foot.rotation_quaternion = (math.cos(pitch / 2), -math.sin(pitch / 2), 0.0, 0.0)
        for bone in obj.pose.bones:
            bone.keyframe_insert("rotation_quaternion", frame=frame)
            bone.keyframe_insert("location", frame=frame)
    return obj


def _lowest(part: bpy.types.Object) -> float:
    """The lowest world height of the part's vertices, as Blender evaluates them."""
    evaluated = rigs.evaluated(part)
    return min((evaluated.matrix_world @ vertex.co).z for vertex in evaluated.data.vertices)


def _lowest_over(parts, frames) -> np.ndarray:
    """(F, parts) :func:`_lowest` of each part at each frame."""
    scene, lowest = bpy.context.scene, []
    for frame in frames:
        scene.frame_set(frame)
        lowest.append([_lowest(part) for part in parts])
    return np.array(lowest)


def test_detect_limbs_gives_a_leg_the_foot_named_for_it_outside_its_chain(lik):
    """Each leg is found by name without a foot below its shin, and takes its side's foot, under the root, which its
    shin reaches for by the foot's location; the fingers below an arm found by name are no limbs of their own (two
    fingers of one hand were paired as a left and a right arm by shape)."""
    rig = _robot()
    lik.api.detect_limbs(rig)
    table = {limb.name: (limb.upper_bone, limb.lower_bone, limb.end_bone) for limb in rig.limb_ik.limbs}
    assert table == {
        "leg.L": ("thigh.L", "shin.L", "foot.L"),
        "leg.R": ("thigh.R", "shin.R", "foot.R"),
        "arm.L": ("upper_arm.L", "forearm.L", ""),
        "arm.R": ("upper_arm.R", "forearm.R", ""),
    }
    assert lik.rig.limbs.chain.chain_of(rig, rig.limb_ik.limbs["leg.L"]).loose_end


def test_a_rigid_foot_keyed_into_the_floor_is_planted_on_its_mesh(lik):
    """The take pitches the left foot's box 6 cm into the floor while its bone stays above it; planted on a plane at
    the floor, no vertex of either box goes more than a millimetre under it, and the right foot, standing flat,
    keeps its underside on the plane."""
    rig = _robot()
    parts = [bpy.data.objects["FootL"], bpy.data.objects["FootR"]]
    frames = range(1, 13)
    authored = _lowest_over(parts, frames)
    assert authored[4:8, 0].max() < -0.05  # the take has the left box's toe in the floor
    ground = rigs.plane_ground()
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    planted = _lowest_over(parts, frames)
    assert planted.min() >= -1e-3
    assert np.abs(planted[:, 1]).max() <= 1e-3


def test_legs_with_no_foot_to_find_are_named_in_the_refusal(lik):
    """Feet named so that no rule finds them (``Block.L``, ``Block.R``): the legs are found without an end bone, and
    planting refuses in a sentence that names them and what to set, the rig left as it was."""
    rig = _robot()
    for side in "LR":
        rig.data.bones[f"foot.{side}"].name = f"Block.{side}"
    lik.api.detect_limbs(rig)
    assert not rig.limb_ik.limbs["leg.L"].end_bone
    before = rigs.fcurve_keys(rig)
    with pytest.raises(lik.api.LimbIKError, match=r"'leg.L', 'leg.R' have no end bone.*set each one's End Bone"):
        lik.api.plant(rig, rigs.plane_ground())
    after = rigs.fcurve_keys(rig)
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)
