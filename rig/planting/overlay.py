# SPDX-License-Identifier: GPL-3.0-or-later
"""What the viewport overlay draws of a rig, as plain world-space polylines (the draw module only draws them,
the demo makes objects of them, tests check them against the bones).

* Per planted leg (:func:`footing`), from the take last planted for the rig (:func:`.legs.last_planted`): a
  footprint per stance, the sole's outline (:func:`...solvers.planting.prints.sole_outline`) laid on the ground
  under the planted foot at the stance's flattest frame, and the path of the foot's ball through the air.
* For the active limb at the current frame (:func:`knee_circle`): the position system's circle where its knee
  can lie with the hip and the ankle where they are, the bones at their rest lengths as stretched, and the line
  from its centre toward the pole (or, without one, toward the knee: the side it bends to).
"""

from dataclasses import dataclass

import bpy
import numpy as np

from ...solvers import SolverError
from ...solvers.planting.contacts import BALL, HEEL
from ...solvers.planting.prints import circle, sole_outline
from ...solvers.planting.timeline import intervals
from ...solvers.two_bone import knee_circle as position_circle
from ..errors import LimbIKError
from ..limbs.chain import chain_of
from .ground import Ground
from .legs import Analysis, PlantPlan, last_planted

LIFT = 0.001  #: metres footprints are drawn above the ground, so that the ground does not hide them
SPACING = 1.0 / 24.0  #: most distance between two points of a footprint, as a fraction of the foot's length


@dataclass(frozen=True)
class Footing:
    """One planted leg's stances and swings, world space."""

    limb: str
    footprints: list[np.ndarray]  #: (k, 3) closed outlines, one per stance
    frames: list[int]  #: the frame each footprint shows the foot at (its stance's flattest)
    paths: list[np.ndarray]  #: (m, 3) the ball's path through the air between stances


@dataclass(frozen=True)
class KneeCircle:
    """The circle where the active limb's knee can lie at the current frame, world space."""

    limb: str
    centre: np.ndarray  #: (3,)
    normal: np.ndarray  #: (3,) unit, hip to ankle
    radius: float
    points: np.ndarray  #: (65, 3) closed polyline
    pole: np.ndarray  #: (2, 3) from the centre toward the pole (or the knee), as long as the radius
    poled: bool  #: the line points at a pole object; else at the knee


def footing(obj: bpy.types.Object, depsgraph) -> list[Footing]:
    """Footprints and swings of the planted legs of ``obj`` in the take last planted for it; empty when none
    was planted in this session (or its legs are no longer the rig's)."""
    last = last_planted(obj)
    if last is None:
        return []
    plan, analysis = last
    if any(foot.foot >= len(obj.pose.bones) for foot in plan.feet):
        return []
    ground = Ground(plan.ground, depsgraph)
    return [_leg(obj, plan, analysis, n, ground) for n in range(len(plan.feet))]


def _sole(obj: bpy.types.Object, plan: PlantPlan, analysis: Analysis, n: int) -> np.ndarray:
    """(F, 3, 3) ankle, ball and tip of the planted foot ``n`` at every frame of the take, world space."""
    foot, planted = plan.feet[n], analysis.planted
    matrices, turns = planted.foot[:, n], planted.toe[:, n]
    if foot.toe is not None:  # the toe's head, held in the foot's own frame as at rest
        bones = obj.data.bones
        rest = np.array(bones[obj.pose.bones[foot.foot].name].matrix_local, dtype=np.float64)
        head = np.array(bones[obj.pose.bones[foot.toe].name].head_local, dtype=np.float64)
        toe_head = (matrices @ np.linalg.solve(rest, np.append(head, 1.0)))[:, :3]
    # As :func:`.legs.leg_sample` reads them: on the mesh where one follows the foot, else the foot bends at
    # the toe's head (a toe-less foot at its tip).
    if foot.sole is not None:
        ball = (
            toe_head + turns @ np.asarray(foot.sole.ball[:3])
            if foot.sole.on_toe
            else (matrices @ foot.sole.ball)[:, :3]
        )
        if foot.toe is None:
            tip = (matrices @ foot.sole.tip)[:, :3]
        else:
            tip = toe_head + turns @ np.asarray(foot.sole.tip[:3])
    elif foot.toe is None:
        ball = tip = matrices[:, :3, 3] + matrices[:, :3, 1] * foot.foot_length
    else:
        ball, tip = toe_head, toe_head + turns[:, :, 1] * foot.toe_length
    return np.stack([matrices[:, :3, 3], ball, tip], axis=1)


