# SPDX-License-Identifier: GPL-3.0-or-later
"""The two- and three-bone solvers of :mod:`.two_bone` and :mod:`.three_bone`, vectorised over N limbs.

Arrays in, arrays out: points are (N, 3); per-limb settings are scalars or (N,) arrays.
Directions that may be absent (hinge axis, knee plane) are zero vectors where absent; poles
come with a boolean mask. The results agree with the scalar solvers to rounding (1e-9 is
tested), including every fallback: the arithmetic that decides a branch is the scalar
solvers' own, operation for operation. Rows are independent, so a large N is processed in
cache-sized blocks; options not given, settings shared by all rows and fallbacks no row of a
block needs cost nothing there.
"""

from typing import NamedTuple

import numpy as np

from . import vectors
from .constants import COORDINATE_LIMIT, DEGENERATE, MIN_LENGTH
from .errors import SolverError
from .options import Reach, reach_settings

BLOCK = 8192  #: rows per block: the component arrays of a block stay in cache


class TwoBoneBatch(NamedTuple):
    knee: np.ndarray  #: (N, 3)
    end: np.ndarray  #: (N, 3)
    reached: np.ndarray  #: (N,) bool
    stretch: np.ndarray  #: (N,)
    held: np.ndarray  #: (N,) bool
    side: np.ndarray  #: (N, 3) the knee's swivel, as :attr:`.two_bone.TwoBoneSolution.side` (where held, any)


class ThreeBoneBatch(NamedTuple):
    knee: np.ndarray
    ankle: np.ndarray
    tip: np.ndarray
    reached: np.ndarray
    stretch: np.ndarray
    held: np.ndarray
    side: np.ndarray  #: (N, 3) the knee's swivel


def solve_two_bone_batch(
    root,
    knee,
    end,
    target,
    pole=None,
    pole_mask=None,
    hinge=None,
    plane=None,
    **options,
) -> TwoBoneBatch:
    """:func:`.two_bone.solve_two_bone` for N limbs. ``pole_mask`` marks the rows whose pole is used
    (all rows when ``pole`` is given without a mask); ``options``: the fields of :class:`.ReachOptions`, each
    one value or one per limb, their defaults where not given."""
    points = {
        "root": as_points("root", root),
        "knee": as_points("knee", knee),
        "end": as_points("end", end),
        "target": as_points("target", target),
    }
    n = len(points["root"])
    if any(len(p) != n for p in points.values()):
        raise SolverError("root, knee, end and target must have the same number of rows")
    limbs = limb_inputs(n, pole, pole_mask, hinge, plane, **options)

    out_knee, out_end, side = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3))
    reached, stretch, held = np.empty(n, bool), np.empty(n), np.empty(n, bool)
    for rows in vectors.blocks(n, BLOCK):
        a, b, c, t = (_split(name, p, rows) for name, p in points.items())
        k, e, r, st, h, u = solve_block(a, b, c, t, *limbs.block(rows), rows.start)
        for part, out in ((k, out_knee), (e, out_end), (u, side)):
            vectors.join(part, out[rows])
        reached[rows], stretch[rows], held[rows] = r, st, h
    return TwoBoneBatch(out_knee, out_end, reached, stretch, held, side)


def solve_three_bone_batch(
    root, knee, ankle, tip, target, end_direction, pole=None, pole_mask=None, hinge=None, end_plane=True, **options
) -> ThreeBoneBatch:
    """:func:`.three_bone.solve_three_bone` for N limbs; ``end_plane`` is a bool or an (N,) mask."""
    ankle, tip = as_points("ankle", ankle), as_points("tip", tip)
    n = len(ankle)
    if len(tip) != n:
        raise SolverError("ankle and tip must have the same number of rows")
    root, knee = as_points("root", root), as_points("knee", knee)
    if len(root) != n or len(knee) != n:
        raise SolverError("root, knee, end and target must have the same number of rows")
    points = {
        "root": root,
        "knee": knee,
        "ankle": ankle,
        "tip": tip,
        "target": as_points("target", target, n),
        "end direction": as_points("end direction", end_direction, n),
    }
    end_plane = per_limb(end_plane, n, bool)
    limbs = limb_inputs(n, pole, pole_mask, hinge, None, **options)

    out_knee, out_ankle, out_tip, side = (np.empty((n, 3)) for _ in range(4))
    reached, stretch, held = np.empty(n, bool), np.empty(n), np.empty(n, bool)
    for rows in vectors.blocks(n, BLOCK):
        a, b, c, p, t, direction = (_split(name, array, rows) for name, array in points.items())
        pole_block, use_pole, hinge_block, _, settings = limbs.block(rows)
        solved = three_bone_block(
            a, b, c, p, t, direction, pole_block, use_pole, hinge_block, _block(end_plane, rows), settings, rows.start
        )
        for part, out in zip((*solved[:3], solved[6]), (out_knee, out_ankle, out_tip, side)):
            vectors.join(part, out[rows])
        reached[rows], stretch[rows], held[rows] = solved[3:6]
    return ThreeBoneBatch(out_knee, out_ankle, out_tip, reached, stretch, held, side)


