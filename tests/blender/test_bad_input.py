# SPDX-License-Identifier: GPL-3.0-or-later
"""Bad input: the operator fails with a sentence naming what is wrong, and the scene is left as it was."""

import re
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


def key_table(lik, obj) -> dict:
    curves = lik.rig.keys.actions.fcurves(obj) or []
    return {(c.data_path, c.array_index): lik.rig.keys.actions.read_keys(c)["co"].tolist() for c in curves}


@contextmanager
def nothing_keyed(lik, rig):
    """The block must leave the rig's pose, limbs, keys and actions, and the frame, as they were."""
    keys, actions, frame = key_table(lik, rig), sorted(bpy.data.actions.keys()), bpy.context.scene.frame_current
    with unchanged(rig):
        yield
    np.testing.assert_equal(key_table(lik, rig), keys)  # NaN keys equal too
    assert sorted(bpy.data.actions.keys()) == actions
    assert bpy.context.scene.frame_current == frame


@pytest.mark.parametrize(
    ("hidden", "message"),
    [
        ("rig", "Armature 'Leg' is disabled in viewports, so Blender does not evaluate its pose"),
        ("its collection", "Armature 'Leg' is only in collections disabled in viewports, so Blender does not"),
        ("target", "Limb 'leg.L': its target 'leg.L_target' is disabled in viewports, so Blender does not move it"),
    ],
)
def test_what_blender_does_not_evaluate_is_refused(lik, leg, hidden, message):
    """Disabled in viewports, an armature or target is not evaluated: its pose and place are stale. Baking a
    hidden rig used to succeed with keys up to 0.44 m off."""
    target = leg.limb_ik.limbs["leg.L"].target
    target.keyframe_insert("location", frame=1)
    target.location.z += 0.1
    target.keyframe_insert("location", frame=10)
    if hidden == "its collection":
        holder = bpy.data.collections.new("Characters")
        bpy.context.scene.collection.children.link(holder)
        holder.objects.link(leg)
        bpy.context.scene.collection.objects.unlink(leg)
        holder.hide_viewport = True
    else:
        (leg if hidden == "rig" else target).hide_viewport = True
    with nothing_keyed(lik, leg):
        for operator in (bpy.ops.limb_ik.solve, bpy.ops.limb_ik.bake):
            with pytest.raises(RuntimeError, match=message):
                operator()


def test_a_library_override_playing_a_linked_action_is_refused(lik, tmp_path):
    """Keys written into a linked action would be lost on saving: the bake refuses, twice, and Match FK
    too, changing nothing. The bake used to key the linked action, then fail with an IndexError."""
    rig = rigs.leg_armature("Character")
    bpy.ops.object.mode_set(mode="OBJECT")
    lik.api.add_limb(rig, ["thigh.L", "shin.L", "foot.L"])
    rig.pose.bones["hips"].keyframe_insert("location", frame=1)  # the library's own animation
    rigs.save_library(tmp_path / "characters.blend", rig)
    bpy.ops.wm.read_homefile(app_template="")
    rig = rigs.library_override(tmp_path / "characters.blend")
    rigs.target_at_tip(rig, rig.limb_ik.limbs["leg.L"], (0.0, -0.1, 0.1))
    for operator in (
        lambda: bpy.ops.limb_ik.bake(frame_start=1, frame_end=3),
        bpy.ops.limb_ik.bake,
        bpy.ops.limb_ik.match_fk,
    ):
        with nothing_keyed(lik, rig), pytest.raises(RuntimeError, match=r"plays the action 'CharacterAction' linked"):
            operator()
    assert lik.api.solve(rig).unreached == []  # the pose itself is the override's own


def test_a_target_following_the_limb_through_another_armatures_constraint_is_a_cycle(leg):
    """A target bone of another armature, copying the location of the limb's toe: solving would chase it.
    It used to be solved, and reported reached or unreached by chance."""
    other = rigs.named_armature([("a", "b", "ctrl")], "Controls")
    bpy.ops.object.mode_set(mode="OBJECT")
    copy = other.pose.bones["ctrl"].constraints.new("COPY_LOCATION")
    copy.target, copy.subtarget = leg, "toe.L"
    limb = leg.limb_ik.limbs["leg.L"]
    limb.target, limb.target_bone = other, "ctrl"
    bpy.context.view_layer.objects.active = leg
    message = (
        r"the target 'Controls' follows the chain bone 'foot\.L' through the constraint 'Copy Location' on "
        r"'Controls' bone 'ctrl', so it would move with the limb it drives"
    )
    with unchanged(leg), pytest.raises(RuntimeError, match=message):
        bpy.ops.limb_ik.solve()


