# SPDX-License-Identifier: GPL-3.0-or-later
"""Baking IK to keys: playback matches live solving, and no other key changes."""

import bpy
import numpy as np
import pytest
import rigs
from bpy_extras import anim_utils
from mathutils import Euler, Matrix, Vector

FRAMES = (1, 250)
TIPS = ("foot.L", "foot.R", "hand.L", "hand.R")


def all_fcurves(obj):
    """Every F-curve of the object's action (its slot's channelbag)."""
    data = obj.animation_data
    if data is None or data.action is None:
        return []
    bag = anim_utils.action_get_channelbag_for_slot(data.action, data.action_slot)
    return list(bag.fcurves) if bag else []


def key_table(lik, obj) -> dict:
    """Every key of every F-curve, all attributes, as raw float32/int arrays."""
    return {(c.data_path, c.array_index): lik.rig.keys.actions.read_keys(c) for c in all_fcurves(obj)}


def baked_channels(rig) -> set[str]:
    """Data paths of the rotation channels of every limb bone, in each bone's mode."""
    paths = set()
    for limb in rig.limb_ik.limbs:
        for name in filter(None, (limb.upper_bone, limb.lower_bone, limb.end_bone)):
            mode = rig.pose.bones[name].rotation_mode
            channel = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(
                mode, "rotation_euler"
            )
            paths.add(f'pose.bones["{name}"].{channel}')
    return paths


def animated_target_scene(rotation_mode: str):
    """Human metarig, its four limbs detected, the left leg in ``rotation_mode`` and chasing an
    Empty that moves and turns over 250 frames (out of reach some of the time)."""
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    rigs.enter_pose_mode(rig)
    for name in ("thigh.L", "shin.L", "foot.L"):
        rig.pose.bones[name].rotation_mode = rotation_mode
    target = rigs.empty("Target")
    rig.limb_ik.limbs["leg.L"].target = target
    foot = rig.pose.bones["foot.L"]
    tip, turn = rig.matrix_world @ foot.tail, (rig.matrix_world @ foot.matrix).to_quaternion()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FRAMES
    for f in range(FRAMES[0], FRAMES[1] + 1, 10):
        offset = Vector((0.15 * np.sin(f / 20), -0.2 * np.sin(f / 30), 0.3 * (1 + np.sin(f / 15)) / 2))
        target.matrix_world = Matrix.LocRotScale(
            tip + offset, turn @ Euler((0.3 * np.sin(f / 25), 0, 0)).to_quaternion(), None
        )
        target.keyframe_insert("location", frame=f)
        target.keyframe_insert("rotation_euler", frame=f)
    return rig, target


def tip_positions(rig) -> np.ndarray:
    out = []
    for frame in range(FRAMES[0], FRAMES[1] + 1):
        bpy.context.scene.frame_set(frame)
        out.append([rigs.world_tip(rig, name) for name in TIPS])
    return np.array(out)


@pytest.mark.parametrize("rotation_mode", ["QUATERNION", "ZYX"])
def test_baked_playback_matches_live_solving(rotation_mode):
    rig, _ = animated_target_scene(rotation_mode)
    rig.limb_ik.live = True
    live = tip_positions(rig)
    assert bpy.ops.limb_ik.bake() == {"FINISHED"}
    assert not rig.limb_ik.live
    baked = tip_positions(rig)
    assert np.abs(baked - live).max() <= 1e-5


def test_euler_keys_are_continuous():
    rig, _ = animated_target_scene("XYZ")
    bpy.ops.limb_ik.bake()
    for curve in all_fcurves(rig):
        if curve.data_path.endswith("rotation_euler"):
            values = np.array([k.co[1] for k in curve.keyframe_points])
            assert np.abs(np.diff(values)).max() < np.pi / 2, curve.data_path


def test_quaternion_keys_take_the_short_way():
    rig, _ = animated_target_scene("QUATERNION")
    bpy.ops.limb_ik.bake()
    bone = 'pose.bones["thigh.L"].rotation_quaternion'
    curves = sorted((c for c in all_fcurves(rig) if c.data_path == bone), key=lambda c: c.array_index)
    q = np.array([[k.co[1] for k in c.keyframe_points] for c in curves]).T
    assert (np.einsum("ij,ij->i", q[1:], q[:-1]) > 0.0).all()


