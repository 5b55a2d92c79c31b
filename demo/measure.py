# SPDX-License-Identifier: GPL-3.0-or-later
"""Measure planted motions the way the foot-planting criteria are stated, independently of the
planting code: the surface by Blender's own ray cast, stance from the motion's ground truth.

Used by the planting tests and by ``benchmarks/planting.py``, which prints the figures.
"""

from dataclasses import dataclass

import bpy
import numpy as np
from mathutils import Vector

from . import motion, terrain

GAITS = {
    # name: (keying function, seconds per cycle, extra arguments)
    "walk": (motion.key_walk, 100 / 60, {"cycles": 4}),  # 0.78 m/s
    "jog": (motion.key_run, 45 / 60, {"cycles": 4, "stride": 1.3}),  # 1.73 m/s
}
SMOOTHING = 1.0 / 6.0  #: seconds the pelvis is smoothed over


def keyed_scene(gait: str, ground_kind: str, fps: int = 60):
    """A scene with the metarig keyed with ``gait`` at ``fps`` and its legs planted on ``ground_kind``
    ("terrain": the ramp and the step, "rough": displaced ground, "flat": a plane at the floor).
    Returns the rig and the :class:`motion.Motion`."""
    scene = bpy.context.scene
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    scene.render.fps = fps
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
    bpy.ops.object.armature_human_metarig_add()
    rig = bpy.context.object
    key, cycle_seconds, arguments = GAITS[gait]
    keyed = key(rig, cycle_frames=round(cycle_seconds * fps), **arguments)
    scene.frame_start, scene.frame_end = keyed.frame_start, keyed.frame_end
    bpy.ops.limb_ik.detect_limbs()
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.name.startswith("leg")
    rig.limb_ik.ground = ground
    rig.limb_ik.pelvis_smoothing = SMOOTHING * fps
    return rig, keyed


def sample(lik, rig, keyed) -> dict:
    """World-space soles, the surface under them (ray cast), sole normals, knees, leg stretch,
    pelvis and every bone's matrix, at every frame of ``keyed``."""
    scene = bpy.context.scene
    planned = lik.rig.solve.plan(rig)
    feet = lik.rig.plant.plant_plan(rig, planned.limbs, planned.chains)
    out = {key: [] for key in ("soles", "normals", "knees", "stretch", "pelvis", "bones")}
    for frame in range(keyed.frame_start, keyed.frame_end + 1):
        scene.frame_set(frame)
        pose = lik.rig.pose.read_pose(rig, rig.evaluated_get(bpy.context.evaluated_depsgraph_get()))
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
    """Degrees between the thigh and shin segments (0 = straight)."""
    hip, knee, ankle = (matrices[i][:3, 3] for i in (foot.upper, foot.lower, foot.foot))
    a, b = knee - hip, ankle - knee
    return float(np.degrees(np.arccos(np.clip(a @ b / np.linalg.norm(a) / np.linalg.norm(b), -1.0, 1.0))))


def leg_stretch(matrices, foot) -> float:
    """Hip-to-ankle distance as a fraction of the leg's length (1 = straight)."""
    return float(np.linalg.norm(matrices[foot.foot][:3, 3] - matrices[foot.upper][:3, 3]) / foot.reach)


