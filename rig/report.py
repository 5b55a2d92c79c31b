# SPDX-License-Identifier: GPL-3.0-or-later
"""How well the feet stand: figures measured on what plays back, frame by frame."""

from dataclasses import asdict, dataclass

import bpy
import numpy as np

from ..solvers.planting.timeline import intervals
from . import live, plant, solve
from .errors import LimbError
from .ground import Ground
from .pose import read_pose

#: A sole point this close to the surface is down on it (heel and ball both down: the foot is flat).
FLAT = 0.01


@dataclass
class FootFigures:
    limb: str
    stance_frames: int  #: frames the foot stands (low and slow on the surface)
    sole_distance_median: float  #: metres from the lowest sole point to the surface, in stance
    sole_distance_max: float
    max_penetration: float  #: deepest any sole point goes below the surface, any frame
    max_normal_angle: float  #: degrees between sole and surface normals while heel and ball are both down
    stance_slide: float  #: metres a touching sole point moves within one stance
    max_knee_change: float  #: degrees the knee angle changes between two frames


@dataclass
class PlantReport:
    frames: tuple[int, int]
    feet: list[FootFigures]
    pelvis_above_ground: np.ndarray  #: (F,) pelvis height above the ground carrying the character
    pelvis_above_floor: np.ndarray  #: (F,) pelvis height above the authored floor
    authored_pelvis: np.ndarray  #: (F,) the animation's pelvis height above the authored floor
    sole_height: np.ndarray  #: (F, feet) height of each foot's sole (the mean of its sole points)
    surface_height: np.ndarray  #: (F, feet) height of the surface under it (the mean under those points)

    @property
    def pelvis_drop(self) -> float:
        """Most the pelvis sits lower above the ground than it was animated above the floor."""
        return float(max((self.authored_pelvis - self.pelvis_above_ground).max(), 0.0))

    def as_dict(self) -> dict:
        return {
            "frames": list(self.frames),
            "feet": [asdict(f) for f in self.feet],
            "pelvis_drop": self.pelvis_drop,
            "pelvis_height_change_max": float(np.abs(self.pelvis_above_ground - self.authored_pelvis).max()),
        }

    def table(self) -> str:
        """The figures as a markdown table."""
        lines = [
            "| foot | stance frames | sole-surface median (mm) | max (mm) | max penetration (mm) | "
            "sole normal (°) | stance slide (mm) | knee change (°/frame) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for f in self.feet:
            lines.append(
                f"| {f.limb} | {f.stance_frames} | {1e3 * f.sole_distance_median:.1f} | {1e3 * f.sole_distance_max:.1f}"
                f" | {1e3 * f.max_penetration:.1f} | {f.max_normal_angle:.1f} | {1e3 * f.stance_slide:.1f}"
                f" | {f.max_knee_change:.1f} |"
            )
        drop = 1e3 * self.pelvis_drop
        lines.append(f"\nPelvis height above the ground, most below its authored height: {drop:.1f} mm")
        return "\n".join(lines)


def foot_report(
    obj: bpy.types.Object, frame_start: int | None = None, frame_end: int | None = None, authored: PlantReport = None
) -> PlantReport:
    """Measure the planted feet over a frame range (default: the scene's) as they play back now
    (live planting or baked keys).

    The pelvis is compared with the animation as authored: ``authored``, a report taken before
    planting was baked (with live solving off, it measures the animation itself), or else the
    animation played with live solving paused. After a bake without ``authored`` the keys are
    the animation, and the pelvis drop reads zero.
    """
    scene = bpy.context.scene
    planned = solve.plan(obj)
    planned.raise_first_problem()
    planting = planned.planting
    if planting is None:
        raise LimbError(f"Armature '{obj.name}' has no planted limbs to report on.")
    start = scene.frame_start if frame_start is None else frame_start
    end = scene.frame_end if frame_end is None else frame_end
    frames = range(start, end + 1)
    ground = Ground(obj.limb_ik.ground, bpy.context.evaluated_depsgraph_get())
    played = _sample(scene, obj, planting, frames)
    if authored is not None:
        if authored.frames != (start, end):
            raise LimbError(f"The authored report covers frames {authored.frames}, not {(start, end)}.")
        authored_pelvis = authored.pelvis_above_floor
    else:
        live.restore(obj)
        with live.suspended():
            authored_pelvis = _sample(scene, obj, planting, frames)["pelvis"][:, 2] - obj.limb_ik.floor_height
        scene.frame_set(scene.frame_current)  # the frame as it was, solved again if live

    s = obj.limb_ik
    fps = solve.fps(scene)
    measured = [_figures(foot, played, n, ground, fps, s) for n, foot in enumerate(planting.feet)]
    feet = [m[0] for m in measured]
    level = plant.support_level(planting, played["soles"], played["pelvis"], ground)
    height = played["pelvis"][:, 2]
    return PlantReport(
        (start, end), feet, height - level, height - s.floor_height, authored_pelvis,
        np.stack([m[1] for m in measured], axis=1), np.stack([m[2] for m in measured], axis=1),
    )  # fmt: skip


def _sample(scene, obj, planting: plant.PlantPlan, frames) -> dict[str, np.ndarray]:
    """World-space soles, sole normals, knee angles and pelvis position at every frame."""
    current = (scene.frame_current, scene.frame_subframe)
    soles, normals, knees, pelvis = [], [], [], []
    try:
        for frame in frames:
            scene.frame_set(frame)
            pose = read_pose(obj, obj.evaluated_get(bpy.context.evaluated_depsgraph_get()))
            inputs = plant.frame_inputs(planting, pose)
            soles.append(inputs.soles)
            normals.append([inputs.feet[n][:3, :3] @ f.sole_up for n, f in enumerate(planting.feet)])
            knees.append([_knee_angle(pose, f) for f in planting.feet])
            pelvis.append(inputs.pelvis[:3, 3])
    finally:
        scene.frame_set(current[0], subframe=current[1])
    return {
        "soles": np.array(soles),
        "normals": np.array(normals),
        "knees": np.array(knees),
        "pelvis": np.array(pelvis),
    }


def _knee_angle(pose, foot: plant.Foot) -> float:
    """Degrees between the thigh and shin segments (0 = straight)."""
    hip, knee, ankle = (pose.matrices[i][:3, 3] for i in (foot.upper, foot.lower, foot.foot))
    upper, lower = knee - hip, ankle - knee
    cos = upper @ lower / (np.linalg.norm(upper) * np.linalg.norm(lower))
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


def _figures(
    foot: plant.Foot, played, n: int, ground: Ground, fps: float, s
) -> tuple[FootFigures, np.ndarray, np.ndarray]:
    """One foot's figures, and per frame the height of its sole and of the surface under it."""
    soles = played["soles"][:, n]  # (F, P, 3)
    frames, points = soles.shape[:2]
    surface, normals, _ = ground.cast_down(soles.reshape(-1, 3), s.search_distance, s.floor_height)
    clearance = soles[..., 2] - surface.reshape(frames, points)
    contacts, touching, step = plant.stance(soles, clearance, fps, s)
    lowest = clearance.min(axis=1)
    surface_normal = normals.reshape(frames, points, 3).sum(axis=1)
    surface_normal /= np.linalg.norm(surface_normal, axis=1, keepdims=True)
    sole_normal = played["normals"][:, n] / np.linalg.norm(played["normals"][:, n], axis=1, keepdims=True)
    angle = np.degrees(np.arccos(np.clip(np.einsum("ij,ij->i", sole_normal, surface_normal), -1.0, 1.0)))
    slide = 0.0
    for first, last in intervals(contacts):
        for p in range(points):
            frames_touching = np.flatnonzero(touching[first : last + 1, p]) + first
            if len(frames_touching):
                moved = soles[frames_touching, p, :2] - soles[frames_touching[0], p, :2]
                slide = max(slide, float(np.linalg.norm(moved, axis=1).max()))
    flat = contacts & (clearance[:, :2].max(axis=1) <= FLAT)  # heel and ball both down
    in_stance = lowest[contacts]
    figures = FootFigures(
        foot.limb,
        int(contacts.sum()),
        float(np.median(np.abs(in_stance))) if len(in_stance) else 0.0,
        float(np.abs(in_stance).max()) if len(in_stance) else 0.0,
        float(max(-clearance.min(), 0.0)),
        float(angle[flat].max()) if flat.any() else 0.0,
        slide,
        float(np.abs(np.diff(played["knees"][:, n])).max()) if frames > 1 else 0.0,
    )
    return figures, soles[..., 2].mean(axis=1), surface.reshape(frames, points).mean(axis=1)
