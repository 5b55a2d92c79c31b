# SPDX-License-Identifier: GPL-3.0-or-later
"""The demo's inputs: gaits keyed on the human metarig whose feet are truly planted on flat ground, and
terrain whose meshes match the shapes the planting tests compare against."""

import math

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Vector

from demo import motion, terrain

#: How far a planted foot may slide, and a sole may be off the floor (metres).
PLANTED = 1e-3
GAITS = {
    # the run goes on a raised floor, with the rig moved and turned: the floor is a world height
    "walk": (motion.key_walk, {}, None),
    "run": (motion.key_run, {"floor": 0.35}, ((0.5, 0.3, 0.2), math.radians(30))),
}


def fcurve_paths(obj: bpy.types.Object) -> dict[str, int]:
    """Data path of every F-curve of the object's action (legacy or slotted) with its number of keys."""
    action = obj.animation_data.action
    if bpy.app.version < (4, 4, 0):
        curves = action.fcurves
    else:
        from bpy_extras import anim_utils

        curves = anim_utils.action_get_channelbag_for_slot(action, obj.animation_data.action_slot).fcurves
    return {c.data_path: len(c.keyframe_points) for c in curves}


def play(rig: bpy.types.Object, keyed: motion.Motion) -> dict[str, np.ndarray]:
    """Per side, frames × 4 × 3 world points: heel, ball and toe tip on the sole, then the ankle."""
    scene = bpy.context.scene
    points = {side: [] for side in motion.SIDES}
    for frame in range(keyed.frame_start, keyed.frame_end + 1):
        scene.frame_set(frame)
        for side in motion.SIDES:
            ankle = rigs.world_matrix(rig, f"foot.{side}")[:3, 3]
            points[side].append(np.vstack((motion.sole_points(rig, side), ankle)))
    return {side: np.array(track) for side, track in points.items()}


def frames_of(keyed: motion.Motion, ranges) -> np.ndarray:
    """Indices into :func:`play`'s tracks of the frames in inclusive ``ranges``."""
    return np.concatenate([np.arange(a, b + 1) for a, b in ranges]) - keyed.frame_start


@pytest.fixture(params=GAITS)
def gait(request):
    """``(rig, motion, tracks)`` for each gait."""
    key, arguments, placement = GAITS[request.param]
    rig = rigs.human_metarig()
    if placement:
        rig.location, rig.rotation_euler.z = placement
    keyed = key(rig, **arguments)
    return rig, keyed, play(rig, keyed)


def test_gaits_key_every_frame_of_the_legs_and_pelvis(gait):
    rig, keyed, _ = gait
    frames = keyed.frame_end - keyed.frame_start + 1
    keys = fcurve_paths(rig)
    limb_bones = [f"{part}.{side}" for part in ("thigh", "shin", "foot", "toe", "upper_arm") for side in motion.SIDES]
    for bone in limb_bones:
        assert keys[f'pose.bones["{bone}"].rotation_quaternion'] == frames
    assert keys['pose.bones["spine"].location'] == frames
    assert keys['pose.bones["spine"].rotation_quaternion'] == frames
    assert all(rig.pose.bones[bone].rotation_mode == "QUATERNION" for bone in limb_bones)


def test_stance_feet_are_planted_flat_on_the_floor(gait):
    _, keyed, tracks = gait
    for side, track in tracks.items():
        assert len(keyed.stance[side]) >= 3
        for first, last in keyed.stance[side]:
            planted = track[first - keyed.frame_start : last - keyed.frame_start + 1]
            assert np.abs(planted - planted[0]).max() <= PLANTED, f"foot.{side} slides in {first}..{last}"
            assert np.abs(planted[:, :3, 2] - keyed.floor).max() <= PLANTED, f"sole.{side} off the floor"


def test_feet_roll_on_the_floor_and_never_sink(gait):
    _, keyed, tracks = gait
    for side, track in tracks.items():
        lowest = track[:, :3, 2].min(axis=1) - keyed.floor
        assert lowest.min() >= -PLANTED
        assert np.abs(lowest[frames_of(keyed, keyed.contact[side])]).max() <= PLANTED
        assert set(frames_of(keyed, keyed.stance[side])) < set(frames_of(keyed, keyed.contact[side]))


def test_swing_feet_lift(gait):
    _, keyed, tracks = gait
    for side, track in tracks.items():
        contact = keyed.contact[side]
        for (_, lift_off), (landing, _) in zip(contact, contact[1:]):
            swing = track[lift_off + 1 - keyed.frame_start : landing - keyed.frame_start]
            clearance = swing[:, :3, 2].min(axis=1) - keyed.floor
            assert clearance.min() > 0.0
            assert clearance.max() >= 0.08, f"foot.{side} barely lifts between {lift_off} and {landing}"


