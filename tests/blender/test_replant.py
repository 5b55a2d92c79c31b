# SPDX-License-Identifier: GPL-3.0-or-later
"""Planting again starts from the animator's keys: planting twice keys what planting once does, on a
keyframed rig and on real motion capture, and removing the planting gives the animation back."""

import bpy
import numpy as np
import pytest
import rigs

from takes import clips
from takes import measure as mocap


def metarig_on_a_raised_plane() -> bpy.types.Object:
    """The human metarig, unanimated, its legs planted on a plane 0.3 m above its feet."""
    rig = rigs.human_metarig()
    ground = rigs.plane_ground()
    ground.objects[0].location.z = 0.3
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.limb_ik.detect_limbs() == {"FINISHED"}
    rig.limb_ik.ground = ground
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.name.startswith("leg")
    return rig


def toe_heights(rig: bpy.types.Object, frames) -> np.ndarray:
    heights = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        heights.append([rigs.world_tip(rig, name)[2] for name in ("toe.L", "toe.R")])
    return np.array(heights)


def test_baking_a_planting_three_times_keys_what_the_first_bake_keys():
    rig = metarig_on_a_raised_plane()
    keys, heights = [], []
    for _ in range(3):
        assert bpy.ops.limb_ik.bake(frame_start=1, frame_end=10) == {"FINISHED"}
        keys.append(rigs.fcurve_keys(rig))
        heights.append(toe_heights(rig, range(1, 11)))
    assert np.abs(heights[0] - 0.3).max() < 0.02  # on the plane, not under or over it
    for again, height in zip(keys[1:], heights[1:]):
        assert again.keys() == keys[0].keys()
        for path, values in keys[0].items():
            np.testing.assert_allclose(again[path], values, atol=1e-6, err_msg=path)
        np.testing.assert_allclose(height, heights[0], atol=1e-6)


def test_planting_a_capture_again_starts_from_the_capture(lik):
    """The DeepMimic walk on the 10° slope, planted three times by the API: every bone where the first put it."""
    rig, frames, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    played = []
    for _ in range(3):
        lik.api.plant(rig, ground)
        played.append(mocap.play(rig, frames))
    assert np.abs(played[1] - played[0]).max() <= 1e-6
    assert np.abs(played[2] - played[0]).max() <= 1e-6


def test_removing_the_planting_gives_the_animation_back(lik):
    rig, frames, ground = clips.stage("walk", "slope")
    keys, animated = rigs.fcurve_keys(rig), mocap.play(rig, frames)
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    lik.api.plant(rig, ground)
    assert rig.limb_ik.planting_source is not None
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.limb_ik.remove_planting() == {"FINISHED"}
    assert rig.limb_ik.planting_source is None
    after = rigs.fcurve_keys(rig)
    assert after.keys() == keys.keys()
    for path, values in keys.items():
        np.testing.assert_array_equal(after[path], values, err_msg=path)
    assert np.abs(mocap.play(rig, frames) - animated).max() <= 1e-6
    assert not [action for action in bpy.data.actions if "planting source" in action.name]


def test_removing_the_planting_of_an_unkeyed_rig_leaves_its_legs_unkeyed(lik):
    rig = metarig_on_a_raised_plane()
    posed = rigs.pose_snapshot(rig)
    lik.api.bake(rig, frame_start=1, frame_end=5)
    assert any("thigh.L" in path for path in rigs.fcurve_keys(rig))
    lik.api.remove_planting(rig)
    assert not any("thigh" in path or "shin" in path for path in rigs.fcurve_keys(rig))
    np.testing.assert_allclose(rigs.pose_snapshot(rig), posed, atol=1e-6)


def test_planting_part_of_the_take_again_keeps_the_rest_as_planted(lik):
    rig, frames, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground, frame_start=1, frame_end=120)
    whole = mocap.play(rig, range(1, 121))
    rig.limb_ik.smoothing_time *= 2  # a setting changed, then part of the take planted again
    lik.api.plant(rig, ground, frame_start=40, frame_end=60)
    again = mocap.play(rig, range(1, 121))
    outside = [*range(0, 38), *range(62, 120)]  # a frame of the new keys' ease on each side
    assert np.abs(again[outside] - whole[outside]).max() <= 1e-6
    smoothing = rig.limb_ik.smoothing_time
    fresh, _, fresh_ground = clips.stage("walk", "slope")  # a new scene: the same take, planted once
    lik.api.detect_limbs(fresh)
    fresh.limb_ik.smoothing_time = smoothing
    lik.api.plant(fresh, fresh_ground, frame_start=40, frame_end=60)
    assert np.abs(mocap.play(fresh, range(40, 61)) - again[39:60]).max() <= 1e-6


def test_the_source_is_kept_in_the_file_and_planting_after_loading_starts_from_it(lik, tmp_path):
    rig, frames, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    once = mocap.play(rig, frames)
    path = tmp_path / "planted.blend"
    name = rig.name
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    rig = bpy.data.objects[name]
    assert rig.limb_ik.planting_source is not None
    lik.api.plant(rig)
    assert np.abs(mocap.play(rig, frames) - once).max() <= 1e-6


def test_a_planting_that_fails_keeps_no_source(lik):
    rig, _, ground = clips.stage("walk", "flat")
    ground.objects[0].location.y += 50.0  # no ground under the feet: refused
    lik.api.detect_limbs(rig)
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match="no ground under its foot"):
        lik.api.plant(rig, ground)
    assert rig.limb_ik.planting_source is None