@pytest.mark.parametrize("axis", [0, 1])
def test_a_zero_scaled_armature_is_a_sentence(lik, leg, axis):
    """Solving, baking, detecting limbs and planting (which measures the bones in the world to tell feet from
    hands) used to raise numpy's LinAlgError from the API and a traceback from the operators."""
    ground = rigs.plane_ground()
    bpy.context.view_layer.objects.active = leg
    leg.scale[axis] = 0.0
    bpy.context.view_layer.update()
    message = r"^(Error: )?Armature 'Leg' is scaled to zero on an axis \(its object or a parent\), so its bones"
    calls = (
        bpy.ops.limb_ik.solve,
        bpy.ops.limb_ik.bake,
        bpy.ops.limb_ik.detect_limbs,
        lambda: lik.api.solve(leg),
        lambda: lik.api.detect_limbs(leg),
        lambda: lik.api.plant(leg, ground),
    )
    with nothing_keyed(lik, leg):
        for call in calls:
            with pytest.raises((RuntimeError, lik.api.LimbIKError), match=message):
                call()
    assert leg.limb_ik.ground is None


def test_a_target_deleted_during_the_bake_is_a_sentence(lik, leg):
    """Another add-on's frame handler deletes the target on the third frame read. It used to surface as a raw
    ReferenceError."""
    frames = []

    def delete_on_third_frame(scene, depsgraph=None):
        frames.append(scene.frame_current)
        target = bpy.data.objects.get("leg.L_target")
        if len(frames) == 3 and target is not None:
            bpy.data.objects.remove(target)

    pose, keys, actions = rigs.pose_snapshot(leg), key_table(lik, leg), sorted(bpy.data.actions.keys())
    bpy.app.handlers.frame_change_post.append(delete_on_third_frame)
    try:
        with pytest.raises(lik.api.LimbIKError, match=r"^Limb 'leg\.L': its target 'leg\.L_target' was deleted while"):
            lik.api.bake(leg, frame_start=1, frame_end=6)
    finally:
        bpy.app.handlers.frame_change_post.remove(delete_on_third_frame)
    assert (key_table(lik, leg), sorted(bpy.data.actions.keys())) == (keys, actions)
    np.testing.assert_array_equal(rigs.pose_snapshot(leg), pose)
    assert bpy.context.scene.frame_current == 1


def _driven(rig, bone: str, channel: str, index: int = 1, value: float = 0.5):
    curve = rig.pose.bones[bone].driver_add(channel, index)
    curve.driver.type = "SCRIPTED"
    curve.driver.expression = repr(value)


def _constrained(rig, bone: str):
    rig.pose.bones[bone].constraints.new("COPY_ROTATION").target = rigs.empty("Leader")


@pytest.mark.parametrize(
    ("mode", "override", "message"),
    [
        ("QUATERNION", lambda rig: _driven(rig, "thigh.L", "rotation_quaternion"), "has a driver on rotation_quat"),
        ("XYZ", lambda rig: _driven(rig, "thigh.L", "rotation_euler"), "has a driver on rotation_euler"),
        ("QUATERNION", lambda rig: _constrained(rig, "thigh.L"), "has the constraint 'Copy Rotation'"),
    ],
    ids=["quaternion driver", "Euler driver", "constraint"],
)
def test_what_overrides_a_limb_bone_is_a_problem_on_that_limb(lik, mode, override, message):
    """A driver (to a constant) on the thigh's rotation put the tip 54 cm off while Solve said "Solved 1 limb",
    check was empty and live showed no status; so does a constraint. Solve, Bake, check and live name it."""
    rig = rigs.human_with_targets()
    rig.pose.bones["thigh.L"].rotation_mode = mode
    override(rig)
    sentence = f"Limb 'leg.L': bone 'thigh.L' {message}"
    with nothing_keyed(lik, rig):
        for operator in (bpy.ops.limb_ik.solve, bpy.ops.limb_ik.bake):
            with pytest.raises(RuntimeError, match=sentence):
                operator()
    assert set(lik.api.check(rig)) == {"leg.L"} and lik.api.check(rig)["leg.L"].startswith(sentence)
    rig.limb_ik.live = True
    bpy.context.scene.frame_set(2)
    assert [limb.name for limb in rig.limb_ik.limbs if limb.status] == ["leg.L"]
    assert rig.limb_ik.limbs["leg.L"].status.startswith(sentence)


def test_a_driver_on_a_channel_the_solve_does_not_write_is_solved_through(lik):
    """A quaternion bone's Euler channel and a bone's location (the thigh's head moved): the solve reads them."""
    rig = rigs.human_with_targets()
    _driven(rig, "thigh.L", "rotation_euler")
    _driven(rig, "thigh.L", "location", value=0.03)
    assert not lik.api.check(rig)
    lik.api.solve(rig)
    assert rigs.goal_error(rig, rig.limb_ik.limbs["leg.L"]) <= 1e-5