def test_walk_always_touches_and_run_flies(gait):
    _, keyed, tracks = gait
    frames = np.arange(keyed.frame_end - keyed.frame_start + 1)
    touching = np.union1d(*(frames_of(keyed, keyed.contact[side]) for side in motion.SIDES))
    flight = np.setdiff1d(frames, touching)
    if keyed.name == "walk":
        assert flight.size == 0
    else:
        assert flight.size >= 6
        lowest = np.min([tracks[side][flight, :3, 2].min(axis=1) for side in motion.SIDES], axis=0)
        assert lowest.min() > keyed.floor + 0.01


def test_pelvis_advances_steadily_along_minus_y():
    rig = rigs.human_metarig()
    keyed = motion.key_walk(rig, stride=1.2, cycle_frames=32)
    heads = []
    for frame in range(keyed.frame_start, keyed.frame_end + 1):
        bpy.context.scene.frame_set(frame)
        heads.append(rigs.world_matrix(rig, "spine")[:3, 3])
    heads = np.array(heads)
    assert np.allclose(np.diff(heads[:, 1]), -1.2 / 32, atol=1e-5)
    assert 0.02 < np.ptp(heads[:, 2]) < 0.06
    assert np.ptp(heads[:, 0]) < 0.05


def test_gaits_respect_euler_and_axis_angle_bones():
    rig = rigs.human_metarig()
    modes = {"thigh.L": "XZY", "shin.L": "AXIS_ANGLE", "foot.L": "YXZ", "toe.L": "ZYX"}
    for bone, mode in modes.items():
        rig.pose.bones[bone].rotation_mode = mode
    keyed = motion.key_walk(rig, cycles=2)
    keys = fcurve_paths(rig)
    channel = {"AXIS_ANGLE": "rotation_axis_angle"}
    assert all(f'pose.bones["{b}"].{channel.get(m, "rotation_euler")}' in keys for b, m in modes.items())
    track = play(rig, keyed)["L"]
    for first, last in keyed.stance["L"]:
        planted = track[first - keyed.frame_start : last - keyed.frame_start + 1]
        assert np.abs(planted - planted[0]).max() <= PLANTED


def test_gaits_refuse_what_they_cannot_do():
    rig = rigs.human_metarig()
    with pytest.raises(ValueError, match="reach"):
        motion.key_walk(rig, stride=4.0)
    rig.rotation_euler.x = 0.3
    with pytest.raises(ValueError, match="upright"):
        motion.key_walk(rig)


def test_course_mesh_matches_its_analytic_surface():
    course = terrain.COURSE
    obj = terrain.build_terrain()
    for x in np.linspace(-1.4, 1.4, 5):
        for d in np.linspace(course.start + 0.01, course.end - 0.01, 97):
            if abs(d - course.step_at) < 0.01:
                continue
            height, normal = terrain.ground_hit(obj, x, -d)
            assert height == pytest.approx(terrain.surface_height(x, -d), abs=1e-5)
            assert (normal - Vector(terrain.surface_normal(x, -d))).length < 1e-5
    assert terrain.surface_height(0.0, -course.end) - terrain.surface_height(0.0, -course.step_at + 0.01) == (
        pytest.approx(course.step_height)
    )
    assert math.degrees(math.acos(terrain.surface_normal(0.0, -2.0)[2])) == pytest.approx(15.0)


def test_walk_crosses_the_ramp_and_the_step():
    course = terrain.COURSE
    rig = rigs.human_metarig()
    keyed = motion.key_walk(rig)
    tracks = play(rig, keyed)
    # distance along the course of each flat footprint, heel first, toe tip last
    footprints = [
        -tracks[side][first - keyed.frame_start, [0, 2], 1] for side in motion.SIDES for first, _ in keyed.stance[side]
    ]
    assert any(course.ramp_start < heel and tip < course.ramp_end for heel, tip in footprints)
    assert any(course.ramp_end < heel and tip < course.step_at for heel, tip in footprints)
    assert sum(course.step_at < heel and tip < course.end for heel, tip in footprints) >= 2


def test_rough_ground_is_shaped_by_its_modifier_and_holds_the_walk():
    obj = terrain.build_rough()
    assert not any(v.co.z for v in obj.data.vertices)  # the shape is only in the evaluated mesh
    rig = rigs.human_metarig()
    keyed = motion.key_walk(rig)
    tracks = play(rig, keyed)
    soles = np.concatenate([tracks[side][frames_of(keyed, keyed.stance[side]), :3] for side in motion.SIDES])
    heights = [terrain.ground_hit(obj, x, y) for x, y, _ in soles.reshape(-1, 3)]
    assert all(hit is not None for hit in heights)
    heights = np.array([height for height, _ in heights])
    assert 0.05 < np.ptp(heights) < 0.25
    again = terrain.build_rough()
    assert [terrain.ground_hit(again, x, y)[0] for x, y, _ in soles[:20].reshape(-1, 3)] == pytest.approx(
        heights[:60], abs=1e-6
    )
