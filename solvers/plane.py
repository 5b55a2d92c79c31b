# SPDX-License-Identifier: GPL-3.0-or-later
"""Limbs held in a plane, for side-on characters and 2D cut-out rigs: article 000's law of cosines for N limbs.

Each limb has a plane through its root, given by its normal. The goal is projected into that plane
and the chain solved there by its angle at the root, as :func:`.planar.two_bone_angles` finds it:
``atan2`` of the triangle's area and the law-of-cosines numerator. Reach, softness, stretch and bend
limits act on the goal's distance as in 3D (:func:`.batch.reach_distances`), so a goal out of reach
straightens the limb toward it and one in the dead zone, nearer than ``|upper - lower|``, folds it
with the longer bone toward it. The knee goes to the side of the line to the goal that the pole is
on, else the one its hinge bends to, else the one it is on now. Every joint placed lies in the
plane; a chain held (HOLD, out of reach) keeps its pose. A three-bone limb's end bone points along
its goal direction projected into the plane, and the first two bones reach for the joint above it,
as in :mod:`.three_bone`.
"""

import numpy as np

from . import rotation_modes, vectors
from .batch import ThreeBoneBatch, TwoBoneBatch, as_points, check_range, limb_inputs, reach_distances
from .constants import DEGENERATE, MIN_LENGTH
from .errors import SolverError


def project(points, origin, normal) -> tuple[np.ndarray, np.ndarray]:
    """``points`` (N, 3) projected into the planes through ``origin`` (N, 3) with the non-zero ``normal``
    (N, 3), and their signed distances from those planes."""
    unit = unit_normals(normal)
    offset = np.einsum("ni,ni->n", np.asarray(points, dtype=np.float64) - origin, unit)
    return points - offset[:, None] * unit, offset


def unit_normals(normal) -> np.ndarray:
    """The (N, 3) ``normal`` at length 1; raises :class:`.SolverError` for a zero or non-finite one. Divided by
    its largest component first, so that a normal whose squares underflow keeps its direction."""
    normal = np.asarray(normal, dtype=np.float64)
    big = np.abs(normal).max(axis=1, initial=0.0)
    bad = ~((big > 0.0) & (big < np.inf))
    if bad.any():
        raise SolverError(f"plane normals must be finite and not zero (row {int(np.argmax(bad))})")
    scaled = normal / big[:, None]
    return scaled / np.linalg.norm(scaled, axis=1, keepdims=True)


def in_plane(directions, unit, fallback) -> np.ndarray:
    """Unit directions (N, 3) along the part of ``directions`` in the planes with the unit normals ``unit``;
    where that part is shorter than :data:`.DEGENERATE` of the direction (it points along the normal), along
    ``fallback``'s part; where that is too, any direction in the plane."""
    first, ok = _part_in_plane(directions, unit)
    if ok.all():
        return first
    second, fallback_ok = _part_in_plane(fallback, unit)
    across = np.cross(unit, np.eye(3)[np.argmin(np.abs(unit), axis=1)])  # the axis least along the normal
    any_direction = across / np.linalg.norm(across, axis=1, keepdims=True)
    return np.where(ok[:, None], first, np.where(fallback_ok[:, None], second, any_direction))


def _part_in_plane(vectors, unit) -> tuple[np.ndarray, np.ndarray]:
    """The unit part of ``vectors`` (N, 3) in the planes with the unit normals ``unit``, and where it is not
    degenerate. Projected twice: once leaves up to 1e-16 of the whole vector out of the plane, which a short
    part would magnify."""
    vectors = np.asarray(vectors, dtype=np.float64)
    big = np.abs(vectors).max(axis=1, keepdims=True)
    scaled = vectors / np.where(big > 0.0, big, 1.0)
    part = scaled
    for _ in range(2):
        part = part - np.einsum("ni,ni->n", part, unit)[:, None] * unit
    length = np.linalg.norm(part, axis=1)
    ok = length > DEGENERATE * np.linalg.norm(scaled, axis=1)
    return part / np.where(ok, length, 1.0)[:, None], ok


def turned_into_plane(quaternions, normal, fallback) -> np.ndarray:
    """Unit quaternions (N, 4) turned by the least rotation that lays their Y axis in the planes with
    ``normal``, along ``fallback`` where it points along the normal (see :func:`in_plane`): a bone that must
    keep its tail in the plane, with its twist about its axis kept."""
    quaternions = np.asarray(quaternions, dtype=np.float64)
    y_axis = rotation_modes.quat_to_matrix(quaternions)[:, :, 1]
    turn = vectors.rotation_between(
        vectors.split(y_axis), vectors.split(in_plane(y_axis, unit_normals(normal), fallback))
    )
    return vectors.join(vectors.quat_mul(turn, vectors.split(quaternions)))


def root_angles(upper, lower, distance) -> np.ndarray:
    """(N,) the angle at the root between the upper bone and the line to the end, the end ``distance`` from
    the root (from ``|upper - lower|`` to ``upper + lower``): :func:`.planar.two_bone_angles`'s, for N chains.
    The triangle's area is taken factor by factor, so that the product of two small factors cannot
    underflow; equal bones folded onto the root stand across the line, as the 3D solver folds them."""
    upper, lower, distance = (np.asarray(a, dtype=np.float64) for a in (upper, lower, distance))
    four_area = (
        np.sqrt(upper + lower + distance)
        * np.sqrt(np.maximum(distance + (lower - upper), 0.0))
        * np.sqrt(np.maximum(distance + (upper - lower), 0.0))
        * np.sqrt(np.maximum(upper + lower - distance, 0.0))
    )
    angle = np.arctan2(four_area, distance * distance + (upper - lower) * (upper + lower))
    return np.where(distance > 0.0, angle, 0.5 * np.pi)


