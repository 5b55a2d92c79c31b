# SPDX-License-Identifier: GPL-3.0-or-later
"""The bake's bulk path: F-curves evaluated at once agree with Blender, bake the keys stepping the scene
bakes, and give way to stepping, saying why, wherever something else drives the rig."""

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Euler, Vector
from test_bake import FRAMES, animated_target_scene, baked_channels, key_table


def key_everything(obj, paths, frames, values) -> None:
    """Key ``paths`` of ``obj`` (an object or pose bone) at ``frames`` to ``values(path, frame)``."""
    for frame in frames:
        for path in paths:
            setattr(obj, path, values(path, frame))
            obj.keyframe_insert(path, frame=frame)


def busy_scene(rotation_mode: str):
    """The metarig chasing animated goals of every kind, itself animated: its object and its root bone
    (without Local Location) keyed with mixed interpolations, a Cycles modifier and linear extrapolation;
    the right leg's target carried by a turning parent Empty, at 60% influence; the left hand reaching for
    a bone of another, animated armature."""
    rig, _ = animated_target_scene(rotation_mode)
    scene = bpy.context.scene
    rig.data.bones["spine"].use_local_location = False
    spine = rig.pose.bones["spine"]
    key_everything(
        spine,
        ("location", "rotation_quaternion"),
        range(1, 251, 25),
        lambda path, f: (
            Vector((0.0, 0.02 * np.sin(f / 9), 0.05 * np.cos(f / 13)))
            if path == "location"
            else Euler((0.1 * np.sin(f / 17), 0.05, 0.1 * np.cos(f / 11))).to_quaternion()
        ),
    )
    key_everything(
        rig,
        ("location", "rotation_euler"),
        (1, 90, 180, 250),
        lambda path, f: Vector((0.001 * f, 0.0, 0.0)) if path == "location" else Euler((0.0, 0.0, 0.002 * f)),
    )
    carrier = rigs.empty("Carrier", (0.3, 0.2, 0.1))
    key_everything(carrier, ("rotation_euler",), (1, 40, 80), lambda path, f: Euler((0.0, 0.0, 0.004 * f)))
    scene.frame_set(1)
    right = rig.limb_ik.limbs["leg.R"]
    target = rigs.target_at_tip(rig, right, (0.0, -0.1, 0.1), name="Carried")
    target.parent = carrier
    target.matrix_parent_inverse = carrier.matrix_world.inverted()
    right.influence = 0.6
    other = rigs.leg_armature("Other")
    other.location = rig.matrix_world @ rig.pose.bones["hand.L"].tail - Vector((0.1, 0.0, 0.95))
    hips = other.pose.bones["hips"]
    key_everything(hips, ("location",), (1, 100, 250), lambda path, f: Vector((0.0, 0.0005 * f, 0.0)))
    arm = rig.limb_ik.limbs["arm.L"]
    arm.target, arm.target_bone = other, "thigh.L"
    for curve in lik_fcurves(rig):
        if curve.data_path.endswith("location") and "spine" in curve.data_path:
            curve.extrapolation = "LINEAR"
            for n, key in enumerate(curve.keyframe_points):
                key.interpolation = ("CONSTANT", "LINEAR", "BEZIER")[n % 3]
    for curve in lik_fcurves(carrier):
        curve.modifiers.new("CYCLES")
    for obj in (rig, carrier):  # edits of F-curves in Python are not seen by Blender's evaluation until tagged
        obj.animation_data.action.update_tag()
    rigs.enter_pose_mode(rig)
    scene.frame_set(1)
    return rig


def lik_fcurves(obj):
    from importlib import import_module

    return list(import_module("bl_ext.limb_ik_dev.limb_ik").rig.keys.actions.fcurves(obj) or [])


def stepping(lik, monkeypatch):
    """From here on the bake steps the scene: the bulk evaluation declines."""

    def decline(*args):
        raise lik.rig.frames.bulk.NotBulk("forced for the test")

    monkeypatch.setattr(lik.rig.frames.bulk, "evaluate", decline)


@pytest.mark.parametrize("rotation_mode", ["QUATERNION", "ZYX"])
def test_bulk_keys_agree_with_stepped_keys(lik, monkeypatch, rotation_mode):
    rig = busy_scene(rotation_mode)
    report = lik.api.bake(rig)
    assert report.path == "bulk", report.why
    assert "agree with Blender" in report.why
    bulk = key_table(lik, rig)

    bpy.ops.wm.read_homefile(app_template="")
    rig = busy_scene(rotation_mode)
    stepping(lik, monkeypatch)
    report = lik.api.bake(rig)
    assert report.path == "stepped" and "forced for the test" in report.why
    stepped = key_table(lik, rig)

    assert bulk.keys() == stepped.keys()
    baked = set()
    for channel, keys in stepped.items():
        np.testing.assert_array_equal(bulk[channel]["co"][:, 0], keys["co"][:, 0], err_msg=str(channel))
        np.testing.assert_allclose(bulk[channel]["co"][:, 1], keys["co"][:, 1], rtol=0, atol=1e-5, err_msg=str(channel))
        if len(keys["co"]) >= FRAMES[1]:
            baked.add(channel[0])
    assert baked >= baked_channels(rig)  # the limb bones' rotation channels, every frame


