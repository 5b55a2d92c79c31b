# SPDX-License-Identifier: GPL-3.0-or-later
"""A limb whose end bone hangs from no bone of its chain (an exported IK foot under the root): the solve poses
it where the shin would carry it, by its location as well as its rotation, in Solve, the bake and planting."""

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Vector


def _leg_with_a_loose_foot(connected: bool = False) -> bpy.types.Object:
    """root → hips → thigh.L → shin.L, and foot.L (with toe.L) under the root where the shin ends, as a glTF
    export's IK foot: the leg reaches for it, nothing in the leg carries it."""
    obj, bones = rigs.edit_armature("Loose")
    root = bones.new("root")
    root.head, root.tail = (0.0, 0.0, 0.0), (0.0, 0.2, 0.0)
    hips = bones.new("hips")
    hips.head, hips.tail, hips.parent = (0.0, 0.0, 1.0), (0.0, 0.0, 1.15), root
    thigh, shin, _ = rigs.add_leg(bones, hips, ("thigh.L", "shin.L", "spare.L"), 0.1)
    bones.remove(bones["spare.L"])
    foot = bones.new("foot.L")
    foot.head, foot.tail, foot.parent, foot.use_connect = shin.tail, (0.1, -0.14, 0.02), root, connected
    toe = bones.new("toe.L")
    toe.head, toe.tail, toe.parent, toe.use_connect = foot.tail, (0.1, -0.2, 0.02), foot, True
    bpy.ops.object.mode_set(mode="POSE")
    for bone in obj.pose.bones:
        bone.rotation_mode = "QUATERNION"
    obj.pose.bones["root"].location = (0.3, -0.2, 0.1)  # the root moves the foot and the body alike
    return obj


def _shin_reach(obj) -> float:
    """World distance from the shin's head to the loose foot's head: the shin's length, for the solve."""
    bones = obj.pose.bones
    return (obj.matrix_world @ bones["foot.L"].head - obj.matrix_world @ bones["shin.L"].head).length


def test_a_loose_foot_is_solved_to_its_target_by_location_and_rotation(lik):
    """Solve on a target moved and turned: the foot's tail and turn are the target's, and its head stays as far
    from the shin's head as at rest, though no bone of the chain carries it."""
    rig = _leg_with_a_loose_foot()
    limb = lik.api.add_limb(rig, ["thigh.L", "shin.L", "foot.L"])
    assert lik.rig.limbs.chain.chain_of(rig, rig.limb_ik.limbs[limb]).loose_end
    bpy.context.view_layer.update()
    reach = _shin_reach(rig)
    rigs.target_at_tip(rig, rig.limb_ik.limbs[limb], (0.05, -0.1, 0.2), (0.3, -0.2, 0.1))
    lik.api.solve(rig)
    bpy.context.view_layer.update()
    assert rigs.goal_error(rig, rig.limb_ik.limbs[limb]) <= 1e-5
    assert rigs.rotation_error(rig, rig.limb_ik.limbs[limb]) <= 1e-5
    assert abs(_shin_reach(rig) - reach) <= 1e-5
    assert Vector(rig.pose.bones["foot.L"].location).length > 0.1  # moved by its location


def test_a_loose_foot_is_baked_with_location_keys(lik):
    """Baking a target that moves over frames keys the loose foot's location and rotation, and at every frame
    the keyed pose alone meets the target."""
    rig = _leg_with_a_loose_foot()
    limb = rig.limb_ik.limbs[lik.api.add_limb(rig, ["thigh.L", "shin.L", "foot.L"])]
    scene, frames = bpy.context.scene, range(1, 6)
    target = rigs.keyed_target(rig, limb, lambda f: (0.02 * f, -0.03 * f, 0.04 * f), frames)
    scene.frame_start, scene.frame_end = frames[0], frames[-1]
    goals = []
    for frame in frames:
        scene.frame_set(frame)
        goals.append(np.array(target.matrix_world.translation))
    report = lik.api.bake(rig)
    assert report.keys > 0 and not report.unreached
    paths = {curve.data_path for curve in lik.rig.keys.actions.fcurves(rig)}
    assert 'pose.bones["foot.L"].location' in paths
    limb.target = None  # the keys alone
    bpy.data.objects.remove(target)
    for frame, goal in zip(frames, goals):
        scene.frame_set(frame)
        assert np.linalg.norm(rigs.world_tip(rig, "foot.L") - goal) <= 1e-5, frame


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda rig: setattr(rig.pose.bones["foot.L"], "lock_location", (True, False, False)), "which is locked"),
        (lambda rig: setattr(rig.data.bones["foot.L"], "use_local_location", False), "which is not local"),
    ],
)
def test_a_loose_foot_whose_location_cannot_be_written_is_refused_in_a_sentence(lik, change, message):
    rig = _leg_with_a_loose_foot()
    change(rig)
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match=f"hangs from no bone of the chain.*{message}"):
        lik.api.add_limb(rig, ["thigh.L", "shin.L", "foot.L"])


def test_a_loose_foot_under_the_pelvis_is_refused_for_planting(lik):
    """Planting moves the pelvis: a foot hanging from it but not from the chain would be carried off where the
    chain puts it, so planting names the limb and the bone instead."""
    rig = _leg_with_a_loose_foot()
    bpy.ops.object.mode_set(mode="EDIT")
    rig.data.edit_bones["foot.L"].parent = rig.data.edit_bones["hips"]
    bpy.ops.object.mode_set(mode="POSE")
    lik.api.add_limb(rig, ["thigh.L", "shin.L", "foot.L"], "leg.L")
    rig.limb_ik.limbs["leg.L"].toe_bone = "toe.L"
    ground = rigs.plane_ground()
    with pytest.raises(lik.api.LimbIKError, match="'foot.L' hangs from the pelvis bone 'hips' but not from its chain"):
        lik.api.plant(rig, ground, limbs=["leg.L"])


def test_a_bone_too_far_from_the_shin_is_no_loose_foot(lik):
    """A bone under the root that stands metres from the shin is not the foot the leg reaches for: refused as
    before, in a sentence, and the rig left as it was."""
    rig = _leg_with_a_loose_foot()
    bpy.ops.object.mode_set(mode="EDIT")
    far = rig.data.edit_bones.new("far")
    far.head, far.tail, far.parent = (3.0, 0.0, 0.0), (3.0, 0.2, 0.0), rig.data.edit_bones["root"]
    bpy.ops.object.mode_set(mode="POSE")
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match="stands too far from it to be the foot"):
        lik.api.add_limb(rig, ["thigh.L", "shin.L", "far"])
