# SPDX-License-Identifier: GPL-3.0-or-later
"""Solve on real rigs: every reachable goal met in world space, bone lengths kept, twist kept, influence."""

import math

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Euler, Matrix, Vector

#: Goals are met to this distance in world space (metres).
REACHED = 1e-5
#: Bone lengths and joint gaps stay the same to this (armature units).
RIGID = 1e-5
#: The end bone's world axes match the target's to this.
TURNED = 1e-5


def solve_to_targets(rig, offsets: dict[str, tuple], turn=(0.2, -0.1, 0.15), rigid: bool = True) -> None:
    """Give each named limb a target at its tip moved by its world offset and turned, solve, and check
    that every goal is met, three-bone end rotations too, and (``rigid``) no bone changed length."""
    limbs = rig.limb_ik.limbs
    for name, offset in offsets.items():
        rigs.target_at_tip(rig, limbs[name], offset, turn)
    before = rigs.segments(rig)
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    for name in offsets:
        assert rigs.goal_error(rig, limbs[name]) <= REACHED, name
        if limbs[name].end_bone and _uniform(rig):
            assert rigs.rotation_error(rig, limbs[name]) <= TURNED + _shear(rig, limbs[name]), name
    if rigid:
        np.testing.assert_allclose(rigs.segments(rig), before, atol=RIGID)


def _uniform(rig) -> bool:
    scale = np.array(rig.matrix_world.to_scale())
    return bool(np.ptp(scale) < 1e-6)


def _shear(rig, limb) -> float:
    """How far the pose scales above the end bone are from uniform: an end bone under a sheared
    parent frame cannot copy a rotation more exactly than that."""
    bone = rig.pose.bones[limb.end_bone].parent
    worst = 0.0
    while bone is not None:
        worst = max(worst, float(np.ptp(np.array(bone.scale))))
        bone = bone.parent
    return worst


def test_rigify_human_legs_and_arms():
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    offsets = {"leg.L": (0.05, -0.15, 0.2), "leg.R": (-0.1, 0.1, 0.1), "arm.L": (0.0, -0.2, 0.15)}
    solve_to_targets(rig, offsets | {"arm.R": (0.15, -0.1, -0.1)})


def test_quadruped_hind_leg_three_bones():
    rig = rigs.quadruped_metarig()
    bpy.ops.limb_ik.detect_limbs()
    assert rig.limb_ik.limbs["leg.L"].end_bone == "foot.L"
    solve_to_targets(rig, {"leg.L": (0.0, -0.1, 0.1), "front_leg.R": (0.0, 0.05, 0.08)}, turn=(0.1, 0.0, 0.1))


def knee_forward(rig, limb, forward) -> float:
    """How far the knee sits in front of the hip-ankle line, along the world direction ``forward``."""
    hip = rigs.world_matrix(rig, limb.upper_bone)[:3, 3]
    knee = rigs.world_tip(rig, limb.upper_bone)
    ankle = rigs.world_tip(rig, limb.lower_bone)
    axis = (ankle - hip) / np.linalg.norm(ankle - hip)
    offset = (knee - hip) - axis * np.dot(knee - hip, axis)
    return float(np.dot(offset, forward))


def test_bvh_euler_rig_knees_bend_forward(tmp_path):
    rig = rigs.bvh_rig(tmp_path)
    assert {rig.pose.bones[n].rotation_mode for n in ("LeftUpLeg", "LeftLeg", "LeftFoot")} <= {
        "XYZ",
        "XZY",
        "YXZ",
        "YZX",
        "ZXY",
        "ZYX",
    }
    bpy.ops.limb_ik.detect_limbs()
    bpy.context.scene.frame_set(2)
    forward = np.array((0.0, -1.0, 0.0))  # the toes point along -Y
    # Raising the feet needs more bend: the knees must come further forward, not fold backwards.
    solve_to_targets(rig, {"leg.L": (0.0, -0.05, 0.2), "leg.R": (0.02, 0.0, 0.25)}, turn=(0.0, 0.0, 0.0))
    for limb in rig.limb_ik.limbs:
        assert knee_forward(rig, limb, forward) > 0.1, limb.name


