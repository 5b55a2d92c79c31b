# SPDX-License-Identifier: GPL-3.0-or-later
"""Real clips planted and measured by the shared, independent measure, for tests and benchmarks.

``../shared/tools/plant_metrics.py`` measures with nothing of Limb IK's: contacts from the source
motion (the ball low and slow), positions from bone heads and tails (a glTF character's ball: the
lowest vertex of its skinned foot, ``sample_sole``), the ground by ray cast. The clips and their legs
come from :mod:`takes.clips`, the grounds from :mod:`takes.grounds`. (The demo itself reports with
Limb IK's own foot report, which follows the same definitions.) :func:`jump` adds a figure of its own.
"""

import contextlib
import functools
import sys
import time
from importlib import import_module

import bpy
import numpy as np

from . import clips

sys.path.insert(0, str(clips.SHARED / "tools"))
import plant_metrics  # noqa: E402

#: The planting issue's limits, by plant_metrics' names.
LIMITS = {
    "ball_height_p95": 0.01,
    "ball_height_median": 0.005,
    "deepest": 0.005,
    "pitch_p95_deg": 5.0,
    "knee_pop_deg": 10.0,
    "stance_slide": 0.005,
}
#: What holds for the quadrupeds' in-place cycles: height and sinking.
QUADRUPED_LIMITS = {key: LIMITS[key] for key in ("ball_height_p95", "ball_height_median", "deepest")}


def limits(name: str) -> dict:
    """The human limits for clip ``name``, animals too; an in-place cycle's stance slide is by design."""
    return {key: value for key, value in LIMITS.items() if key != "stance_slide" or not clips.CLIPS[name].in_place}


def extension():
    return import_module("bl_ext.limb_ik_dev.limb_ik")


def fps() -> float:
    scene = bpy.context.scene
    return scene.render.fps / scene.render.fps_base


@contextlib.contextmanager
def contacts_by_height(in_place: bool):
    """An in-place cycle's standing feet slide backwards at walking speed: its contacts are taken by
    height alone (plant_metrics' speed limit lifted for the duration)."""
    speed = plant_metrics.CONTACT_SPEED
    plant_metrics.CONTACT_SPEED = float("inf") if in_place else speed
    try:
        yield
    finally:
        plant_metrics.CONTACT_SPEED = speed


def bones(rig: bpy.types.Object) -> np.ndarray:
    """(B, 2, 3) world heads and tails of every bone as evaluated now."""
    evaluated = rig.evaluated_get(bpy.context.evaluated_depsgraph_get())
    world = evaluated.matrix_world
    return np.array([[world @ pb.head, world @ pb.tail] for pb in evaluated.pose.bones])


def play(rig: bpy.types.Object, frames) -> np.ndarray:
    """(F, B, 2, 3) every bone's world head and tail at every frame, as it plays."""
    scene, out = bpy.context.scene, []
    for frame in frames:
        scene.frame_set(frame)
        out.append(bones(rig))
    return np.array(out)


def foot_points(rig: bpy.types.Object, legs: dict, frames) -> np.ndarray:
    """(F, legs, 4, 3) the world heads and tails of each leg's foot and toe bones (the foot's twice without a toe)
    at every frame, as it plays."""
    scene, out = bpy.context.scene, []
    for frame in frames:
        scene.frame_set(frame)
        evaluated = rig.evaluated_get(bpy.context.evaluated_depsgraph_get())
        world, bones = evaluated.matrix_world, evaluated.pose.bones
        out.append(
            [
                [world @ p for b in (foot, toe or foot) for p in (bones[b].head, bones[b].tail)]
                for _, _, foot, toe in legs.values()
            ]
        )
    return np.array(out, dtype=np.float64)