def three_bone_block(a, b, c, p, t, direction, pole, use_pole, hinge, end_plane, s, first_row):
    """One block of :func:`solve_three_bone_batch`, as component arrays (``end_plane``: a bool mask or a shared
    bool, ``s``: the block's settings): new knees, ankles and tips, reached, stretch, held and the knees' swivels."""
    direction, ok = vectors.unit_scaled(direction)
    if not ok.all():
        raise SolverError(f"end direction must not be the zero vector (row {first_row + int(np.argmin(ok))})")
    end_length = vectors.norm(vectors.sub(p, c))
    if not (end_length >= MIN_LENGTH).all():
        raise SolverError(f"end bone must have non-zero length (row {first_row + int(np.argmin(end_length))})")
    # The end bone along its direction with its tip on the target: the ankle's goal (see the scalar solver).
    wrist_goal = vectors.sub(t, vectors.scale(direction, end_length))
    check_range("target", wrist_goal, first_row)  # the two-bone solve's target
    plane = direction if np.all(end_plane) else vectors.where(end_plane, direction, (0.0, 0.0, 0.0))
    k, e, r, st, h, u = solve_block(a, b, c, wrist_goal, pole, use_pole, hinge, plane, s, first_row)
    new_tip = vectors.add(e, vectors.scale(direction, end_length))
    if h.any():
        new_tip = vectors.where(h, p, new_tip)
    return k, e, new_tip, r, st, h, u


class LimbInputs(NamedTuple):
    """The optional inputs and the settings of N limbs, validated, handed out a block at a time."""

    pole: np.ndarray | None  #: (N, 3) or None
    use_pole: np.ndarray | None  #: (N,) or shared (0-d) bool; None without a pole
    hinge: np.ndarray | None  #: (N, 3) or None
    plane: np.ndarray | None  #: (N, 3) or None
    settings: dict  #: name: scalar (shared by all rows) or (N,) array

    def block(self, rows: slice) -> tuple:
        """The block's pole, pole mask, hinge and plane as component arrays (or None), and its settings."""
        return (
            None if self.pole is None else _split("pole", self.pole, rows),
            None if self.use_pole is None else _block(self.use_pole, rows),
            None if self.hinge is None else _split("hinge", self.hinge, rows),
            None if self.plane is None else _split("plane", self.plane, rows),
            {key: _block(value, rows) for key, value in self.settings.items()},
        )


def limb_inputs(n: int, pole, pole_mask, hinge, plane, **options) -> LimbInputs:
    """Validated optional inputs and settings of n limbs; ``options`` as :func:`solve_two_bone_batch` takes them."""
    use_pole = None if pole is None else per_limb(pole_mask if pole_mask is not None else True, n, bool)
    settings = {
        name: per_limb(value, n, np.int64 if name == "mode" else np.float64)
        for name, value in reach_settings(options).items()
    }
    _check_settings(settings)

    def optional(name, value):
        return None if value is None else as_points(name, value, n)

    return LimbInputs(optional("pole", pole), use_pole, optional("hinge", hinge), optional("plane", plane), settings)


def as_points(name: str, value, rows: int | None = None) -> np.ndarray:
    """``value`` as an (N, 3) float64 array; one 3-vector is broadcast to ``rows`` rows where given.
    Its coordinates are checked block by block, by :func:`_split`."""
    array = np.asarray(value, dtype=np.float64)
    if rows is not None:
        try:
            array = np.broadcast_to(array, (rows, 3))
        except ValueError:
            raise SolverError(f"{name} must be an ({rows}, 3) array or one 3-vector, not shape {array.shape}") from None
    if array.ndim != 2 or array.shape[1] != 3:
        raise SolverError(f"{name} must be an (N, 3) array, not shape {array.shape}")
    return array


def _split(name: str, points: np.ndarray, rows: slice) -> vectors.Vec:
    """The block ``rows`` of (N, 3) ``points`` as three component arrays, checked finite and in range."""
    columns = vectors.components(points[rows])
    check_range(name, columns, rows.start)
    return tuple(columns)


def check_range(name: str, columns, first_row: int) -> None:
    """Raise unless every coordinate of a block of points, (3, B) or three arrays, is finite and in range."""
    # One maximum over the block (NaN propagates through it); the culprit's row only on failure.
    if not np.abs(columns).max(initial=0.0) < COORDINATE_LIMIT:
        bad = ~(np.abs(columns) < COORDINATE_LIMIT).all(axis=0)
        row = first_row + int(np.argmax(bad))
        raise SolverError(f"{name} must be finite and within ±{COORDINATE_LIMIT:g} (row {row})")