def test_removing_a_planting_that_is_not_there_says_so(lik):
    rig = rigs.human_metarig()
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match="has no planting to remove"):
        lik.api.remove_planting(rig)
    bpy.context.view_layer.objects.active = rig
    with pytest.raises(RuntimeError, match="has no planting to remove"):
        bpy.ops.limb_ik.remove_planting()


def test_live_shows_the_planted_keys_without_planting_them_again(lik):
    rig, frames, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    planted = mocap.play(rig, frames)
    rig.limb_ik.live = True
    assert np.abs(mocap.play(rig, frames) - planted).max() <= 1e-5
    assert not [limb.status for limb in rig.limb_ik.limbs if limb.status]


def test_check_reads_the_planting_from_the_animators_keys_and_changes_nothing(lik):
    rig, frames, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    planted = mocap.play(rig, frames)
    with rigs.unchanged(rig):
        assert lik.api.check(rig) == {}
    assert np.abs(mocap.play(rig, frames) - planted).max() == 0.0


def test_a_live_frame_after_a_planting_setting_changed_steps_no_other_frame(lik):
    """The take is read from its F-curves in bulk, checked against the frame shown: a frame change inside
    a frame change never happens (a stale analysis used to step the scene through the whole take)."""
    rig, frames, ground = rigs.planted_clip(lik, "walk", "slope")
    changes = []

    def count(scene, *_):
        changes.append(scene.frame_current)

    bpy.app.handlers.frame_change_pre.append(count)
    try:
        rig.limb_ik.live = True
        bpy.context.scene.frame_set(10)
        rig.limb_ik.smoothing_time *= 2
        changes.clear()
        bpy.context.scene.frame_set(11)
    finally:
        bpy.app.handlers.frame_change_pre.remove(count)
    assert changes == [11]
    live = mocap.play(rig, range(11, 12))
    rig.limb_ik.live = False
    lik.api.plant(rig, ground)
    assert np.abs(mocap.play(rig, range(11, 12)) - live).max() <= 0.001


@pytest.mark.parametrize("stepped", [False, True], ids=["read in bulk", "stepped"])
def test_live_reading_a_take_says_how_far_it_is(lik, stepped):
    """Live's first frame on a planted take reads the whole take: it reports its progress as it goes, to the
    end, whether the take is read from its F-curves in bulk or (a constraint on the hips) stepped."""
    rig, frames, ground = rigs.planted_clip(lik, "walk", "slope")
    if stepped:
        rig.pose.bones["root"].constraints.new("LIMIT_SCALE")  # does nothing, but F-curves alone no longer tell
    done = []
    assert not lik.rig.live.frame.solve_live(rig, bpy.context.evaluated_depsgraph_get(), done.append)
    assert done and done[-1] == 1.0 and done == sorted(done)
    assert len(done) == (len(frames) if stepped else 1)
    assert not [limb.status for limb in rig.limb_ik.limbs if limb.status]


@pytest.mark.parametrize("stepped", [False, True], ids=["read in bulk", "stepped"])
def test_check_reading_a_take_says_how_far_it_is(lik, stepped):
    """Check plants planted legs over the whole take to find out what it would refuse: the Check button shows
    that reading on the progress bar, to the end (a long take takes seconds)."""
    rig, frames, ground = rigs.planted_clip(lik, "walk", "slope")
    if stepped:
        rig.pose.bones["root"].constraints.new("LIMIT_SCALE")  # does nothing, but F-curves alone no longer tell
    done = []
    assert lik.rig.check.check(rig, bpy.context.evaluated_depsgraph_get(), done.append) == {}
    assert done and done[-1] == 1.0 and done == sorted(done)
    assert bpy.ops.limb_ik.check() == {"FINISHED"}


def test_a_take_that_must_be_stepped_is_read_after_the_frame_change_not_inside_it(lik):
    """With a window, a frame change never steps the scene: a take only stepping can read (a constraint on the
    hips) shows the animation with the legs saying why, and is read and planted once the frame change is over
    (solve_moved, the timer's work): then it shows what the bake writes."""
    rig, frames, ground = rigs.planted_clip(lik, "walk", "slope", live=True)
    rig.pose.bones["root"].constraints.new("LIMIT_SCALE")  # does nothing, but F-curves alone no longer tell
    changes = []

    def count(scene, *_):
        changes.append(scene.frame_current)

    bpy.app.handlers.frame_change_pre.append(count)
    try:
        bpy.context.scene.frame_set(20)
        rig.limb_ik.smoothing_time *= 2  # the take is to be read again
        lik.rig.animator.restore(rig)  # as before a frame change, for a rig whose pose is not composed
        changes.clear()
        frame = lik.rig.live.frame
        assert frame.solve_live(rig, bpy.context.evaluated_depsgraph_get(), may_step=False)  # again, later
        assert changes == []
    finally:
        bpy.app.handlers.frame_change_pre.remove(count)
    statuses = {limb.name: limb.status for limb in rig.limb_ik.limbs if limb.plant}
    assert set(statuses.values()) == {"Reading the take to plant it: shown as animated until then."}
    frame.solve_moved(bpy.context)
    assert not [limb.status for limb in rig.limb_ik.limbs if limb.status]
    live = mocap.play(rig, range(20, 21))
    rig.limb_ik.live = False
    lik.api.plant(rig, ground)
    assert np.abs(mocap.play(rig, range(20, 21)) - live).max() <= 0.001
