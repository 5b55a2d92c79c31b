# SPDX-License-Identifier: GPL-3.0-or-later
"""Closed-form two-bone IK in 3D, scalar float64 (the "position system": joint positions out).

The knee lies on the circle where the sphere around the root (radius = upper length) meets the
sphere around the effector goal (radius = lower length). Which point of that circle, the
*swivel*, is chosen in this order: the pole's side of the root-goal line; else, for a chain
whose end direction is given, the plane holding that direction (the three-bone end-plane swivel);
else the point closest to the current knee, so the knee moves least. A hinge axis, when given,
then vetoes any choice that would bend the knee backwards: the knee goes to the forward side
of its hinge plane instead.

All points are in one space in which the chain is rigid (the armature space of a rig whose
limb parents are not scaled non-uniformly, or the limb's parent space). The same maths over
many limbs at once lives in :mod:`.batch`.
"""

from math import exp, pi, sin, sqrt
from typing import NamedTuple

from .constants import COORDINATE_LIMIT, DEGENERATE, MIN_LENGTH
from .errors import SolverError
from .options import DEFAULT_OPTIONS, Reach, ReachOptions
from .rotation import any_perpendicular

Vec3 = tuple[float, float, float]


class TwoBoneSolution(NamedTuple):
    knee: Vec3
    end: Vec3
    reached: bool  #: the end is on the target
    stretch: float  #: factor both bones were scaled by (1 = not stretched)
    held: bool = False  #: out of reach in HOLD mode: the input pose is returned unchanged
    #: unit direction from the knee circle's centre to the knee (the swivel), zero when held: the side the knee
    #: bends to, defined even where the limb is straight and the joints alone no longer show it
    side: Vec3 = (0.0, 0.0, 0.0)


def bend_range(upper: float, lower: float, options: ReachOptions) -> tuple[float, float]:
    """Shortest and longest root-to-end distance the bend limits allow."""
    total = upper + lower
    if options.min_bend == 0.0:
        longest = total
    else:
        s = sin(0.5 * options.min_bend)
        longest = sqrt(max(total * total - 4.0 * upper * lower * s * s, 0.0))
    if options.max_bend == pi:
        shortest = abs(upper - lower)
    else:  # never below the fold, as rounding would put it for a limit a hair short of pi
        s = sin(0.5 * options.max_bend)
        shortest = max(sqrt(max(total * total - 4.0 * upper * lower * s * s, 0.0)), abs(upper - lower))
    return shortest, longest


def reach_distance(
    distance: float, upper: float, lower: float, options: ReachOptions
) -> tuple[float, float, bool] | None:
    """Apply stretch, soft IK and the reach range to a root-to-target distance.

    Returns where the effector goes (its distance from the root along the target direction),
    the stretch factor and whether that is the target itself; ``None`` when the mode is HOLD
    and the target is out of range.
    """
    shortest, longest = bend_range(upper, lower, options)
    stretch = 1.0
    mode = options.mode
    if mode is Reach.STRETCH:
        # Never below the shortest reach: stretching from there would carry the shortest reach past
        # targets that the unstretched limb reaches.
        start = max(options.stretch_start * longest, shortest)
        if distance > start:
            stretch = distance / start if start > 0.0 else options.max_stretch  # start is 0 for a limb bent shut
            if stretch > options.max_stretch:
                stretch = options.max_stretch
            shortest *= stretch
            longest *= stretch
            if stretch < options.max_stretch:  # stretched to the target: rounding must not leave it a hair off
                shortest = min(shortest, distance)
                longest = max(longest, distance)
    # Clamped in this order, as the batch solver does: where rounding leaves shortest a hair above
    # longest (a limb allowed only to fold shut), both must pick the same end.
    result = min(max(distance, shortest), longest)
    reached = shortest <= distance <= longest
    if not reached and mode is Reach.HOLD:
        return None
    softness = options.softness
    if softness > 0.0:
        softness = min(softness, longest - shortest)
        if softness > 0.0 and distance > longest - softness:
            # Exponential approach: value and slope match at the start of the soft zone,
            # and the full reach is only met at infinity.
            result = longest - softness * exp((longest - softness - distance) / softness)
            reached = False
    return result, stretch, reached


