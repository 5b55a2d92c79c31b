# SPDX-License-Identifier: GPL-3.0-or-later
"""Closed-form three-bone IK (article 000): reduce to two bones by the end bone's given direction.

The end bone must point along ``end_direction`` with its tip on the target, so the joint before
it (the ankle, hock or wrist) must reach ``target - end_length * end_direction``; the first two
bones solve for that point. The end-plane swivel (the article's *natural* way; ``end_plane=True``
here, in :mod:`.batch` and :class:`.chains.ChainBatch`, and the limb's *End Plane* setting) also
swivels the chain so that all joints lie in one plane with the end bone;
otherwise the end bone copies the direction whatever plane the first two bones are in.
"""

import math
from typing import NamedTuple

from .constants import COORDINATE_LIMIT, MIN_LENGTH
from .errors import SolverError
from .options import DEFAULT_OPTIONS, ReachOptions
from .two_bone import Vec3, _unit, solve_two_bone
from .vectors import cross, dot, sub


class ThreeBoneSolution(NamedTuple):
    knee: Vec3
    ankle: Vec3
    tip: Vec3
    reached: bool  #: the tip is on the target
    stretch: float  #: factor the first two bones were scaled by
    roll: float  #: swivel of the knee about the root-ankle axis, from where it was (radians)
    end_angle: float  #: angle from the lower bone to the end bone (theta 2), signed about the knee's bend axis
    held: bool = False  #: out of reach in HOLD mode: the input pose is returned unchanged
    side: Vec3 = (0.0, 0.0, 0.0)  #: the knee's swivel, as :attr:`.two_bone.TwoBoneSolution.side`


def solve_three_bone(
    root: Vec3,
    knee: Vec3,
    ankle: Vec3,
    tip: Vec3,
    target: Vec3,
    end_direction: Vec3,
    pole: Vec3 | None = None,
    hinge: Vec3 | None = None,
    end_plane: bool = True,
    options: ReachOptions = DEFAULT_OPTIONS,
) -> ThreeBoneSolution:
    """New knee, ankle and tip positions putting the tip on ``target`` with the end bone along ``end_direction``.

    ``pole`` and ``hinge`` act as in :func:`.two_bone.solve_two_bone`; a pole takes precedence
    over the end plane. With HOLD and an unreachable target, the pose is kept.
    """
    ex, ey, ez = end_direction
    if not abs(ex) + abs(ey) + abs(ez) < COORDINATE_LIMIT:
        raise SolverError(f"end direction must be finite, got {end_direction}")
    if ex == ey == ez == 0.0:
        raise SolverError("end direction must not be the zero vector")
    ex, ey, ez = _unit(ex, ey, ez)
    jx, jy, jz = ankle
    px, py, pz = tip
    end_length = math.sqrt((px - jx) * (px - jx) + (py - jy) * (py - jy) + (pz - jz) * (pz - jz))
    if not MIN_LENGTH <= end_length < COORDINATE_LIMIT:
        raise SolverError(f"end bone must have a finite, non-zero length, not {end_length:g}")
    tx, ty, tz = target
    wrist_goal = (tx - end_length * ex, ty - end_length * ey, tz - end_length * ez)
    plane = (ex, ey, ez) if end_plane else None
    two = solve_two_bone(root, knee, ankle, wrist_goal, pole=pole, hinge=hinge, plane=plane, options=options)
    if two.held:
        new_tip = (px, py, pz)
    else:
        new_tip = (two.end[0] + end_length * ex, two.end[1] + end_length * ey, two.end[2] + end_length * ez)
    return ThreeBoneSolution(
        two.knee,
        two.end,
        new_tip,
        two.reached,
        two.stretch,
        _roll(root, knee, two.knee, two.end),
        _end_angle(root, two.knee, two.end, new_tip),
        two.held,
        two.side,
    )


def _offset_from_axis(point, root, axis):
    """Part of ``point - root`` perpendicular to the (not necessarily unit) ``axis``."""
    v = sub(point, root)
    k = dot(v, axis) / dot(axis, axis)
    return (v[0] - k * axis[0], v[1] - k * axis[1], v[2] - k * axis[2])


def _roll(root, old_knee, new_knee, new_ankle) -> float:
    """Signed angle about the new root-ankle axis from the old knee's side to the new knee's side
    (the old axis plays no part: it may be undefined, with the old ankle on the root)."""
    new_axis = sub(new_ankle, root)
    if dot(new_axis, new_axis) == 0.0:
        return 0.0
    before = _offset_from_axis(old_knee, root, new_axis)
    after = _offset_from_axis(new_knee, root, new_axis)
    sin_part = dot(cross(before, after), new_axis) / math.sqrt(dot(new_axis, new_axis))
    return math.atan2(sin_part, dot(before, after))


def _end_angle(root, knee, ankle, tip) -> float:
    """Angle from the lower bone to the end bone, negative where it turns against the knee's bend axis.

    The full angle, not its part in the knee's plane: the end bone leaves that plane in the simple
    way, and a straight leg's bend axis is only rounding noise.
    """
    lower, end = sub(ankle, knee), sub(tip, ankle)
    turn = cross(lower, end)
    angle = math.atan2(math.sqrt(dot(turn, turn)), dot(lower, end))
    return -angle if dot(turn, cross(sub(knee, root), lower)) < 0.0 else angle
