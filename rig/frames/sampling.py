# SPDX-License-Identifier: GPL-3.0-or-later
"""The animated pose of a rig and the world matrices of its limbs' goals over many frames, for a bake.

Two ways to the same numbers: evaluate the F-curves that drive them all at once (:mod:`.frames.bulk`), when
nothing but F-curves moves them, or let Blender evaluate the scene frame by frame. The bulk way is
kept only if it agrees with Blender at a few frames spread over the range, to :data:`AGREEMENT` of
the rig's size; :class:`Sampled` says which way was taken and why.
"""

from collections.abc import Callable
from dataclasses import dataclass

import bpy
import numpy as np

from .. import animator, plan, timeline
from ..limbs import goals
from ..pose import Pose, joined, read_pose
from . import bulk

AGREEMENT = 1e-5  #: how closely, relative to the rig's size, the bulk evaluation must match Blender's
#: Blender's numbers are single precision: it rounds each to within this fraction of its size (a few steps of
#: float32), which far from the origin (a long walk) is more than :data:`AGREEMENT` of the rig and no disagreement.
ROUNDING = 4.0 * float(np.finfo(np.float32).eps)
CHECKS = 5  #: frames at which they are compared: the first, the last and some between
BULK, STEPPED = "bulk", "stepped"


@dataclass
class Sampled:
    frames: np.ndarray  #: (F,) the frames sampled, ascending
    pose: Pose  #: the rig's animated pose over them (leading axis F)
    goals: np.ndarray  #: (F, G, 4, 4) world matrices of :attr:`.plan.Plan.refs` (NaN where not read)
    path: str  #: :data:`BULK` or :data:`STEPPED`
    why: str  #: a sentence: why this path

    def rows(self, frames) -> np.ndarray:
        """Where each of ``frames`` is among the frames sampled."""
        return np.searchsorted(self.frames, frames)


def sample(
    depsgraph,
    planned: plan.Plan,
    frames,
    goal_frames,
    progress: Callable[[float], None] | None = None,
) -> Sampled:
    """The rig of ``planned`` at every frame of ``frames`` of the scene ``depsgraph`` evaluates, and its goals
    at ``goal_frames`` (some of them). ``progress`` is called with the fraction done."""
    scene = depsgraph.scene
    frames = np.array(sorted(set(frames)), dtype=int)
    goal_frames = set(goal_frames)
    for obj in scene.objects:  # the animator's values where live solving wrote: what the bulk evaluation reads
        animator.restore(obj)
    try:
        pose, goal_world, bones = bulk.evaluate(planned, scene, frames)
    except bulk.NotBulk as error:
        why = f"Stepped through the scene: {error}."
    else:
        checked = _check_frames(frames, goal_frames)
        rows = np.searchsorted(frames, checked)
        blender = _step(depsgraph, planned, checked, set(checked))
        worst, where = _difference(planned, pose.frames(rows), goal_world[rows], *blender, bones)
        if worst <= AGREEMENT:
            if progress is not None:
                progress(1.0)
            shown = ", ".join(str(f) for f in checked)
            why = (
                f"Evaluated from F-curves in bulk; they agree with Blender at frames {shown} to {worst:.0e} of "
                "the rig's size."
            )
            return Sampled(frames, pose, goal_world, BULK, why)
        why = (
            f"Stepped through the scene: F-curves evaluated in bulk differ from Blender's evaluation by "
            f"{worst:.0e} of the rig's size ({where})."
        )
    pose, goal_world = _step(depsgraph, planned, frames, goal_frames, progress)
    return Sampled(frames, pose, goal_world, STEPPED, why)


class NotHere(Exception):
    """The take must be read by stepping the scene through it, which :func:`take` was told not to do here."""


def take(
    planned: plan.Plan,
    depsgraph,
    frames,
    shown: Pose,
    progress: Callable[[float], None] | None = None,
    may_step: bool = True,
) -> Pose:
    """The rig's animated pose at each of ``frames``, for planting's analysis of the take during a frame
    change (live solving, Solve): read from the F-curves in bulk and checked against ``shown``, the pose
    Blender evaluated at the current frame (over one frame), so that no other frame is evaluated. Stepped
    through the scene only where the F-curves do not tell the pose alone (:mod:`.frames.bulk` says why) or
    disagree with Blender. ``progress`` is called with the fraction read. Without ``may_step`` (inside a frame
    change, where the scene must not be stepped) a take that needs stepping raises :class:`NotHere`."""
    scene = depsgraph.scene
    frames = np.array(list(frames), dtype=int)
    current = scene.frame_current
    animator.restore(planned.obj)  # unkeyed channels: the animator's values, not the last live write
    try:
        if scene.frame_subframe or current not in frames:
            raise bulk.NotBulk("the current frame is not one of the take's")
        pose, _, bones = bulk.evaluate(planned, scene, frames)
    except bulk.NotBulk:
        pass
    else:
        row = int(np.searchsorted(frames, current))
        none = np.zeros((1, 0, 4, 4))
        if _difference(planned, pose.frames([row]), none, shown, none, bones)[0] <= AGREEMENT:
            if progress is not None:
                progress(1.0)
            return pose
    if not may_step:
        raise NotHere
    return _step(depsgraph, planned, frames, set(), progress)[0]


