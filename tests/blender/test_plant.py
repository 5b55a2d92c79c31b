# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting: motions keyed on flat ground, planted on a 15° ramp and a 20 cm step, baked.

Each motion is built, planted and baked once; the tests below read the cached figures. The
surface is measured with Blender's own ``scene.ray_cast``, not the planting code's ground, and
stance comes from the motion's own ground truth (:mod:`demo.motion`). Motions run at 60 fps, a
usual motion-capture rate (see the README for the same walk at 24 fps).
"""

import functools

import bpy
import numpy as np
import pytest
import rigs
from mathutils import Vector

from demo import motion, terrain

FPS = 60
STANCE_DISTANCE = 0.01  # in stance the sole is within 1 cm of the surface
PENETRATION = 0.005  # nowhere deeper than 5 mm
NORMAL_ANGLE = 5.0  # degrees between sole and surface, in stance
KNEE_CHANGE = 10.0  # degrees between two frames
SLIDE = 0.005  # stance slide with foot lock
PELVIS = 0.05  # pelvis height above the ground vs. its authored height above the floor
FLAT_CHANGE = 0.001  # on flat ground at the authored height, planting moves no bone more
SMOOTHING = 10.0  # frames: a sixth of a second at 60 fps


def keyed_scene(gait: str, ground_kind: str):
    """The metarig keyed with ``gait`` at 60 fps, its legs planted on ``ground_kind``."""
    scene = bpy.context.scene
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    scene.render.fps = FPS
    ground = bpy.data.collections.new("Ground")
    scene.collection.children.link(ground)
    if ground_kind == "terrain":
        terrain.build_terrain(ground)
    elif ground_kind == "rough":
        terrain.build_rough(ground)
    else:
        bpy.ops.mesh.primitive_plane_add(size=60.0)
        plane = bpy.context.object
        for collection in plane.users_collection:
            collection.objects.unlink(plane)
        ground.objects.link(plane)
    rig = rigs.human_metarig()
    keyed = {
        "walk": lambda: motion.key_walk(rig, cycles=4, cycle_frames=100),
        "jog": lambda: motion.key_run(rig, cycles=4, cycle_frames=45, stride=1.3),
    }[gait]()
    scene.frame_start, scene.frame_end = keyed.frame_start, keyed.frame_end
    bpy.ops.limb_ik.detect_limbs()
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.name.startswith("leg")
    rig.limb_ik.ground = ground
    rig.limb_ik.pelvis_smoothing = SMOOTHING
    return rig, keyed


def sample(lik, rig, keyed) -> dict:
    """World-space soles, the surface under them (ray cast), sole normals, knees, pelvis, bones."""
    scene = bpy.context.scene
    planned = lik.rig.solve.plan(rig)
    feet = lik.rig.plant.plant_plan(rig, planned.limbs, planned.chains)
    out = {key: [] for key in ("soles", "normals", "knees", "stretch", "pelvis", "bones")}
    for frame in range(keyed.frame_start, keyed.frame_end + 1):
        scene.frame_set(frame)
        pose = lik.rig.pose.read_pose(rig, rigs.evaluated(rig))
        inputs = lik.rig.plant.frame_inputs(feet, pose)
        out["soles"].append(inputs.soles)
        out["normals"].append([inputs.feet[n][:3, :3] @ f.sole_up for n, f in enumerate(feet.feet)])
        out["knees"].append([knee_angle(pose.matrices, f) for f in feet.feet])
        out["stretch"].append([leg_stretch(pose.matrices, f) for f in feet.feet])
        out["pelvis"].append(inputs.pelvis[:3, 3])
        out["bones"].append(inputs.world @ pose.matrices)
    out = {key: np.array(value) for key, value in out.items()}
    out["surface"], out["surface_normal"] = surface_under(out["soles"])
    return out


def knee_angle(matrices, foot) -> float:
    hip, knee, ankle = (matrices[i][:3, 3] for i in (foot.upper, foot.lower, foot.foot))
    a, b = knee - hip, ankle - knee
    return float(np.degrees(np.arccos(np.clip(a @ b / np.linalg.norm(a) / np.linalg.norm(b), -1.0, 1.0))))


def leg_stretch(matrices, foot) -> float:
    """Hip-to-ankle distance as a fraction of the leg's length (1 = straight)."""
    return float(np.linalg.norm(matrices[foot.foot][:3, 3] - matrices[foot.upper][:3, 3]) / foot.reach)