def solve_two_bone(
    root: Vec3,
    knee: Vec3,
    end: Vec3,
    target: Vec3,
    pole: Vec3 | None = None,
    hinge: Vec3 | None = None,
    plane: Vec3 | None = None,
    options: ReachOptions = DEFAULT_OPTIONS,
) -> TwoBoneSolution:
    """New knee and end positions that put the end on ``target`` (or as near as the options allow).

    ``root``, ``knee``, ``end`` are the current joint positions; the bone lengths are their
    distances. ``pole`` is a point the knee should point toward. ``hinge`` is the knee's hinge
    axis: the solution bends so that ``(knee - root) x (end - knee)`` points along it, never
    against it. ``plane`` is a direction the knee plane must contain (used by the three-bone
    solver). Raises :class:`SolverError` for non-finite or huge coordinates and zero-length bones.
    """
    ax, ay, az = root
    bx, by, bz = knee
    cx, cy, cz = end
    tx, ty, tz = target
    if pole is not None or hinge is not None or plane is not None:
        for name, vector in (("pole", pole), ("hinge", hinge), ("plane", plane)):
            if vector is not None and not abs(vector[0]) + abs(vector[1]) + abs(vector[2]) < COORDINATE_LIMIT:
                raise SolverError(f"{name} must be finite and within ±{COORDINATE_LIMIT:g}, got {vector}")
    # Every input coordinate enters one of these lengths, so a NaN or infinity shows up in them.
    upper = sqrt((bx - ax) * (bx - ax) + (by - ay) * (by - ay) + (bz - az) * (bz - az))
    lower = sqrt((cx - bx) * (cx - bx) + (cy - by) * (cy - by) + (cz - bz) * (cz - bz))
    dx, dy, dz = tx - ax, ty - ay, tz - az
    distance = sqrt(dx * dx + dy * dy + dz * dz)
    if not (upper < COORDINATE_LIMIT and lower < COORDINATE_LIMIT and distance < COORDINATE_LIMIT):
        raise SolverError(f"joint and target coordinates must be finite and within ±{COORDINATE_LIMIT:g}")
    if upper < MIN_LENGTH or lower < MIN_LENGTH:
        raise SolverError(f"bones must have non-zero length (upper {upper:g}, lower {lower:g})")

    # Unit direction from the root to the target; a target on the root keeps the current aim.
    if dx == dy == dz == 0.0:
        dx, dy, dz = cx - ax, cy - ay, cz - az
    if dx == dy == dz == 0.0:  # the end is on the root too: aiming across the upper bone keeps the knee
        dx, dy, dz = any_perpendicular(_unit(bx - ax, by - ay, bz - az))
    else:
        dx, dy, dz = _unit(dx, dy, dz)

    reach = reach_distance(distance, upper, lower, options)
    if reach is None:
        return TwoBoneSolution((bx, by, bz), (cx, cy, cz), False, 1.0, True)
    length, stretch, reached = reach
    l1, l2 = upper * stretch, lower * stretch

    # Circle of possible knees: centre at `along` from the root on the axis, radius `radius`.
    # Heron's form keeps the radius accurate near full extension, where l1 + l2 - length is
    # a small difference of nearly equal numbers; the bracketed differences are exact for
    # nearly equal bones, where length + l2 - l1 left to right would lose all the digits of a
    # target near the root. Square roots are taken factor by factor: for a target 1e-160 from
    # the root the product of the two small factors would underflow to 0.
    along, radius = _circle(length, l1, l2)

    if pole is None and hinge is None and plane is None:  # the common case, inlined: least motion
        ox, oy, oz = bx - ax, by - ay, bz - az
        k = ox * dx + oy * dy + oz * dz
        ux, uy, uz = ox - k * dx, oy - k * dy, oz - k * dz
        n = sqrt(ux * ux + uy * uy + uz * uz)
        if n > DEGENERATE * (upper + lower):
            ux, uy, uz = _reproject(ux / n, uy / n, uz / n, (dx, dy, dz))
        else:
            ux, uy, uz = any_perpendicular((dx, dy, dz))
    else:
        ux, uy, uz = _swivel((dx, dy, dz), root, knee, pole, hinge, plane, DEGENERATE * (upper + lower))
    return TwoBoneSolution(
        (ax + along * dx + radius * ux, ay + along * dy + radius * uy, az + along * dz + radius * uz),
        (ax + length * dx, ay + length * dy, az + length * dz),
        reached,
        stretch,
        False,
        (ux, uy, uz),
    )


def _circle(length: float, l1: float, l2: float) -> tuple[float, float]:
    """Where along the root-to-end axis the circle of knees is centred, and its radius, for bones ``l1`` and
    ``l2`` whose ends are ``length`` apart; radius 0 where they cannot meet (the end out of reach)."""
    if length > 0.0:
        along = (length * length + (l1 - l2) * (l1 + l2)) / (2.0 * length)
        outer, near, far = (l1 + l2 + length) * (l1 + l2 - length), length + (l2 - l1), length + (l1 - l2)
        radius = sqrt(outer) * sqrt(near) * sqrt(far) / (2.0 * length) if min(outer, near, far) > 0.0 else 0.0
        return along, radius
    return 0.0, l1  # equal bones folded flat onto the root