def test_bulk_evaluation_matches_blender_at_every_frame(lik):
    """The pose, the bones the limbs hang from and every goal, as Blender shows them, frame by frame."""
    rig = busy_scene("ZYX")
    planned = lik.rig.plan.make(rig)
    frames = np.arange(FRAMES[0] - 5, FRAMES[1] + 6)  # beyond the keys too: extrapolation, cycles
    pose, goals, bones = lik.rig.frames.bulk.evaluate(planned, bpy.context.scene, frames)
    refs = planned.refs
    assert len(refs) == 3 and len(bones) >= 13
    scene = bpy.context.scene
    for n, frame in enumerate(frames):
        scene.frame_set(int(frame))
        depsgraph = bpy.context.evaluated_depsgraph_get()
        blender = lik.rig.pose.read_pose(rig, rig.evaluated_get(depsgraph)).frame(0)
        np.testing.assert_allclose(pose.world[n], blender.world, atol=1e-6)
        np.testing.assert_allclose(pose.matrices[n, bones], blender.matrices[bones], atol=1e-5)
        np.testing.assert_allclose(pose.location[n, bones], blender.location[bones], atol=1e-6)
        np.testing.assert_allclose(pose.quaternion[n, bones], blender.quaternion[bones], atol=1e-6)
        np.testing.assert_allclose(pose.euler[n, bones], blender.euler[bones], atol=1e-6)
        np.testing.assert_allclose(goals[n], lik.rig.limbs.goals.world_matrices(refs, depsgraph), atol=1e-5)


def driven(rig):
    curve = rig.pose.bones["spine"].driver_add("location", 2)
    curve.driver.type = "SCRIPTED"
    curve.driver.expression = "frame * 0.0005"


def constrained(rig):
    constraint = rig.pose.bones["spine"].constraints.new("COPY_ROTATION")
    constraint.target = rigs.empty("Leader")


def in_nla(rig):
    target = bpy.data.objects["Target"]
    action = target.animation_data.action
    track = target.animation_data.nla_tracks.new()
    track.strips.new("walk", 1, action)
    target.animation_data.action = None


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (constrained, "bone 'spine' of 'metarig' has the constraint 'Copy Rotation'"),
        (driven, "'metarig' has a driver on pose.bones[\"spine\"].location"),
        (in_nla, "'Target' has NLA tracks"),
    ],
    ids=["constraint", "driver", "NLA strip"],
)
def test_anything_but_f_curves_makes_the_bake_step_the_scene_and_say_why(lik, monkeypatch, make, reason):
    rig, _ = animated_target_scene("QUATERNION")
    make(rig)
    report = lik.api.bake(rig)
    assert report.path == "stepped"
    assert report.why == f"Stepped through the scene: {reason}."
    keys = key_table(lik, rig)

    bpy.ops.wm.read_homefile(app_template="")
    rig, _ = animated_target_scene("QUATERNION")
    make(rig)
    stepping(lik, monkeypatch)
    lik.api.bake(rig)
    for channel, stepped in key_table(lik, rig).items():
        np.testing.assert_array_equal(keys[channel]["co"], stepped["co"], err_msg=str(channel))


def read_goals_off(lik, monkeypatch, metres: float) -> None:
    """Make the bulk reading of the F-curves put every goal ``metres`` higher than Blender does."""
    evaluate = lik.rig.frames.bulk.evaluate

    def off(*args):
        pose, goals, bones = evaluate(*args)
        goals = goals.copy()
        goals[:, :, 2, 3] += metres
        return pose, goals, bones

    monkeypatch.setattr(lik.rig.frames.bulk, "evaluate", off)


def test_a_bulk_evaluation_that_differs_from_blender_is_not_used(lik, monkeypatch):
    """Checked at a few frames before anything is written: off by a millimetre is off."""
    rig, _ = animated_target_scene("QUATERNION")
    read_goals_off(lik, monkeypatch, 1e-3)
    report = lik.api.bake(rig)
    assert report.path == "stepped"
    assert report.why.startswith("Stepped through the scene: F-curves evaluated in bulk differ from Blender's")
    assert "(goals)" in report.why


def carried_scene(distance: float):
    """The metarig and its animated target carried ``distance`` along x over the frames by a keyed parent: 3 km
    away Blender's single-precision matrices are a tenth of a millimetre apart from one another, 6e-5 of the rig."""
    rig, target = animated_target_scene("QUATERNION")
    carrier = rigs.empty("Carrier")
    for obj in (rig, target):
        obj.parent = carrier
    key_everything(carrier, ("location",), FRAMES, lambda path, f: Vector((distance * (f - 1) / (FRAMES[1] - 1), 0, 0)))
    return rig


def test_a_take_far_from_the_origin_is_read_in_bulk(lik, monkeypatch):
    """Blender's rounding of numbers far from the origin is no disagreement (the keys are those baked near the
    origin); a centimetre still is."""
    report = lik.api.bake(carried_scene(0.0))
    assert report.path == "bulk", report.why
    near = key_table(lik, bpy.data.objects["metarig"])

    bpy.ops.wm.read_homefile(app_template="")
    report = lik.api.bake(carried_scene(3000.0))
    assert report.path == "bulk", report.why
    far = key_table(lik, bpy.data.objects["metarig"])
    assert far.keys() == near.keys()
    for channel, keys in near.items():
        np.testing.assert_allclose(far[channel]["co"], keys["co"], rtol=0, atol=1e-4, err_msg=str(channel))

    bpy.ops.wm.read_homefile(app_template="")
    rig = carried_scene(3000.0)
    read_goals_off(lik, monkeypatch, 1e-2)
    assert lik.api.bake(rig).path == "stepped"