def surface_under(soles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Height and normal of the topmost surface below (or up to 2 m above) each point, by Blender's ray cast."""
    scene = bpy.context.scene
    depsgraph = bpy.context.evaluated_depsgraph_get()
    heights, normals = np.zeros(soles.shape[:-1]), np.zeros(soles.shape)
    for index in np.ndindex(soles.shape[:-1]):
        x, y, z = soles[index]
        hit, location, normal, *_ = scene.ray_cast(depsgraph, Vector((x, y, z + 2.0)), Vector((0, 0, -1)), distance=6.0)
        heights[index] = location.z if hit else 0.0
        normals[index] = normal if hit else (0.0, 0.0, 1.0)
    return heights, normals


def frames_of(spans, keyed) -> np.ndarray:
    mask = np.zeros(keyed.frame_end - keyed.frame_start + 1, bool)
    for first, last in spans:
        mask[first - keyed.frame_start : last - keyed.frame_start + 1] = True
    return mask


@functools.cache
def planted(gait: str, ground_kind: str = "terrain") -> dict:
    """Authored and baked samples of one motion, with the report after planting. Cached: plain arrays."""
    from importlib import import_module

    lik = import_module("bl_ext.limb_ik_dev.limb_ik")
    bpy.ops.wm.read_homefile(app_template="")
    rig, keyed = keyed_scene(gait, ground_kind)
    authored = sample(lik, rig, keyed)
    before = lik.rig.report.foot_report(rig)
    lik.api.plant(rig)
    baked = sample(lik, rig, keyed)
    report = lik.rig.report.foot_report(rig, authored=before)
    sides = ("L", "R")
    return {
        "authored": authored,
        "baked": baked,
        "stance": np.stack([frames_of(keyed.stance[s], keyed) for s in sides], axis=1),
        "contact": np.stack([frames_of(keyed.contact[s], keyed) for s in sides], axis=1),
        "report": report,
        "floor": keyed.floor,
    }


MOTIONS = ["walk", "jog"]


@pytest.mark.parametrize("gait", MOTIONS)
def test_in_stance_the_sole_is_on_the_surface(gait):
    result = planted(gait)
    baked = result["baked"]
    closest = np.abs(baked["soles"][..., 2] - baked["surface"]).min(axis=2)  # (F, feet)
    assert closest[result["stance"]].max() <= STANCE_DISTANCE


@pytest.mark.parametrize("gait", MOTIONS)
def test_no_sole_point_goes_into_the_ground(gait):
    baked = planted(gait)["baked"]
    assert (baked["surface"] - baked["soles"][..., 2]).max() <= PENETRATION


@pytest.mark.parametrize("gait", MOTIONS)
def test_in_stance_the_sole_lies_along_the_surface(gait):
    result = planted(gait)
    baked = result["baked"]
    sole = baked["normals"] / np.linalg.norm(baked["normals"], axis=2, keepdims=True)
    ground = baked["surface_normal"].sum(axis=2)
    ground /= np.linalg.norm(ground, axis=2, keepdims=True)
    angle = np.degrees(np.arccos(np.clip(np.einsum("fni,fni->fn", sole, ground), -1.0, 1.0)))
    flat = result["stance"] & (np.abs(baked["soles"][..., :2, 2] - baked["surface"][..., :2]).max(axis=2) <= 0.01)
    assert flat.sum() > 0.3 * result["stance"].sum()  # the feet do stand flat most of the stance
    assert angle[flat].max() <= NORMAL_ANGLE


@pytest.mark.parametrize("gait", MOTIONS)
def test_knees_do_not_jump(gait):
    knees = planted(gait)["baked"]["knees"]
    assert np.abs(np.diff(knees, axis=0)).max() <= KNEE_CHANGE


@pytest.mark.parametrize("gait", MOTIONS)
def test_standing_feet_do_not_slide(gait):
    result = planted(gait)
    authored, baked = result["authored"], result["baked"]
    worst = 0.0
    for foot in range(2):
        for first, last in _spans(result["contact"][:, foot]):
            for point in range(baked["soles"].shape[2]):
                # where the animation has this sole point on the floor, the planted one must stay put
                down = np.flatnonzero(authored["soles"][first : last + 1, foot, point, 2] - result["floor"] <= 1e-3)
                if len(down):
                    path = baked["soles"][first + down, foot, point, :2]
                    worst = max(worst, float(np.linalg.norm(path - path[0], axis=1).max()))
    assert worst <= SLIDE


@pytest.mark.parametrize("gait", MOTIONS)
def test_pelvis_keeps_its_height_above_the_ground(gait):
    report = planted(gait)["report"]
    assert np.abs(report.pelvis_above_ground - report.authored_pelvis).max() <= PELVIS
    assert report.pelvis_drop <= PELVIS


@pytest.mark.parametrize("gait", MOTIONS)
def test_pelvis_drops_only_where_a_standing_leg_needs_it(gait):
    """Wherever the pelvis sits clearly lower than ground-following puts it, some standing leg is
    near full stretch within the smoothing's reach (the drop eases in and out: a widened maximum
    of 2 sigma, then a Gaussian of 3 sigma): the drop was needed there."""
    result = planted(gait)
    report, baked = result["report"], result["baked"]
    drop = report.authored_pelvis - report.pelvis_above_ground
    stretch = baked["stretch"]  # (F, feet)
    standing = result["contact"]
    near_limit = (stretch >= 0.98) & standing
    window = int(5 * SMOOTHING)
    for frame in np.flatnonzero(drop > 0.01):
        nearby = near_limit[max(0, frame - window) : frame + window + 1]
        assert nearby.any(), f"frame {frame}: pelvis {1e3 * drop[frame]:.0f} mm low with no leg at full stretch"


@pytest.mark.parametrize("gait", ["walk", "jog"])
def test_on_flat_ground_at_the_authored_height_nothing_moves(gait):
    result = planted(gait, "flat")
    moved = np.linalg.norm(result["baked"]["bones"][..., :3, 3] - result["authored"]["bones"][..., :3, 3], axis=-1)
    assert moved.max() <= FLAT_CHANGE


def test_feet_stand_on_the_evaluated_ground_with_modifiers():
    result = planted("walk", "rough")
    baked = result["baked"]
    closest = np.abs(baked["soles"][..., 2] - baked["surface"]).min(axis=2)
    assert closest[result["stance"]].max() <= STANCE_DISTANCE
    assert (baked["surface"] - baked["soles"][..., 2]).max() <= PENETRATION


def test_live_planting_puts_standing_feet_on_the_surface(lik):
    rig, keyed = keyed_scene("walk", "terrain")
    rig.limb_ik.live = True
    live = sample(lik, rig, keyed)
    stance = np.stack([frames_of(keyed.stance[s], keyed) for s in ("L", "R")], axis=1)
    closest = np.abs(live["soles"][..., 2] - live["surface"]).min(axis=2)
    assert (live["surface"] - live["soles"][..., 2]).max() <= PENETRATION
    assert closest[stance].max() <= STANCE_DISTANCE


def _spans(mask):
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def _slide(authored, baked, contact, floor) -> float:
    """Largest distance a sole point moves while the animation has it on the floor."""
    worst = 0.0
    for foot in range(contact.shape[1]):
        for first, last in _spans(contact[:, foot]):
            for point in range(baked["soles"].shape[2]):
                down = np.flatnonzero(authored["soles"][first : last + 1, foot, point, 2] - floor <= 1e-3)
                if len(down):
                    path = baked["soles"][first + down, foot, point, :2]
                    worst = max(worst, float(np.linalg.norm(path - path[0], axis=1).max()))
    return worst


@pytest.mark.parametrize("lock", [True, False])
def test_foot_lock_holds_feet_the_animation_lets_slide(lik, lock):
    """The whole rig drifts sideways at 3 cm/s, so every standing foot slides in the animation."""
    rig, keyed = keyed_scene("walk", "flat")
    preferences = bpy.context.preferences.edit
    interpolation, preferences.keyframe_new_interpolation_type = preferences.keyframe_new_interpolation_type, "LINEAR"
    try:  # a steady drift
        for frame in (keyed.frame_start, keyed.frame_end):
            rig.location.x = 0.03 * (frame - keyed.frame_start) / FPS
            rig.keyframe_insert("location", index=0, frame=frame)
    finally:
        preferences.keyframe_new_interpolation_type = interpolation
    rig.limb_ik.use_foot_lock = lock
    contact = np.stack([frames_of(keyed.contact[s], keyed) for s in ("L", "R")], axis=1)
    authored = sample(lik, rig, keyed)
    lik.api.plant(rig)
    baked = sample(lik, rig, keyed)
    slid = _slide(authored, authored, contact, keyed.floor)
    assert slid >= 0.01  # the animation does slide
    if lock:
        assert _slide(authored, baked, contact, keyed.floor) <= SLIDE
    else:
        assert _slide(authored, baked, contact, keyed.floor) >= 0.5 * slid


def _unchanged(rig, action):
    before = rigs.pose_snapshot(rig)
    limbs = rigs.limbs_table(rig)
    with pytest.raises(RuntimeError) as raised:
        action()
    assert np.array_equal(before, rigs.pose_snapshot(rig)) and limbs == rigs.limbs_table(rig)
    return str(raised.value)


def test_planting_without_ground_says_so(lik):
    rig, _ = keyed_scene("walk", "flat")
    rig.limb_ik.ground = None
    message = _unchanged(rig, bpy.ops.limb_ik.solve)
    assert "no ground collection" in message


def test_planting_a_two_bone_leg_says_it_needs_a_foot(lik):
    rig, _ = keyed_scene("walk", "flat")
    rig.limb_ik.limbs["leg.L"].end_bone = ""
    message = _unchanged(rig, bpy.ops.limb_ik.solve)
    assert "leg.L" in message and "planting needs thigh, shin and foot" in message


def test_a_toe_that_is_not_below_the_foot_is_refused(lik):
    rig, _ = keyed_scene("walk", "flat")
    rig.limb_ik.limbs["leg.L"].toe_bone = "hand.L"
    message = _unchanged(rig, bpy.ops.limb_ik.solve)
    assert "toe bone 'hand.L' is not a child of the foot" in message


def test_a_ground_without_a_mesh_is_refused(lik):
    rig, _ = keyed_scene("walk", "flat")
    empty_ground = bpy.data.collections.new("Nothing")
    bpy.context.scene.collection.children.link(empty_ground)
    empty_ground.objects.link(rigs.empty("Marker"))
    rig.limb_ik.ground = empty_ground
    message = _unchanged(rig, bpy.ops.limb_ik.solve)
    assert "has no mesh to stand on" in message


def test_foot_report_operator_and_api(lik):
    rig, keyed = keyed_scene("walk", "terrain")
    bpy.context.scene.frame_end = keyed.frame_start + 150  # onto the ramp
    assert bpy.ops.limb_ik.foot_report() == {"FINISHED"}
    report = lik.api.foot_report(rig)
    assert [foot["limb"] for foot in report["feet"]] == ["leg.L", "leg.R"]
    assert report["feet"][0]["max_penetration"] > 0.05  # as animated, the feet sink into the ramp