def _leg(obj, plan: PlantPlan, analysis: Analysis, n: int, ground: Ground) -> Footing:
    sole = _sole(obj, plan, analysis, n)
    contacts = analysis.planted.contacts
    standing = contacts.stance[:, n].any(axis=1)
    flat = np.maximum(contacts.clearance[:, n, HEEL], contacts.clearance[:, n, BALL])
    # The heel, as planting finds it on a foot standing flat: below the ankle, level with the ball; the foot stands
    # flattest where heel and ball are nearest their contact levels, there flat on the ground, so below the ankle
    # along the ground's normal. It is carried by the foot from there. A mesh's sole has its own heel.
    foot = analysis.planted.foot[:, n]
    footprints, frames = [], []
    on_toe = plan.feet[n].sole is not None and plan.feet[n].sole.on_toe
    if standing.any() and plan.feet[n].sole is not None:  # the mesh's heel
        local_heel = np.asarray(plan.feet[n].sole.heel)
    elif standing.any():
        flattest = int(np.argmin(np.where(standing, flat, np.inf)))
        ankle, ball, _ = sole[flattest]
        normal = ground.cast_down(ball[None])[1][0]
        local_heel = np.linalg.solve(foot[flattest], np.append(ankle - normal * ((ankle - ball) @ normal), 1.0))
    for first, last in intervals(standing):
        row = first + int(np.argmin(flat[first : last + 1]))
        _, ball, tip = sole[row]
        if on_toe:  # on the toe, in its space: from the ball back, as the toe turns
            heel = ball + analysis.planted.toe[row, n] @ (local_heel[:3] - np.asarray(plan.feet[n].sole.ball[:3]))
        else:
            heel = (foot[row] @ local_heel)[:3]
        length = max(np.linalg.norm((tip - heel)[:2]), np.linalg.norm((ball - heel)[:2]))
        if length == 0.0:
            continue
        outline = sole_outline(heel[:2], ball[:2], tip[:2], SPACING * length)
        footprints.append(_on_ground(outline, ground, ball[2]))
        frames.append(analysis.frames[row])
    paths = []
    for first, last in intervals(~standing):
        span = slice(max(first - 1, 0), min(last + 2, len(standing)))  # from the stance before to the next
        paths.append(sole[span, 1].copy())  # the ball
    return Footing(plan.feet[n].limb, footprints, frames, paths)


def _on_ground(outline: np.ndarray, ground: Ground, fallback: float) -> np.ndarray:
    """(k, 3) the 2D ``outline`` laid on the ground (:data:`LIFT` above it); where there is none, at ``fallback``."""
    points = np.column_stack([outline, np.zeros(len(outline))])
    heights, _, hit = ground.cast_down(points)
    points[:, 2] = np.where(hit, heights, fallback) + LIFT
    return points


def knee_circle(obj: bpy.types.Object) -> KneeCircle | None:
    """The circle of knees of the active limb of ``obj`` as posed now; None without an active limb, or where its
    chain is not valid or its ankle is on its hip."""
    limb = obj.limb_ik.active_limb
    if limb is None:
        return None
    try:
        chain = chain_of(obj, limb)
    except LimbIKError:
        return None
    bones, pose = obj.data.bones, obj.pose.bones
    upper, lower = pose[chain.indices[0]], pose[chain.indices[1]]
    end_rest = bones[chain.bones[2]].head_local if chain.size == 3 else bones[lower.name].tail_local
    end = pose[chain.indices[2]].head if chain.size == 3 else lower.tail
    world = np.array(obj.matrix_world, dtype=np.float64)

    def rest_length(bone, start, stop) -> float:  # at rest, times the bone's stretch (its Y scale, as posed)
        stretch = float(np.linalg.norm(np.array(bone.matrix, dtype=np.float64)[:3, 1]))
        return float(np.linalg.norm(np.subtract(stop, start))) * stretch

    thigh = rest_length(upper, bones[upper.name].head_local, bones[lower.name].head_local)
    shin = rest_length(lower, bones[lower.name].head_local, end_rest)
    hip = np.array(upper.head, dtype=np.float64)
    try:
        centre, normal, radius = position_circle(tuple(hip), tuple(np.array(end, dtype=np.float64)), thigh, shin)
    except SolverError:
        return None
    centre, normal = np.array(centre), np.array(normal)
    points = circle(centre, normal, radius)
    toward, poled = np.array(lower.head, dtype=np.float64), False  # armature space
    if chain.pole:
        pole_obj, pole_bone = chain.pole
        target = np.array(pole_obj.matrix_world, dtype=np.float64)
        if pole_bone:
            target = target @ np.array(pole_obj.pose.bones[pole_bone].matrix, dtype=np.float64)
        toward, poled = (np.linalg.inv(world) @ target[:, 3])[:3], True
    side = (toward - centre) - np.dot(toward - centre, normal) * normal
    side = side / np.linalg.norm(side) if np.linalg.norm(side) > 0.0 else np.zeros(3)
    line = np.array([centre, centre + side * max(radius, 0.25 * thigh)])

    def placed(p):
        return p @ world[:3, :3].T + world[:3, 3]

    axis = world[:3, :3] @ normal
    return KneeCircle(
        limb.name,
        placed(centre),
        axis / np.linalg.norm(axis),
        radius * float(np.abs(np.linalg.det(world[:3, :3])) ** (1.0 / 3.0)),
        placed(points),
        placed(line),
        poled,
    )