@pytest.mark.parametrize("path", ["bulk", "stepped"])
def test_every_other_key_stays_bit_identical(lik, monkeypatch, path):
    rig, _ = animated_target_scene("ZYX")
    spine = rig.pose.bones["spine.003"]
    spine.rotation_quaternion = (0.99, 0.1, 0.0, 0.0)
    spine.keyframe_insert("rotation_quaternion", frame=5)
    thigh = rig.pose.bones["thigh.L"]
    thigh.location = (0.01, 0.0, 0.0)
    thigh.keyframe_insert("location", frame=7)  # a limb bone's other channel
    for frame, angle in ((-10, 0.2), (0, 0.1), (300, -0.1)):  # outside the range, on a baked channel
        thigh.rotation_euler = (angle, 0.0, 0.0)
        thigh.keyframe_insert("rotation_euler", frame=frame)
    rig["custom"] = 1.0
    rig.keyframe_insert('["custom"]', frame=3)
    before = key_table(lik, rig)
    if path == "stepped":
        monkeypatch.setattr(
            lik.rig.frames.bulk, "evaluate", lambda *args: (_ for _ in ()).throw(lik.rig.frames.bulk.NotBulk(""))
        )

    assert lik.api.bake(rig).path == path
    after = key_table(lik, rig)
    baked_paths = baked_channels(rig)
    assert 'pose.bones["thigh.L"].rotation_euler' in baked_paths
    for key, keys in before.items():
        if key[0] in baked_paths:
            outside = (keys["co"][:, 0] < FRAMES[0]) | (keys["co"][:, 0] > FRAMES[1])
            new_outside = (after[key]["co"][:, 0] < FRAMES[0]) | (after[key]["co"][:, 0] > FRAMES[1])
            for name, array in keys.items():
                assert np.array_equal(array[outside], after[key][name][new_outside]), (key, name)
        else:
            for name, array in keys.items():
                assert np.array_equal(array, after[key][name]), (key, name)
    baked_euler = after[('pose.bones["thigh.L"].rotation_euler', 0)]["co"][:, 0]
    assert set(range(FRAMES[0], FRAMES[1] + 1)) <= set(baked_euler.astype(int))


def test_only_limb_rotation_channels_get_keys():
    rig, _ = animated_target_scene("QUATERNION")
    bpy.ops.limb_ik.bake()
    limb_bones = {b for limb in rig.limb_ik.limbs for b in (limb.upper_bone, limb.lower_bone, limb.end_bone)}
    paths = baked_channels(rig)
    for curve in all_fcurves(rig):
        assert curve.data_path in paths, curve.data_path
    assert limb_bones


def test_step_keys_every_nth_frame_and_the_last():
    rig, _ = animated_target_scene("QUATERNION")
    assert bpy.ops.limb_ik.bake(frame_start=10, frame_end=31, step=5) == {"FINISHED"}
    frames = {int(k.co[0]) for c in all_fcurves(rig) for k in c.keyframe_points}
    assert frames == {10, 15, 20, 25, 30, 31}


def test_bake_restores_the_frame_and_creates_an_action():
    rig, _ = animated_target_scene("QUATERNION")
    assert rig.animation_data is None or rig.animation_data.action is None
    bpy.context.scene.frame_set(42)
    bpy.ops.limb_ik.bake(frame_start=1, frame_end=20)
    assert bpy.context.scene.frame_current == 42
    assert rig.animation_data.action is not None