def test_gltf_import_under_a_rotated_empty(tmp_path):
    rig = rigs.gltf_rig(tmp_path)
    # The importer leaves pose scales like (1, 1, 1.000015) on the bones: a real, slightly sheared input.
    parent = rigs.empty("Y_up")  # as the importer does for some files: the rig under a turned Empty
    parent.rotation_euler = (math.pi / 2, 0.0, 0.3)
    rig.parent = parent
    bpy.context.view_layer.objects.active = rig
    bpy.ops.limb_ik.detect_limbs()
    solve_to_targets(rig, {"leg.L": (0.05, -0.1, 0.15)})


DEG160 = math.radians(160.0)


@pytest.mark.parametrize(
    ("rolls", "connected", "modes"),
    [
        ((DEG160, -DEG160, DEG160), True, ("QUATERNION",) * 3),
        ((-DEG160, DEG160, 0.0), False, ("ZYX", "ZYX", "ZYX")),
        ((DEG160, DEG160, -DEG160), True, ("XZY", "AXIS_ANGLE", "QUATERNION")),
        ((0.0, -DEG160, DEG160), False, ("AXIS_ANGLE", "XZY", "ZYX")),
    ],
)
def test_leg_rolls_joints_and_rotation_modes(rolls, connected, modes):
    rig = rigs.leg_armature(rolls=rolls, connected=connected, modes=modes)
    # Start from an animated pose that is not the rest pose, in every bone's own mode.
    for name, turn in (("thigh.L", (0.3, 0.1, -0.2)), ("shin.L", (-0.2, 0.05, 0.1)), ("foot.L", (0.1, 0.2, 0.0))):
        bone = rig.pose.bones[name]
        rigs.set_rotation(bone, Euler(turn).to_quaternion())
    bpy.ops.limb_ik.detect_limbs()
    solve_to_targets(rig, {"leg.L": (0.03, -0.1, 0.15)})
    for name, mode in zip(("thigh.L", "shin.L", "foot.L"), modes):
        assert rig.pose.bones[name].rotation_mode == mode


def test_armature_translated_rotated_and_scaled_non_uniformly():
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    rig.matrix_world = Matrix.LocRotScale(
        Vector((1.0, -2.0, 0.5)), Euler((0.3, -0.2, 1.1)).to_quaternion(), Vector((1.3, 0.8, 1.1))
    )
    bpy.context.view_layer.update()
    solve_to_targets(rig, {"leg.L": (0.05, -0.1, 0.15), "arm.R": (-0.1, 0.1, 0.1)})


@pytest.mark.parametrize(
    "end_bone",
    [
        "",
        "foot.L",
    ],
)
def test_parent_bone_scaled_non_uniformly(end_bone):
    rig = rigs.leg_armature(rolls=(DEG160, -DEG160, 0.3), connected=False)
    hips = rig.pose.bones["hips"]
    hips.scale = (1.5, 0.7, 1.2)
    hips.rotation_quaternion = Euler((0.3, 0.2, 0.1)).to_quaternion()
    limb = rig.limb_ik.limbs.add()
    limb.name, limb.upper_bone, limb.lower_bone, limb.end_bone = "leg.L", "thigh.L", "shin.L", end_bone
    # Under a sheared parent, armature-space lengths change with direction; the goal must still be met.
    solve_to_targets(rig, {"leg.L": (0.03, -0.1, 0.15)}, rigid=False)


