# SPDX-License-Identifier: GPL-3.0-or-later
"""Limbs held in a plane (:mod:`.plane`) one at a time, in Python floats: for :mod:`.scalar_chains`.

The same steps as the batch forms, formula for formula: the goal projected into the plane through the
root, the chain solved there by its angle at the root, the knee on the pole's side of the line to the
goal, else the hinge's, else its own; a three-bone end bone along its goal direction laid into the plane.
"""

import math

from .constants import COORDINATE_LIMIT, DEGENERATE, MIN_LENGTH
from .errors import SolverError
from .options import ReachOptions
from .rotation import quat_multiply, rotation_between
from .two_bone import reach_distance
from .vectors import cross, dot, norm, sub


def unit_normal(normal) -> tuple:
    """The non-zero ``normal`` at length 1, divided by its largest component first (see
    :func:`.plane.unit_normals`)."""
    big = max(abs(normal[0]), abs(normal[1]), abs(normal[2]))
    if not 0.0 < big < math.inf:
        raise SolverError("plane normals must be finite and not zero")
    x, y, z = normal[0] / big, normal[1] / big, normal[2] / big
    n = math.sqrt(x * x + y * y + z * z)
    return (x / n, y / n, z / n)


def project(point, origin, unit) -> tuple[tuple, float]:
    """``point`` projected into the plane through ``origin`` with the unit normal ``unit``, and its signed
    distance from that plane."""
    offset = (point[0] - origin[0]) * unit[0] + (point[1] - origin[1]) * unit[1] + (point[2] - origin[2]) * unit[2]
    return (point[0] - offset * unit[0], point[1] - offset * unit[1], point[2] - offset * unit[2]), offset


def in_plane(direction, unit, fallback) -> tuple:
    """The unit direction along ``direction``'s part in the plane, else ``fallback``'s, else any (see
    :func:`.plane.in_plane`)."""
    part = _part_in_plane(direction, unit)
    if part is None:
        part = _part_in_plane(fallback, unit)
    if part is None:  # across the normal, from the axis least along it
        least = min(range(3), key=lambda i: abs(unit[i]))
        axis = tuple(1.0 if i == least else 0.0 for i in range(3))
        x, y, z = cross(unit, axis)
        n = math.sqrt(x * x + y * y + z * z)
        part = (x / n, y / n, z / n)
    return part


def turned_into_plane(q: tuple, normal, fallback) -> tuple:
    """The unit quaternion ``q`` turned by the least rotation that lays its Y axis in the plane with
    ``normal`` (see :func:`.plane.turned_into_plane`)."""
    w, x, y, z = q
    y_axis = (2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x))
    return quat_multiply(rotation_between(y_axis, in_plane(y_axis, unit_normal(normal), fallback)), q)


def solve_two_bone_plane(root, knee, end, target, normal, pole, hinge, options: ReachOptions):
    """New knee and end of a two-bone chain held in the plane through its root with ``normal``, its reach,
    whether it is held and the knee's swivel (see :func:`.plane.solve_two_bone_plane`); ``pole`` and ``hinge``
    may be None."""
    unit = unit_normal(normal)
    upper, lower = norm(sub(knee, root)), norm(sub(end, knee))
    if not (upper < COORDINATE_LIMIT and lower < COORDINATE_LIMIT):
        raise SolverError(f"joint coordinates must be finite and within ±{COORDINATE_LIMIT:g}")
    if upper < MIN_LENGTH or lower < MIN_LENGTH:
        raise SolverError(f"bones must have non-zero length (upper {upper:g}, lower {lower:g})")
    to_goal = sub(target, root)
    aim = in_plane(to_goal, unit, sub(end, root))  # a goal on the normal through the root keeps the aim
    distance = abs(dot(to_goal, aim))
    reach = reach_distance(distance, upper, lower, options)
    if reach is None:  # held: out of reach in HOLD mode
        return tuple(knee), tuple(end), False, True, (0.0, 0.0, 0.0)
    length, stretch, reached = reach
    reach_upper = upper * stretch
    angle = _root_angle(reach_upper, lower * stretch, length)
    across = cross(unit, aim)
    side = _side(unit, across, root, knee, pole, hinge, upper + lower)
    c, s = math.cos(angle), side * math.sin(angle)
    new_knee = tuple(root[i] + reach_upper * (c * aim[i] - s * across[i]) for i in range(3))
    swivel = (-side * across[0], -side * across[1], -side * across[2])
    return new_knee, tuple(root[i] + length * aim[i] for i in range(3)), reached, False, swivel


def solve_three_bone_plane(root, knee, ankle, tip, target, end_direction, normal, pole, hinge, options):
    """New knee, ankle and tip of a three-bone chain held in its plane, its reach and the knee's swivel (see
    :func:`.plane.solve_three_bone_plane`)."""
    unit = unit_normal(normal)
    if end_direction[0] == end_direction[1] == end_direction[2] == 0.0:
        raise SolverError("end direction must not be the zero vector")
    end_length = norm(sub(tip, ankle))
    if not end_length >= MIN_LENGTH:
        raise SolverError(f"end bone must have non-zero length, not {end_length:g}")
    direction = in_plane(end_direction, unit, sub(tip, ankle))
    goal, _ = project(target, root, unit)
    wrist = tuple(goal[i] - end_length * direction[i] for i in range(3))
    new_knee, new_ankle, reached, held, swivel = solve_two_bone_plane(
        root, knee, ankle, wrist, unit, pole, hinge, options
    )
    new_tip = tuple(tip) if held else tuple(new_ankle[i] + end_length * direction[i] for i in range(3))
    return new_knee, new_ankle, new_tip, reached, swivel


def _root_angle(upper: float, lower: float, distance: float) -> float:
    """The angle at the root between the upper bone and the line to the end (see :func:`.plane.root_angles`)."""
    if not distance > 0.0:
        return 0.5 * math.pi
    four_area = (
        math.sqrt(upper + lower + distance)
        * math.sqrt(max(distance + (lower - upper), 0.0))
        * math.sqrt(max(distance + (upper - lower), 0.0))
        * math.sqrt(max(upper + lower - distance, 0.0))
    )
    return math.atan2(four_area, distance * distance + (upper - lower) * (upper + lower))


def _side(unit, across, root, knee, pole, hinge, size: float) -> float:
    """+1 where the knee bends about the normal, -1 where against: toward the pole, as the hinge bends, to the
    side the knee is on now, else +1 (see :func:`.plane._sides`)."""
    side = 1.0
    now = dot(sub(knee, root), across)
    if abs(now) > DEGENERATE * size:
        side = -math.copysign(1.0, now)
    if hinge is not None:
        along = dot(hinge, unit)
        if abs(along) > DEGENERATE * norm(hinge):
            side = math.copysign(1.0, along)
    if pole is not None:
        toward = dot(sub(pole, root), across)
        if abs(toward) > DEGENERATE * size:
            side = -math.copysign(1.0, toward)
    return side


def _part_in_plane(v, unit) -> tuple | None:
    """The unit part of ``v`` in the plane, projected twice, or None where it is degenerate (see
    :func:`.plane._part_in_plane`)."""
    big = max(abs(v[0]), abs(v[1]), abs(v[2]))
    scaled = (v[0] / big, v[1] / big, v[2] / big) if big > 0.0 else tuple(v)
    part = scaled
    for _ in range(2):
        k = dot(part, unit)
        part = (part[0] - k * unit[0], part[1] - k * unit[1], part[2] - k * unit[2])
    length = norm(part)
    if not length > DEGENERATE * norm(scaled):
        return None
    return (part[0] / length, part[1] / length, part[2] / length)