def jump(source: np.ndarray, result: np.ndarray) -> float:
    """The per-frame jump: the most any foot point (:func:`foot_points`) moves in one frame beyond what it moves
    in the source that frame (metres; 0 when none moves further). A ground that rises under a foot moves it
    legitimately (a 10° slope under a walking foot, a step eased over a few frames): the figure includes that."""
    moved = np.linalg.norm(np.diff(result, axis=0), axis=-1) - np.linalg.norm(np.diff(source, axis=0), axis=-1)
    return float(max(moved.max(initial=0.0), 0.0))


def seam(source: np.ndarray, result: np.ndarray) -> float:
    """Where the source is a loop (its last frame is its first again: every foot point (:func:`foot_points`) within a
    millimetre), the most any foot point's planted last frame is from its first: what the planted take jumps by at the
    seam when it plays on repeat (metres). NaN for a source that is not such a loop."""
    if np.linalg.norm(source[-1] - source[0], axis=-1).max() > 1e-3:
        return float("nan")
    return float(np.linalg.norm(result[-1] - result[0], axis=-1).max())


def pelvis_heights(rig: bpy.types.Object, name: str, frames, ground=None) -> np.ndarray:
    """(F,) the pelvis bone's head: height above the ground under it (by ray cast), or above the
    authored floor without ``ground``."""
    scene, bone, floor = bpy.context.scene, clips.CLIPS[name].pelvis, clips.CLIPS[name].floor
    heights = []
    for frame in frames:
        scene.frame_set(frame)
        head = rig.matrix_world @ rig.pose.bones[bone].head
        under = ground.under(head) if ground is not None else None
        heights.append(head.z - (under[0] if under is not None else floor))
    return np.array(heights)


@functools.cache
def planted(
    name: str,
    ground: str,
    lock: bool = True,
    pelvis_mode: str | None = None,
    backwards: bool = False,
    bone_heuristic: str = "BLENDER",
) -> dict:
    """Clip ``name`` on a ``ground`` (``backwards``: played from its end, :func:`.clips.reverse`; a glTF file imported
    with the ``bone_heuristic`` option), its legs detected and planted by the API and baked (with ``pelvis_mode``,
    default: the rig's default); measured before and after. Cached: plain data survives the scene resets between
    tests."""
    lik = extension()
    rig, frames, collection = clips.stage(name, ground, bone_heuristic, backwards=backwards)
    clip = clips.CLIPS[name]
    legs, objects = clip.legs, list(collection.objects)
    if clip.skinned:  # its mesh stands on the ground, not its bones
        feet = plant_metrics.foot_bones(rig, legs, frames)
        source = plant_metrics.sample_sole(rig, legs, frames, feet=feet, floor=clip.floor)
    else:
        source = plant_metrics.sample(rig, legs, frames)
    authored_points = foot_points(rig, legs, frames)
    authored_pelvis = pelvis_heights(rig, name, frames)
    lik.api.detect_limbs(rig)
    rig.limb_ik.use_foot_lock = lock
    began = time.perf_counter()
    bake = lik.api.plant(rig, collection, pelvis_mode=pelvis_mode)
    seconds = time.perf_counter() - began
    if clip.skinned:
        result = plant_metrics.sample_sole(rig, legs, frames, feet=feet, ground=objects, like=source)
    else:
        result = plant_metrics.sample(rig, legs, frames)
    with contacts_by_height(clip.in_place):
        figures = plant_metrics.figures(source, result, objects, fps(), clip.floor)
    planted_pelvis = pelvis_heights(rig, name, frames, plant_metrics.Ground(objects))
    figures["pelvis_drop"] = float(max((authored_pelvis - planted_pelvis).max(), 0.0))
    planted_points = foot_points(rig, legs, frames)
    figures["jump"] = jump(authored_points, planted_points)
    figures["seam"] = seam(authored_points, planted_points)
    return {"figures": figures, "seconds": seconds, "bake": bake, "frames": frames}


def over(figures: dict, limits: dict) -> dict:
    """The figures beyond their limits, and each limit."""
    return {key: (round(figures[key], 4), limit) for key, limit in limits.items() if not figures[key] <= limit}