def _check_frames(frames: np.ndarray, goal_frames: set) -> list[int]:
    """The frames where the bulk evaluation is compared with Blender's: spread over ``frames``, the
    first and last of them and of ``goal_frames`` included."""
    spread = frames[np.unique(np.round(np.linspace(0, len(frames) - 1, CHECKS)).astype(int))]
    return sorted({*spread.tolist(), min(goal_frames), max(goal_frames)})


def _step(depsgraph, planned, frames, goal_frames: set, progress=None) -> tuple[Pose, np.ndarray]:
    """Blender's evaluation at each of ``frames``: the rig's pose, and its goals at ``goal_frames``."""
    obj, refs = planned.obj, planned.refs

    def read(depsgraph):
        pose = read_pose(obj, obj.evaluated_get(depsgraph))
        if depsgraph.scene.frame_current not in goal_frames:
            return pose, np.full((len(refs), 4, 4), np.nan)
        goals.check_evaluated(obj, planned.limbs, planned.chains, depsgraph)
        return pose, goals.world_matrices(refs, depsgraph)

    poses, goal_world = zip(*timeline.step(depsgraph, [int(f) for f in frames], read, progress))
    return joined(list(poses)), np.stack(goal_world)


def _difference(planned, pose: Pose, goal_world, blender_pose: Pose, blender_goals, bones) -> tuple[float, str]:
    """The largest difference between two evaluations of the same frames, relative to the rig's size, and
    where it is: the rig's world matrix, the matrices and channels of ``bones``, the goals."""
    obj = planned.obj
    size = _size(obj)
    world_size = size * float(np.abs(np.linalg.det(blender_pose.world[0, :3, :3])) ** (1.0 / 3.0))
    parts = [
        ("the armature's world matrix", _matrix_difference(pose.world, blender_pose.world, world_size), None),
        ("bone matrices", _matrix_difference(pose.matrices[:, bones], blender_pose.matrices[:, bones], size), bones),
        ("goals", _matrix_difference(goal_world, blender_goals, world_size), None),
        ("bone locations", _apart(pose.location, blender_pose.location)[:, bones].max(axis=-1) / size, bones),
    ]
    for name in ("scale", "quaternion", "euler", "axis_angle"):
        difference = _apart(getattr(pose, name), getattr(blender_pose, name))[:, bones].max(axis=-1)
        parts.append((f"bone {name.replace('_', '-')} channels", difference, bones))
    worst, where = 0.0, ""
    for name, difference, columns in parts:
        difference = np.where(np.isnan(difference), np.inf, difference)  # one side missing: no agreement
        if difference.size and difference.max() > worst:
            worst = float(difference.max())
            at = np.unravel_index(np.argmax(difference), difference.shape)
            where = name if columns is None else f"{name} of bone '{obj.pose.bones[int(columns[at[-1]])].name}'"
    return worst, where


def _matrix_difference(a: np.ndarray, b: np.ndarray, size: float) -> np.ndarray:
    """(...) how far apart matrices (..., 4, 4) move points within ``size`` of their origin, over ``size``."""
    difference = _apart(a, b)
    return np.maximum(difference[..., :3, :3].max(axis=(-2, -1)), difference[..., :3, 3].max(axis=-1) / size)


def _apart(ours: np.ndarray, blender: np.ndarray) -> np.ndarray:
    """How far apart each of our numbers is from Blender's, beyond Blender's rounding of it (NaN stays NaN)."""
    return np.maximum(np.abs(ours - blender) - ROUNDING * np.abs(blender), 0.0)


def _size(obj: bpy.types.Object) -> float:
    """The rig's size in its own units: the diagonal of the box around its bones' rest heads and tails."""
    bones = obj.data.bones
    ends = np.empty((2, 3 * len(bones)), np.float32)
    bones.foreach_get("head_local", ends[0])
    bones.foreach_get("tail_local", ends[1])
    points = ends.reshape(-1, 3).astype(np.float64)
    return max(float(np.linalg.norm(points.max(axis=0) - points.min(axis=0))), 1e-9)