def test_an_armature_without_bones_is_a_sentence(lik):
    """It used to raise "ValueError: min() arg is an empty sequence" from reading the bones' shape."""
    rig, _ = rigs.edit_armature("Bare")
    bpy.ops.object.mode_set(mode="POSE")
    message = r"^(Error: )?Armature 'Bare' has no bones"
    with unchanged(rig):
        for call in (bpy.ops.limb_ik.detect_limbs, lambda: lik.api.detect_limbs(rig)):
            with pytest.raises((RuntimeError, lik.api.LimbIKError), match=message):
                call()


def test_a_pole_that_is_the_target_is_a_sentence(lik, leg):
    """The knee cannot point at the very goal the foot reaches for. Baking it used to raise numpy's "shape
    mismatch"."""
    limb = leg.limb_ik.limbs["leg.L"]
    limb.pole = limb.target
    message = r"^(Error: )?Limb 'leg\.L': its pole 'leg\.L_target' is also its target"
    with nothing_keyed(lik, leg):
        for call in (bpy.ops.limb_ik.solve, lambda: lik.api.solve(leg), lambda: lik.api.bake(leg, frame_end=3)):
            with pytest.raises((RuntimeError, lik.api.LimbIKError), match=message):
                call()
    assert lik.api.check(leg)["leg.L"].startswith("Limb 'leg.L': its pole 'leg.L_target' is also its target")


def test_a_missing_toe_is_a_sentence_when_planting(lik, leg):
    """A planted leg whose toe bone was renamed or deleted: planting used to raise a KeyError."""
    ground = rigs.plane_ground()
    bpy.context.view_layer.objects.active = leg
    limb = leg.limb_ik.limbs["leg.L"]
    limb.plant, limb.toe_bone = True, "toe_old.L"
    message = r"^Limb 'leg\.L': toe bone 'toe_old\.L' does not exist in armature 'Leg'\.$"
    with nothing_keyed(lik, leg):
        for legs in (None, ["leg.L"]):
            with pytest.raises(lik.api.LimbIKError, match=message):
                lik.api.plant(leg, ground, limbs=legs)
    assert limb.plant and leg.limb_ik.ground is None


@pytest.mark.parametrize(("setting", "label"), [("reach", "Reach"), ("swivel", "Swivel"), ("plane", "Plane")])
def test_a_choice_this_version_does_not_know_is_a_sentence(lik, leg, setting, label):
    """A limb setting saved by a newer version with a choice this one lacks: Blender keeps the stored number
    and shows an empty field. Check used to say nothing while Solve refused it (Reach), solved as if it were
    the first choice (Swivel) or raised an IndexError (Plane)."""
    leg.limb_ik.limbs["leg.L"][setting] = 99  # enums are stored as the position of the item
    message = (
        rf"^Limb 'leg\.L': its {label} is set to a choice this version of Limb IK does not know \(99\), "
        r"perhaps saved by a newer version; choose one of .+\.$"
    )
    assert re.match(message, lik.api.check(leg)["leg.L"])
    with nothing_keyed(lik, leg):
        for call in (bpy.ops.limb_ik.solve, lambda: lik.api.solve(leg), lambda: lik.api.bake(leg, frame_end=3)):
            with pytest.raises((RuntimeError, lik.api.LimbIKError), match=message.replace("^", "^(Error: )?")):
                call()


def test_a_key_that_is_not_a_number_is_named_with_its_frame(lik, leg):
    """A NaN key on a limb bone's rotation channel (from a broken exporter or script) used to be refused as
    "matrices must be finite", naming neither the bone, the channel nor the frame."""
    shin = leg.pose.bones["shin.L"]
    for frame in (1, 5, 9):
        shin.keyframe_insert("rotation_quaternion", frame=frame)
    path = shin.path_from_id("rotation_quaternion")
    curve = next(c for c in lik.rig.keys.actions.fcurves(leg) if c.data_path == path and c.array_index == 2)
    for point in curve.keyframe_points:
        point.interpolation = "CONSTANT"  # NaN from frame 5 to 8 only
    curve.keyframe_points[1].co.y = float("nan")
    curve.update()
    message = r"^(Error: )?Limb 'leg\.L': the Y Quaternion Rotation of bone 'shin\.L' is not a number at frame {}; "
    assert lik.api.check(leg) == {}
    with nothing_keyed(lik, leg):
        for call in (bpy.ops.limb_ik.bake, lambda: lik.api.bake(leg, frame_start=2, frame_end=9)):
            with pytest.raises((RuntimeError, lik.api.LimbIKError), match=message.format(5)):
                call()
    bpy.context.scene.frame_set(6)
    assert re.match(message.format(6), lik.api.check(leg)["leg.L"])
    with nothing_keyed(lik, leg):
        for call in (bpy.ops.limb_ik.solve, lambda: lik.api.solve(leg)):
            with pytest.raises((RuntimeError, lik.api.LimbIKError), match=message.format(6)):
                call()