def per_limb(value, rows: int, dtype=np.float64) -> np.ndarray:
    """A per-limb setting: an (N,) array, or a 0-d array when one value is shared by all rows, so that
    its checks and branches cost nothing per row."""
    array = np.asarray(value, dtype=dtype)
    if array.ndim == 0:
        return array
    try:
        return np.broadcast_to(array, (rows,))
    except ValueError:
        raise SolverError(f"per-limb settings must be scalars or have {rows} rows, not shape {array.shape}") from None


def _block(setting: np.ndarray, rows: slice) -> np.ndarray:
    """The rows of a per-limb setting; a shared (0-d) setting as it is."""
    return setting if setting.ndim == 0 else setting[rows]


def _check_settings(s: dict) -> None:
    checks = (
        (np.isin(s["mode"], [m.value for m in Reach]), "reach mode must be EXTEND, HOLD or STRETCH"),
        ((s["softness"] >= 0.0) & (s["softness"] < COORDINATE_LIMIT), "softness must be a finite distance >= 0"),
        ((s["max_stretch"] >= 1.0) & (s["max_stretch"] < COORDINATE_LIMIT), "max_stretch must be 1 or more"),
        ((s["stretch_start"] > 0.0) & (s["stretch_start"] <= 1.0), "stretch_start must be in (0, 1]"),
        (
            (s["min_bend"] >= 0.0) & (s["min_bend"] <= s["max_bend"]) & (s["max_bend"] <= np.pi),
            "bend limits must satisfy 0 <= min_bend <= max_bend <= pi",
        ),
    )
    for ok, message in checks:
        if not np.all(ok):
            raise SolverError(f"{message} (row {int(np.argmin(ok))})")


def solve_block(a, b, c, t, pole, use_pole, hinge, plane, s, first_row):
    """One block of :func:`solve_two_bone_batch`, whose first row is row ``first_row`` of the input: new
    knees and ends, reached, stretch, held and the knees' swivels (unit, from the knee circle's centre to the
    knee: the side a straight limb would bend to). ``pole``, ``hinge`` and ``plane`` are None where no row
    of the block has one."""
    upper_bone = vectors.sub(b, a)
    upper = vectors.norm(upper_bone)
    lower = vectors.norm(vectors.sub(c, b))
    short = (upper < MIN_LENGTH) | (lower < MIN_LENGTH)
    if short.any():
        i = int(np.argmax(short))
        raise SolverError(
            f"bones must have non-zero length (row {first_row + i}: upper {upper[i]:g}, lower {lower[i]:g})"
        )

    to_target = vectors.sub(t, a)
    distance = vectors.norm(to_target)
    d, aim_ok = vectors.unit_scaled(to_target)
    if not aim_ok.all():
        d = vectors.where(aim_ok, d, _current_aim(a, b, c))

    length, stretch, reached, held = reach_distances(distance, upper, lower, s)
    along, radius = _circle(length, upper * stretch, lower * stretch)
    u = _swivel(d, a, upper_bone, pole, use_pole, hinge, plane, DEGENERATE * (upper + lower))
    new_knee = tuple(a[i] + along * d[i] + radius * u[i] for i in range(3))
    new_end = tuple(a[i] + length * d[i] for i in range(3))
    if held.any():
        new_knee, new_end = vectors.where(held, b, new_knee), vectors.where(held, c, new_end)
        stretch = np.where(held, 1.0, stretch)
    return new_knee, new_end, reached, stretch, held, u


def _current_aim(a, b, c) -> vectors.Vec:
    """The direction kept for a target on the root: root to end, else (the end on the root too)
    across the upper bone, which keeps the knee where it is."""
    to_end, end_ok = vectors.unit_scaled(vectors.sub(c, a))
    across = vectors.any_perpendicular(vectors.unit_scaled(vectors.sub(b, a))[0])
    return vectors.where(end_ok, to_end, across)


def reach_distances(distance, upper, lower, s):
    """Vectorised :func:`.two_bone.reach_distance`; ``held`` marks HOLD rows out of range. The stretch
    is the scalar 1.0 where no row of the block stretches."""
    shortest, longest = _bend_range(upper, lower, s)
    stretch = 1.0
    stretching = s["mode"] == Reach.STRETCH
    if stretching.any():
        start = np.maximum(s["stretch_start"] * longest, shortest)
        stretching = stretching & (distance > start)
        by_start = distance / np.where(stretching & (start > 0.0), start, 1.0)
        stretch = np.where(stretching, np.minimum(np.where(start > 0.0, by_start, np.inf), s["max_stretch"]), 1.0)
        shortest, longest = shortest * stretch, longest * stretch
        to_target = stretching & (stretch < s["max_stretch"])
        shortest = np.where(to_target, np.minimum(shortest, distance), shortest)
        longest = np.where(to_target, np.maximum(longest, distance), longest)
    reached = (shortest <= distance) & (distance <= longest)
    held = (s["mode"] == Reach.HOLD) & ~reached
    result = np.minimum(np.maximum(distance, shortest), longest)
    if (s["softness"] > 0.0).any():
        softness = np.minimum(s["softness"], longest - shortest)
        soft = (softness > 0.0) & (distance > longest - softness) & ~held
        if soft.any():
            safe = np.where(soft, softness, 1.0)
            eased = longest - softness * np.exp(np.minimum((longest - softness - distance) / safe, 0.0))
            result = np.where(soft, eased, result)
            reached &= ~soft
    return result, stretch, reached, held