def test_failure_while_writing_leaves_the_action_as_it_was(lik, monkeypatch):
    rig, _ = animated_target_scene("QUATERNION")
    thigh = rig.pose.bones["thigh.L"]
    for frame in (0, 100, 300):
        thigh.rotation_quaternion = (1.0, 0.0, 0.0, 0.0) if frame != 100 else (0.9, 0.2, 0.0, 0.0)
        thigh.keyframe_insert("rotation_quaternion", frame=frame)
    before = key_table(lik, rig)
    actions = lik.rig.keys.actions
    original, calls = actions.ActionEdit.replace_range, []

    def failing(self, *args):  # the fifth F-curve written fails, after four were replaced
        calls.append(1)
        if len(calls) == 5:
            raise RuntimeError("disk full")
        return original(self, *args)

    monkeypatch.setattr(actions.ActionEdit, "replace_range", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        lik.rig.bake.bake(rig, bpy.context.evaluated_depsgraph_get())
    after = key_table(lik, rig)
    assert before.keys() == after.keys()
    for key, keys in before.items():
        for name, array in keys.items():
            assert np.array_equal(array, after[key][name]), (key, name)


def test_bad_range_is_an_error_and_changes_nothing(lik):
    rig, _ = animated_target_scene("QUATERNION")
    before = key_table(lik, rig)
    with pytest.raises(RuntimeError, match="ends .* before it starts"):
        bpy.ops.limb_ik.bake(frame_start=50, frame_end=10)
    assert key_table(lik, rig).keys() == before.keys()


def test_a_range_given_to_the_operator_is_the_range_baked():
    """A script's frame_start/frame_end used to lose to the Scene Range option, on by default: the scene's
    1-250 was baked, with 229 keys outside 10-30 on the limb channels."""
    rig, _ = animated_target_scene("QUATERNION")
    assert bpy.ops.limb_ik.bake(frame_start=10, frame_end=30) == {"FINISHED"}
    assert {int(k.co[0]) for c in all_fcurves(rig) for k in c.keyframe_points} == set(range(10, 31))


def test_each_end_of_the_range_not_given_is_the_scenes():
    rig, _ = animated_target_scene("QUATERNION")
    bpy.context.scene.frame_end = 40
    assert bpy.ops.limb_ik.bake(frame_start=35) == {"FINISHED"}
    assert {int(k.co[0]) for c in all_fcurves(rig) for k in c.keyframe_points} == set(range(35, 41))


def test_an_action_another_rig_plays_is_refused_naming_it(lik):
    """Two rigs playing one action: baking the first would rewrite the second's leg keys (its foot moved
    26 cm). Refused before anything changes, naming the other rig; check and Match FK say the same."""
    rig, _ = animated_target_scene("QUATERNION")
    thigh = rig.pose.bones["thigh.L"]
    for frame in (1, 250):
        thigh.keyframe_insert("rotation_quaternion", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    other = rigs.human_metarig()
    other.location.x = 2.0
    other.animation_data_create().action = rig.animation_data.action
    other.animation_data.action_slot = rig.animation_data.action_slot
    bpy.context.view_layer.objects.active = rig
    tip = rigs.world_tip(other, "foot.L")
    sentence = f"plays the action '{rig.animation_data.action.name}', which '{other.name}' also plays"
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match=sentence):
        lik.api.bake(rig)
    with rigs.unchanged(rig), pytest.raises(RuntimeError, match=sentence):
        bpy.ops.limb_ik.match_fk()
    assert sentence in lik.api.check(rig)["leg.L"]
    np.testing.assert_array_equal(rigs.world_tip(other, "foot.L"), tip)
    # A slot of its own: other F-curves, nothing shared.
    other.animation_data.action_slot = rig.animation_data.action.slots.new(id_type="OBJECT", name=other.name)
    assert lik.api.bake(rig).keys > 0
    np.testing.assert_array_equal(rigs.world_tip(other, "foot.L"), tip)


def _on_nla_track(rig):
    """The rig's keys moved into an NLA strip, under a new action of its own."""
    data = rig.animation_data
    action = data.action
    data.nla_tracks.new().strips.new("animated", 1, action)
    data.action = None
    data.action = bpy.data.actions.new("Above")


@pytest.mark.parametrize(
    ("blend", "influence", "tweak"), [("COMBINE", 1.0, False), ("REPLACE", 0.5, False), ("REPLACE", 1.0, True)]
)
def test_keys_the_nla_would_not_play_as_baked_are_refused(lik, blend, influence, tweak):
    """Over NLA tracks, an action blended in (or at partial influence), or one edited in tweak mode, played
    the baked keys 20 to 37 cm off the target (8 cm in tweak mode): refused before anything changes."""
    rig, _ = animated_target_scene("QUATERNION")
    rig.pose.bones["thigh.L"].keyframe_insert("rotation_quaternion", frame=1)
    bpy.ops.object.mode_set(mode="OBJECT")
    _on_nla_track(rig)
    data = rig.animation_data
    if tweak:
        data.action = None
        data.use_tweak_mode = True
    data.action_blend_type, data.action_influence = blend, influence
    message = "is in NLA tweak mode" if tweak else "blends its action over its NLA tracks"
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match=message):
        lik.api.bake(rig)
    assert set(lik.api.check(rig)) == {limb.name for limb in rig.limb_ik.limbs}


def test_an_action_replacing_its_nla_tracks_is_baked_through_them(lik):
    rig, _ = animated_target_scene("QUATERNION")
    rig.pose.bones["thigh.L"].keyframe_insert("rotation_quaternion", frame=1)
    bpy.ops.object.mode_set(mode="OBJECT")
    _on_nla_track(rig)
    rig.limb_ik.live = True
    live = tip_positions(rig)
    lik.api.bake(rig)
    np.testing.assert_allclose(tip_positions(rig), live, atol=1e-5)