def solve_two_bone_plane(root, knee, end, target, normal, pole=None, pole_mask=None, hinge=None, **options):
    """New knees and ends of N two-bone chains held in the planes through their roots with ``normal``
    ((N, 3), or one 3-vector for all): the target projected into the plane, and reached there if it can
    be. ``pole``, ``pole_mask``, ``hinge`` (zero rows: none) and the reach settings as for
    :func:`.batch.solve_two_bone_batch`; returns its :class:`.batch.TwoBoneBatch`."""
    named = {"root": root, "knee": knee, "end": end, "target": target}
    root, knee, end, target = (_checked(name, value) for name, value in named.items())
    n = len(root)
    if any(len(p) != n for p in (knee, end, target)):
        raise SolverError("root, knee, end and target must have the same number of rows")
    unit = unit_normals(_checked("normal", normal, n))
    limbs = limb_inputs(n, pole, pole_mask, hinge, None, **options)
    upper, lower = np.linalg.norm(knee - root, axis=1), np.linalg.norm(end - knee, axis=1)
    short = (upper < MIN_LENGTH) | (lower < MIN_LENGTH)
    if short.any():
        i = int(np.argmax(short))
        raise SolverError(f"bones must have non-zero length (row {i}: upper {upper[i]:g}, lower {lower[i]:g})")

    to_goal = target - root
    aim = in_plane(to_goal, unit, end - root)  # a goal on the normal through the root keeps the current aim
    distance = np.abs(np.einsum("ni,ni->n", to_goal, aim))  # the projected goal's, without squares to underflow
    length, stretch, reached, held = reach_distances(distance, upper, lower, limbs.settings)
    reach_upper = upper * stretch
    angle = root_angles(reach_upper, lower * stretch, length)
    across = np.cross(unit, aim)  # in the plane, a quarter turn from the aim about the normal
    side = _sides(unit, across, root, knee, limbs, upper + lower)
    new_knee = root + reach_upper[:, None] * (np.cos(angle)[:, None] * aim - (side * np.sin(angle))[:, None] * across)
    new_end = root + length[:, None] * aim
    if held.any():
        new_knee, new_end = np.where(held[:, None], knee, new_knee), np.where(held[:, None], end, new_end)
        stretch = np.where(held, 1.0, stretch)
    # The knee's swivel, from the line to the end toward the knee: a quarter turn from the aim, to its side.
    swivel = -side[:, None] * across
    return TwoBoneBatch(new_knee, new_end, reached, np.broadcast_to(stretch, (n,)), held, swivel)


def solve_three_bone_plane(root, knee, ankle, tip, target, end_direction, normal, **settings):
    """New knees, ankles and tips of N three-bone chains held in the planes through their roots with
    ``normal``: the end bone along ``end_direction`` projected into the plane (along the end bone's own
    projection where the direction is the normal's), its tip on the target's projection if it can be.
    Other settings as :func:`solve_two_bone_plane`; returns a :class:`.batch.ThreeBoneBatch`."""
    ankle, tip, root = _checked("ankle", ankle), _checked("tip", tip), _checked("root", root)
    n = len(ankle)
    if len(tip) != n or len(root) != n:
        raise SolverError("root, knee, ankle and tip must have the same number of rows")
    unit = unit_normals(_checked("normal", normal, n))
    end_direction, target = _checked("end direction", end_direction, n), _checked("target", target, n)
    if not (np.abs(end_direction).max(axis=1) > 0.0).all():
        raise SolverError("end direction must not be the zero vector")
    end_length = np.linalg.norm(tip - ankle, axis=1)
    if not (end_length >= MIN_LENGTH).all():
        raise SolverError(f"end bone must have non-zero length (row {int(np.argmin(end_length >= MIN_LENGTH))})")
    direction = in_plane(end_direction, unit, tip - ankle)
    goal, _ = project(target, root, unit)
    two = solve_two_bone_plane(root, knee, ankle, goal - end_length[:, None] * direction, unit, **settings)
    new_tip = np.where(two.held[:, None], tip, two.end + end_length[:, None] * direction)
    return ThreeBoneBatch(two.knee, two.end, new_tip, two.reached, two.stretch, two.held, two.side)


def _checked(name: str, value, rows: int | None = None) -> np.ndarray:
    array = as_points(name, value, rows)
    check_range(name, vectors.components(array), 0)
    return array


def _sides(unit, across, root, knee, limbs, size) -> np.ndarray:
    """(N,) +1 where the knee bends about the normal ((knee - root) x (end - knee) along it), -1 where against.

    In order of precedence: toward the pole (where it is off the line to the goal), as the hinge bends (where
    it is not in the plane), to the side of that line the knee is on now, else +1."""
    side = np.ones(len(unit))
    # A knee offset along `across` bends the chain against the normal: (across x aim) is -normal.
    now = np.einsum("ni,ni->n", knee - root, across)
    side = np.where(np.abs(now) > DEGENERATE * size, -np.sign(now), side)
    if limbs.hinge is not None:
        along = np.einsum("ni,ni->n", limbs.hinge, unit)
        side = np.where(np.abs(along) > DEGENERATE * np.linalg.norm(limbs.hinge, axis=1), np.sign(along), side)
    if limbs.pole is not None:
        toward = np.einsum("ni,ni->n", limbs.pole - root, across)
        chosen = limbs.use_pole & (np.abs(toward) > DEGENERATE * size)
        side = np.where(chosen, -np.sign(toward), side)
    return side