def knee_circle(root: Vec3, end: Vec3, upper: float, lower: float) -> tuple[Vec3, Vec3, float]:
    """The position system's circle: where the knee of bones ``upper`` and ``lower`` long can lie with its
    root at ``root`` and its end at ``end`` (the sphere around the root meeting the sphere around the end).
    Returns its centre, unit normal (root to end) and radius; the radius is 0 where the end is out of reach.
    Raises :class:`SolverError` for an end on the root (no axis) or coordinates that are not finite."""
    d = (end[0] - root[0], end[1] - root[1], end[2] - root[2])
    length = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    if not length < COORDINATE_LIMIT or not abs(upper) + abs(lower) < COORDINATE_LIMIT:
        raise SolverError(f"joint coordinates and bone lengths must be finite and within ±{COORDINATE_LIMIT:g}")
    if length == 0.0:
        raise SolverError("the end is on the root: the knee circle has no axis")
    axis = _unit(*d)
    along, radius = _circle(length, upper, lower)
    return (root[0] + along * axis[0], root[1] + along * axis[1], root[2] + along * axis[2]), axis, radius


def _unit(x: float, y: float, z: float) -> Vec3:
    """The non-zero ``(x, y, z)`` at length 1. Divided by its largest component first, so that a
    vector as short as 1e-300, whose squares underflow, keeps its direction."""
    big = max(abs(x), abs(y), abs(z))
    x, y, z = x / big, y / big, z / big
    n = sqrt(x * x + y * y + z * z)
    return (x / n, y / n, z / n)


# Float form of batch._perpendicular_unit, for the speed _swivel's comment measures.
def _perpendicular_unit(vx: float, vy: float, vz: float, d: Vec3, eps: float) -> Vec3 | None:
    """The unit part of ``v`` perpendicular to the unit ``d``, or None if shorter than ``eps``."""
    dx, dy, dz = d
    k = vx * dx + vy * dy + vz * dz
    px, py, pz = vx - k * dx, vy - k * dy, vz - k * dz
    n = sqrt(px * px + py * py + pz * pz)
    if n <= eps:
        return None
    return _reproject(px / n, py / n, pz / n, d)


def _reproject(ux: float, uy: float, uz: float, d: Vec3) -> Vec3:
    """The unit ``u`` made perpendicular to the unit ``d`` once more. One projection of a ``v``
    nearly along ``d`` leaves ``u . d`` up to 1e-16 |v| / |p| (1e-7 at the degenerate threshold),
    which would show in the bone lengths."""
    dx, dy, dz = d
    k = ux * dx + uy * dy + uz * dz
    ux, uy, uz = ux - k * dx, uy - k * dy, uz - k * dz
    n = sqrt(ux * ux + uy * uy + uz * uz)
    return (ux / n, uy / n, uz / n)


# Float form of batch._swivel: with a hinge 3.2 µs a solve, 52.9 µs calling that on one-row arrays (pole: 2.4, 41.2).
def _swivel(d: Vec3, root: Vec3, knee: Vec3, pole, hinge, plane, eps: float) -> Vec3:
    """Unit direction, perpendicular to the axis ``d``, from the knee circle's centre to the knee."""
    ax, ay, az = root
    if pole is not None:
        chosen = _perpendicular_unit(pole[0] - ax, pole[1] - ay, pole[2] - az, d, eps)
        if chosen is not None:  # the pole's side is the allowed side by definition
            return chosen
    forward = None
    if hinge is not None and not hinge[0] == hinge[1] == hinge[2] == 0.0:
        # The knee offset u bends the chain about (u x d) * const, so the forward side of the
        # hinge axis h is u = d x h.
        hx, hy, hz = _unit(*hinge)
        dx, dy, dz = d
        forward = _perpendicular_unit(dy * hz - dz * hy, dz * hx - dx * hz, dx * hy - dy * hx, d, DEGENERATE)
    current = _perpendicular_unit(knee[0] - ax, knee[1] - ay, knee[2] - az, d, eps)
    chosen = None
    if plane is not None and not plane[0] == plane[1] == plane[2] == 0.0:
        chosen = _perpendicular_unit(*_unit(*plane), d, DEGENERATE)
        if chosen is not None:
            side = forward if forward is not None else current
            if side is not None and chosen[0] * side[0] + chosen[1] * side[1] + chosen[2] * side[2] < 0.0:
                chosen = (-chosen[0], -chosen[1], -chosen[2])
    if chosen is None:
        chosen = current
    # A knee bent exactly across its hinge sits on the boundary; rounding must not flip it back
    # and forth from one solve to the next, so only a knee clearly behind the hinge plane is vetoed.
    if forward is not None and (
        chosen is None or chosen[0] * forward[0] + chosen[1] * forward[1] + chosen[2] * forward[2] < -DEGENERATE
    ):
        chosen = forward
    return chosen if chosen is not None else any_perpendicular(d)