def test_animated_parent_bones():
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    rigs.enter_pose_mode(rig)
    for bone_name, turns in (("spine", ((0, 0, 0), (0.2, 0.1, -0.3))), ("spine.003", ((0, 0, 0), (-0.3, 0.2, 0.4)))):
        bone = rig.pose.bones[bone_name]
        bone.rotation_mode = "XYZ"
        for frame, turn in zip((1, 11), turns):
            bone.rotation_euler = turn
            bone.location = (0.0, 0.1 * frame / 11, 0.0)
            bone.keyframe_insert("rotation_euler", frame=frame)
            bone.keyframe_insert("location", frame=frame)
    bpy.context.scene.frame_set(6)  # halfway: the parents' pose only exists in the evaluated rig
    solve_to_targets(rig, {"leg.L": (0.05, -0.1, 0.15), "leg.R": (0.0, 0.0, 0.1), "arm.L": (0.0, -0.15, 0.1)})


def in_plane_offset(rig, limb, closer: float, across: float) -> Vector:
    """A world offset for the limb's tip inside the plane of its upper and lower bones: ``closer`` toward
    the root, ``across`` perpendicular to the root-tip line."""
    hip = rigs.world_matrix(rig, limb.upper_bone)[:3, 3]
    knee = rigs.world_tip(rig, limb.upper_bone)
    tip = rigs.world_tip(rig, limb.lower_bone)
    axis = (tip - hip) / np.linalg.norm(tip - hip)
    side = (knee - hip) - axis * np.dot(knee - hip, axis)
    side /= np.linalg.norm(side)
    return Vector(-closer * axis + across * side)


@pytest.mark.parametrize("rolls", [(0.0, 0.0, 0.0), (DEG160, -DEG160, 0.0), (-DEG160, DEG160, 0.0)])
def test_upper_bone_does_not_twist_when_the_goal_stays_in_the_leg_plane(rolls):
    rig = rigs.leg_armature(rolls=rolls)
    rigs.select_bones(rig, ["thigh.L"], active="shin.L")
    assert bpy.ops.limb_ik.add_limb() == {"FINISHED"}
    limb = rig.limb_ik.limbs["leg.L"]
    target = rigs.target_at_tip(rig, limb)
    for closer, across in ((0.1, 0.0), (0.05, 0.08), (-0.02, -0.05)):
        before = {name: rigs.local_rotation(rig, name) for name in ("thigh.L", "shin.L")}
        target.location += in_plane_offset(rig, limb, closer, across)
        assert bpy.ops.limb_ik.solve() == {"FINISHED"}
        assert rigs.goal_error(rig, limb) <= REACHED
        for name, rotation in before.items():
            assert rigs.twist_angle(rotation, rigs.local_rotation(rig, name)) < 1e-5, name


def test_metarig_thigh_keeps_its_twist():
    rig = rigs.human_metarig()
    rigs.enter_pose_mode(rig)
    rigs.select_bones(rig, ["thigh.L"], active="shin.L")
    assert bpy.ops.limb_ik.add_limb() == {"FINISHED"}
    limb = rig.limb_ik.limbs["leg.L"]
    before = rigs.local_rotation(rig, "thigh.L")
    rigs.target_at_tip(rig, limb, in_plane_offset(rig, limb, 0.15, 0.05))
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert rigs.goal_error(rig, limb) <= REACHED
    assert rigs.twist_angle(before, rigs.local_rotation(rig, "thigh.L")) < 1e-5