def surface_under(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Height and upward normal of the topmost surface below (or up to 2 m above) each point, by Blender's
    ray cast (which gives the normal of the face's own side: a mesh may face down)."""
    scene = bpy.context.scene
    depsgraph = bpy.context.evaluated_depsgraph_get()
    heights, normals = np.zeros(points.shape[:-1]), np.zeros(points.shape)
    for index in np.ndindex(points.shape[:-1]):
        x, y, z = points[index]
        hit, location, normal, *_ = scene.ray_cast(depsgraph, Vector((x, y, z + 2.0)), Vector((0, 0, -1)), distance=6.0)
        heights[index] = location.z if hit else 0.0
        normals[index] = (normal if normal.z >= 0.0 else -normal) if hit else (0.0, 0.0, 1.0)
    return heights, normals


def frames_of(spans, keyed) -> np.ndarray:
    """A mask over ``keyed``'s frames of the inclusive (first, last) ``spans``."""
    mask = np.zeros(keyed.frame_end - keyed.frame_start + 1, bool)
    for first, last in spans:
        mask[first - keyed.frame_start : last - keyed.frame_start + 1] = True
    return mask


def plant_and_measure(lik, gait: str, ground_kind: str = "terrain", fps: int = 60) -> dict:
    """Key ``gait``, measure it as animated, plant and bake it (``"bake"``: the bake's report), measure it again."""
    bpy.ops.wm.read_homefile(app_template="")
    rig, keyed = keyed_scene(gait, ground_kind, fps)
    authored = sample(lik, rig, keyed)
    before = lik.rig.report.foot_report(rig)
    baked = lik.api.plant(rig)
    return {
        "authored": authored,
        "baked": sample(lik, rig, keyed),
        "stance": np.stack([frames_of(keyed.stance[s], keyed) for s in ("L", "R")], axis=1),
        "contact": np.stack([frames_of(keyed.contact[s], keyed) for s in ("L", "R")], axis=1),
        "report": lik.rig.report.foot_report(rig, authored=before),
        "floor": keyed.floor,
        "bake": baked,
    }


@dataclass
class Figures:
    stance_distance: float  #: metres: largest gap between the closest sole point and the surface, in stance
    penetration: float  #: metres: deepest any sole point goes into the ground
    normal_angle: float  #: degrees between sole and surface while the foot stands flat
    knee_change: float  #: degrees: largest knee-angle change between two frames
    authored_knee_change: float  #: the same, as animated
    slide: float  #: metres: farthest a sole point the animation has on the floor moves during a contact
    pelvis_change: float  #: metres: largest difference between the pelvis' height above the ground and as authored
    flat_change: float  #: metres: largest movement of any bone (meaningful on flat ground)


def figures(result: dict) -> Figures:
    """The planting criteria of a :func:`plant_and_measure` result."""
    authored, baked = result["authored"], result["baked"]
    gap = baked["soles"][..., 2] - baked["surface"]  # (F, feet, points)
    sole = baked["normals"] / np.linalg.norm(baked["normals"], axis=2, keepdims=True)
    ground = baked["surface_normal"].sum(axis=2)
    ground /= np.linalg.norm(ground, axis=2, keepdims=True)
    angle = np.degrees(np.arccos(np.clip(np.einsum("fni,fni->fn", sole, ground), -1.0, 1.0)))
    flat = result["stance"] & (np.abs(gap[..., :2]).max(axis=2) <= 0.01)
    report = result["report"]
    return Figures(
        stance_distance=float(np.abs(gap).min(axis=2)[result["stance"]].max()),
        penetration=float(max(-gap.min(), 0.0)),
        normal_angle=float(angle[flat].max()) if flat.any() else 0.0,
        knee_change=float(np.abs(np.diff(baked["knees"], axis=0)).max()),
        authored_knee_change=float(np.abs(np.diff(authored["knees"], axis=0)).max()),
        slide=slide(authored, baked, result["contact"], result["floor"]),
        pelvis_change=float(np.abs(report.pelvis_above_ground - report.authored_pelvis).max()),
        flat_change=float(np.linalg.norm(baked["bones"][..., :3, 3] - authored["bones"][..., :3, 3], axis=-1).max()),
    )


def slide(authored: dict, baked: dict, contact: np.ndarray, floor: float) -> float:
    """Farthest a sole point moves, during a contact, while the animation has that point on the floor."""
    worst = 0.0
    for foot in range(contact.shape[1]):
        for first, last in spans(contact[:, foot]):
            for point in range(baked["soles"].shape[2]):
                down = np.flatnonzero(authored["soles"][first : last + 1, foot, point, 2] - floor <= 1e-3)
                if len(down):
                    path = baked["soles"][first + down, foot, point, :2]
                    worst = max(worst, float(np.linalg.norm(path - path[0], axis=1).max()))
    return worst


def spans(mask) -> list[tuple[int, int]]:
    """Runs of True in ``mask`` as inclusive (first, last) indices."""
    edges = np.diff(np.concatenate([[0], np.asarray(mask).astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))