def _bend_range(upper, lower, s):
    """Vectorised :func:`.two_bone.bend_range`."""
    total = upper + lower

    def limited(sine):  # the root-to-end distance at a bend angle 2 asin(sine)
        return np.sqrt(np.maximum(total * total - 4.0 * upper * lower * sine * sine, 0.0))

    longest = total
    if (s["min_bend"] != 0.0).any():
        longest = np.where(s["min_bend"] == 0.0, total, limited(np.sin(0.5 * s["min_bend"])))
    shortest = np.abs(upper - lower)
    if (s["max_bend"] != np.pi).any():  # never below the fold, as rounding would put it for a limit near pi
        folded = np.maximum(limited(np.sin(0.5 * s["max_bend"])), shortest)
        shortest = np.where(s["max_bend"] == np.pi, shortest, folded)
    return shortest, longest


def _circle(length, l1, l2):
    """The circle of possible knees (see the scalar solver): its centre's distance from the root
    along the root-end axis, and its radius."""
    positive = length > 0.0
    folded = not positive.all()  # equal bones folded flat onto the root
    twice = 2.0 * (np.where(positive, length, 1.0) if folded else length)
    difference, total = l1 - l2, l1 + l2
    along = (length * length + difference * total) / twice
    # length + (l2 - l1) is length - difference exactly: negation and subtraction round alike.
    outer, near, far = (total + length) * (total - length), length - difference, length + difference
    radius = np.sqrt(np.maximum(outer, 0.0)) * np.sqrt(np.maximum(near, 0.0)) * np.sqrt(np.maximum(far, 0.0)) / twice
    if folded:
        along, radius = np.where(positive, along, 0.0), np.where(positive, radius, l1)
    return along, radius


def _swivel(d, a, upper_bone, pole, use_pole, hinge, plane, eps):
    """Vectorised :func:`.two_bone._swivel` (whose float form stays for speed: measured there), choice by choice in
    its order; absent options (None) cost nothing."""
    current, current_ok = _perpendicular_unit(upper_bone, d, eps)
    chosen, chosen_ok = current, current_ok
    forward = None
    if hinge is not None:  # zero rows have no hinge: their forward side is not ok
        forward, forward_ok = _perpendicular_unit(vectors.cross(d, vectors.unit_scaled(hinge)[0]), d, DEGENERATE)
    if plane is not None:  # likewise
        in_plane, plane_ok = _perpendicular_unit(vectors.unit_scaled(plane)[0], d, DEGENERATE)
        side, side_ok = current, current_ok
        if forward is not None:
            side, side_ok = vectors.where(forward_ok, forward, current), forward_ok | current_ok
        flip = side_ok & (vectors.dot(in_plane, side) < 0.0)
        in_plane = vectors.scale(in_plane, np.where(flip, -1.0, 1.0))  # exact either way
        chosen, chosen_ok = in_plane, plane_ok | current_ok
        if not plane_ok.all():
            chosen = vectors.where(plane_ok, in_plane, current)
    if forward is not None:
        backwards = forward_ok & (~chosen_ok | (vectors.dot(chosen, forward) < -DEGENERATE))
        if backwards.any():
            chosen = vectors.where(backwards, forward, chosen)
        chosen_ok = chosen_ok | forward_ok
    if not chosen_ok.all():
        chosen = vectors.where(chosen_ok, chosen, vectors.any_perpendicular(d))
    if pole is not None and use_pole.any():
        from_pole, pole_ok = _perpendicular_unit(vectors.sub(pole, a), d, eps)
        pole_ok &= use_pole
        chosen = vectors.where(pole_ok, from_pole, chosen)
    return chosen


def _perpendicular_unit(v, d, eps):
    """Vectorised :func:`.two_bone._perpendicular_unit`, with its second projection (zero where None)."""
    u, ok = vectors.unit_or_zero(vectors.sub(v, vectors.scale(d, vectors.dot(v, d))), eps)
    return vectors.unit_or_zero(vectors.sub(u, vectors.scale(d, vectors.dot(u, d))), 0.0)[0], ok