def test_influence_blends_from_the_animated_pose():
    rig = rigs.leg_armature(modes=("ZYX", "QUATERNION", "AXIS_ANGLE"))
    bpy.ops.limb_ik.detect_limbs()
    limb = rig.limb_ik.limbs["leg.L"]
    target = rigs.target_at_tip(rig, limb, (0.05, -0.1, 0.2), (0.3, 0.0, 0.2))
    names = ("thigh.L", "shin.L", "foot.L")
    animated = {n: rigs.local_rotation(rig, n) for n in names}
    start = rigs.pose_snapshot(rig)
    tip = rigs.world_tip(rig, "foot.L")

    limb.influence = 0.0
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    np.testing.assert_allclose(rigs.pose_snapshot(rig), start, atol=1e-6)

    limb.influence = 1.0
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    full = {n: rigs.local_rotation(rig, n) for n in names}
    assert rigs.goal_error(rig, limb) <= REACHED

    for n in names:  # back to the animated pose
        rigs.set_rotation(rig.pose.bones[n], animated[n])
    limb.influence = 0.5
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    for n in names:
        half = rigs.local_rotation(rig, n)
        whole = animated[n].rotation_difference(full[n]).angle
        assert whole > 0.01, n
        assert animated[n].rotation_difference(half).angle == pytest.approx(whole / 2, abs=1e-5), n
        assert half.rotation_difference(full[n]).angle == pytest.approx(whole / 2, abs=1e-5), n
    goal = np.array(target.matrix_world.translation)
    halfway = rigs.world_tip(rig, "foot.L")
    assert 1e-3 < np.linalg.norm(halfway - goal) < np.linalg.norm(tip - goal) - 1e-3


@pytest.mark.parametrize("degrees", [90.0, 180.0])
def test_a_pole_swinging_the_metarig_leg_into_a_new_plane_bends_the_knee_about_its_hinge(degrees):
    """Issue 23: with each bone turned by its smallest rotation the knee turned 70.5 degrees off its hinge for a
    pole turned by 90 degrees, and bent backwards for one turned by 180. The thigh now rolls to carry the hinge:
    the shin's local rotation stays a bend about the rest hinge axis, forward, as in Rigify's own IK."""
    rig = rigs.human_metarig()
    rigs.enter_pose_mode(rig)
    rigs.select_bones(rig, ["thigh.L"], active="shin.L")
    assert bpy.ops.limb_ik.add_limb() == {"FINISHED"}
    limb = rig.limb_ik.limbs["leg.L"]
    thigh, shin = (rig.data.bones[name] for name in ("thigh.L", "shin.L"))
    upper, lower = (np.array(bone.tail_local) - np.array(bone.head_local) for bone in (thigh, shin))
    bend = np.cross(upper, lower)  # the rest bend's axis, armature space
    assert np.linalg.norm(bend) > 1e-3 * thigh.length * shin.length  # the metarig's knee is bent at rest
    hinge = Vector(np.array(shin.matrix_local.to_3x3().inverted()) @ (bend / np.linalg.norm(bend)))

    target = rigs.target_at_tip(rig, limb, (0.05, -0.1, 0.15))
    hip, knee = rigs.world_matrix(rig, "thigh.L")[:3, 3], rigs.world_tip(rig, "thigh.L")
    goal = np.array(target.matrix_world.translation)
    axis = (goal - hip) / np.linalg.norm(goal - hip)
    side = (knee - hip) - axis * np.dot(knee - hip, axis)
    turned = np.array(Matrix.Rotation(math.radians(degrees), 3, Vector(axis)) @ Vector(side / np.linalg.norm(side)))
    limb.pole = rigs.empty("Knee pole", hip + 0.5 * (goal - hip) + turned)
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert rigs.goal_error(rig, limb) <= REACHED
    # The knee points at the pole: it sits on the pole's side of the hip-ankle line.
    assert knee_forward(rig, limb, turned) > 0.05

    rotation = rigs.local_rotation(rig, "shin.L")
    assert math.degrees(hinge.angle(rotation @ hinge)) < 1.0  # a turn about the hinge, no twist
    # Bent forward about the hinge: the shin's rest bend and its local turn add up to a bend between 0 and 180.
    shin_in_thigh = np.array(thigh.matrix_local.to_3x3().inverted() @ shin.matrix_local.to_3x3() @ rotation.to_matrix())
    direction = shin_in_thigh[:, 1]
    forward = np.array(thigh.matrix_local.to_3x3().inverted()) @ bend
    assert np.dot(np.cross((0.0, 1.0, 0.0), direction), forward) > 0.0
