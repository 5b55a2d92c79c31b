# SPDX-License-Identifier: GPL-3.0-or-later
"""Two-bone IK in a plane by the law of cosines (article 000): joint angles instead of positions."""

import math
from typing import NamedTuple

from .constants import COORDINATE_LIMIT, MIN_LENGTH
from .errors import SolverError


class PlanarAngles(NamedTuple):
    shoulder: float  #: angle of the upper bone from the +x axis (radians)
    elbow: float  #: angle of the lower bone relative to the upper one, counter-clockwise (0 = straight)
    reachable: bool  #: |upper - lower| <= distance <= upper + lower


def two_bone_angles(upper: float, lower: float, x: float, y: float, bend: int = 1) -> PlanarAngles:
    """Joint angles that put the end of a two-bone chain rooted at the origin on ``(x, y)``.

    ``bend = 1`` puts the elbow on the counter-clockwise side of the line to the target,
    ``-1`` on the clockwise side. Out of reach, the chain points straight at the target (too
    far) or folds with the longer bone toward it (too close), and ``reachable`` is False.
    The interior angles come from ``atan2`` of the triangle's area and the law-of-cosines
    numerator, which keeps full precision when the triangle is flat.
    """
    if not (abs(upper) + abs(lower) + abs(x) + abs(y) < COORDINATE_LIMIT):
        raise SolverError("lengths and target must be finite and within range")
    if upper < MIN_LENGTH or lower < MIN_LENGTH:
        raise SolverError(f"bones must have non-zero length (upper {upper:g}, lower {lower:g})")
    if bend not in (1, -1):
        raise SolverError(f"bend must be 1 or -1, not {bend}")
    distance = math.hypot(x, y)
    shortest, longest = abs(upper - lower), upper + lower
    reachable = shortest <= distance <= longest
    d = min(max(distance, shortest), longest)
    aim = math.atan2(y, x)
    # 16 * area^2 of the triangle (upper, lower, d), Heron's formula in its stable product form.
    # The bracketed differences are exact for nearly equal bones, where d + lower - upper left to
    # right would lose all the digits of a target near the shoulder.
    area16 = (upper + lower + d) * (d + (lower - upper)) * (d + (upper - lower)) * (upper + lower - d)
    four_area = math.sqrt(area16) if area16 > 0.0 else 0.0
    # Interior angle at the shoulder lies between the upper bone and d: the side opposite it is
    # the lower bone, so cos = (d^2 + upper^2 - lower^2) / (2 d upper).
    at_shoulder = math.atan2(four_area, d * d + (upper - lower) * (upper + lower))
    at_elbow = math.atan2(four_area, upper * upper + lower * lower - d * d)
    return PlanarAngles(aim + bend * at_shoulder, -bend * (math.pi - at_elbow), reachable)
