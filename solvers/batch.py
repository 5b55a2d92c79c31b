# SPDX-License-Identifier: GPL-3.0-or-later
"""The two- and three-bone solvers of :mod:`.two_bone` and :mod:`.three_bone`, vectorised over N limbs.

Arrays in, arrays out: points are (N, 3); per-limb settings are scalars or (N,) arrays.
Directions that may be absent (hinge axis, knee plane) are zero vectors where absent; poles
come with a boolean mask. The results agree with the scalar solvers to rounding (1e-9 is
tested), including every fallback; rows are independent, so a large N is processed in
cache-sized blocks.
"""

from typing import NamedTuple

import numpy as np

from . import soa
from .errors import SolverError
from .options import COORDINATE_LIMIT, MIN_LENGTH, Reach
from .two_bone import DEGENERATE

BLOCK = 8192  #: rows per block: each component array of a block stays in cache


class TwoBoneBatch(NamedTuple):
    knee: np.ndarray  #: (N, 3)
    end: np.ndarray  #: (N, 3)
    reached: np.ndarray  #: (N,) bool
    stretch: np.ndarray  #: (N,)
    held: np.ndarray  #: (N,) bool


class ThreeBoneBatch(NamedTuple):
    knee: np.ndarray
    ankle: np.ndarray
    tip: np.ndarray
    reached: np.ndarray
    stretch: np.ndarray
    held: np.ndarray


def solve_two_bone_batch(
    root,
    knee,
    end,
    target,
    pole=None,
    pole_mask=None,
    hinge=None,
    plane=None,
    *,
    mode=Reach.EXTEND,
    softness=0.0,
    max_stretch=1.0,
    stretch_start=1.0,
    min_bend=0.0,
    max_bend=np.pi,
) -> TwoBoneBatch:
    """:func:`.two_bone.solve_two_bone` for N limbs. ``pole_mask`` marks the rows whose pole is used
    (all rows when ``pole`` is given without a mask)."""
    points = [_points("root", root), _points("knee", knee), _points("end", end), _points("target", target)]
    n = len(points[0])
    if any(len(p) != n for p in points):
        raise SolverError("root, knee, end and target must have the same number of rows")
    optional = {}
    for name, value in (("pole", pole), ("hinge", hinge), ("plane", plane)):
        optional[name] = np.zeros((n, 3)) if value is None else _points(name, value, n)
    use_pole = np.zeros(n, bool) if pole is None else _settings(pole_mask if pole_mask is not None else True, n, bool)
    settings = {
        "mode": _settings(mode, n, np.int64),
        "softness": _settings(softness, n),
        "max_stretch": _settings(max_stretch, n),
        "stretch_start": _settings(stretch_start, n),
        "min_bend": _settings(min_bend, n),
        "max_bend": _settings(max_bend, n),
    }
    _check_settings(settings)

    out_knee, out_end = np.empty((n, 3)), np.empty((n, 3))
    reached, stretch, held = np.empty(n, bool), np.empty(n), np.empty(n, bool)
    for s in range(0, n, BLOCK):
        rows = slice(s, s + BLOCK)
        k, e, r, st, h = _solve_block(
            *(soa.split(p[rows]) for p in points),
            soa.split(optional["pole"][rows]),
            use_pole[rows],
            soa.split(optional["hinge"][rows]),
            soa.split(optional["plane"][rows]),
            {key: value[rows] for key, value in settings.items()},
        )
        out_knee[rows], out_end[rows] = soa.join(k), soa.join(e)
        reached[rows], stretch[rows], held[rows] = r, st, h
    return TwoBoneBatch(out_knee, out_end, reached, stretch, held)


def solve_three_bone_batch(
    root, knee, ankle, tip, target, end_direction, pole=None, pole_mask=None, hinge=None, natural=True, **options
) -> ThreeBoneBatch:
    """:func:`.three_bone.solve_three_bone` for N limbs; ``natural`` is a bool or an (N,) mask."""
    ankle, tip = _points("ankle", ankle), _points("tip", tip)
    if len(tip) != len(ankle):
        raise SolverError("ankle and tip must have the same number of rows")
    direction, ok = soa.unit_scaled(soa.split(_points("end direction", end_direction, len(ankle))))
    if not np.all(ok):
        raise SolverError(f"end direction must not be the zero vector (row {int(np.argmin(ok))})")
    direction = soa.join(direction)
    end_length = soa.norm(soa.sub(soa.split(tip), soa.split(ankle)))
    if not np.all(end_length >= MIN_LENGTH):
        raise SolverError(f"end bone must have non-zero length (row {int(np.argmin(end_length))})")
    wrist_goal = _points("target", target, len(ankle)) - end_length[:, None] * direction
    plane = np.where(_settings(natural, len(ankle), bool)[:, None], direction, 0.0)
    two = solve_two_bone_batch(root, knee, ankle, wrist_goal, pole, pole_mask, hinge, plane, **options)
    new_tip = np.where(two.held[:, None], tip, two.end + end_length[:, None] * direction)
    return ThreeBoneBatch(two.knee, two.end, new_tip, two.reached, two.stretch, two.held)


def _points(name: str, value, rows: int | None = None) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if rows is not None:
        try:
            array = np.broadcast_to(array, (rows, 3))
        except ValueError:
            raise SolverError(f"{name} must be an ({rows}, 3) array or one 3-vector, not shape {array.shape}") from None
    if array.ndim != 2 or array.shape[1] != 3:
        raise SolverError(f"{name} must be an (N, 3) array, not shape {array.shape}")
    bad = ~(np.abs(array) < COORDINATE_LIMIT).all(axis=1)
    if bad.any():
        raise SolverError(f"{name} must be finite and within ±{COORDINATE_LIMIT:g} (row {int(np.argmax(bad))})")
    return array


def _settings(value, rows: int, dtype=np.float64) -> np.ndarray:
    array = np.asarray(value, dtype=dtype)
    try:
        return np.broadcast_to(array, (rows,))
    except ValueError:
        raise SolverError(f"per-limb settings must be scalars or have {rows} rows, not shape {array.shape}") from None


def _check_settings(s: dict) -> None:
    checks = (
        (np.isin(s["mode"], [m.value for m in Reach]), "reach mode must be EXTEND, HOLD or STRETCH"),
        ((s["softness"] >= 0.0) & (s["softness"] < COORDINATE_LIMIT), "softness must be a finite distance >= 0"),
        ((s["max_stretch"] >= 1.0) & (s["max_stretch"] < COORDINATE_LIMIT), "max_stretch must be 1 or more"),
        ((s["stretch_start"] > 0.0) & (s["stretch_start"] <= 1.0), "stretch_start must be in (0, 1]"),
        ((s["min_bend"] >= 0.0) & (s["min_bend"] <= s["max_bend"]) & (s["max_bend"] <= np.pi),
         "bend limits must satisfy 0 <= min_bend <= max_bend <= pi"),
    )  # fmt: skip
    for ok, message in checks:
        if not np.all(ok):
            raise SolverError(f"{message} (row {int(np.argmin(ok))})")


def _solve_block(a, b, c, t, pole, use_pole, hinge, plane, s):
    upper = soa.norm(soa.sub(b, a))
    lower = soa.norm(soa.sub(c, b))
    short = (upper < MIN_LENGTH) | (lower < MIN_LENGTH)
    if short.any():
        row = int(np.argmax(short))
        raise SolverError(f"bones must have non-zero length (row {row}: upper {upper[row]:g}, lower {lower[row]:g})")

    # Direction to the target; a target on the root keeps the current aim (see the scalar solver).
    to_target = soa.sub(t, a)
    distance = soa.norm(to_target)
    aim, aim_ok = soa.unit_scaled(to_target)
    to_end, end_ok = soa.unit_scaled(soa.sub(c, a))
    across = soa.any_perpendicular(soa.unit_scaled(soa.sub(b, a))[0])
    d = soa.where(aim_ok, aim, soa.where(end_ok, to_end, across))

    length, stretch, reached, held = _reach_distance(distance, upper, lower, s)
    l1, l2 = upper * stretch, lower * stretch
    safe = np.where(length > 0.0, length, 1.0)
    along = np.where(length > 0.0, (length * length + (l1 - l2) * (l1 + l2)) / (2.0 * safe), 0.0)
    outer, near, far = (l1 + l2 + length) * (l1 + l2 - length), length + (l2 - l1), length + (l1 - l2)
    area = np.sqrt(np.maximum(outer, 0.0)) * np.sqrt(np.maximum(near, 0.0)) * np.sqrt(np.maximum(far, 0.0))
    radius = np.where(length > 0.0, area / (2.0 * safe), l1)  # factor by factor, as in the scalar solver

    u = _swivel(d, a, b, pole, use_pole, hinge, plane, DEGENERATE * (upper + lower))
    new_knee = soa.add(a, soa.add(soa.scale(d, along), soa.scale(u, radius)))
    new_end = soa.add(a, soa.scale(d, length))
    new_knee = soa.where(held, b, new_knee)
    new_end = soa.where(held, c, new_end)
    return new_knee, new_end, reached, np.where(held, 1.0, stretch), held


def _reach_distance(distance, upper, lower, s):
    """Vectorised :func:`.two_bone.reach_distance`; ``held`` marks HOLD rows out of range."""
    total = upper + lower
    sin_min, sin_max = np.sin(0.5 * s["min_bend"]), np.sin(0.5 * s["max_bend"])
    longest = np.where(
        s["min_bend"] == 0.0, total, np.sqrt(np.maximum(total * total - 4.0 * upper * lower * sin_min * sin_min, 0.0))
    )
    shortest = np.where(
        s["max_bend"] == np.pi,
        np.abs(upper - lower),
        np.sqrt(np.maximum(total * total - 4.0 * upper * lower * sin_max * sin_max, 0.0)),
    )
    start = s["stretch_start"] * longest
    stretching = (s["mode"] == Reach.STRETCH) & (distance > start)
    by_start = distance / np.where(stretching & (start > 0.0), start, 1.0)
    stretch = np.where(stretching, np.minimum(np.where(start > 0.0, by_start, np.inf), s["max_stretch"]), 1.0)
    shortest, longest = shortest * stretch, longest * stretch
    longest = np.where(stretching & (stretch < s["max_stretch"]), np.maximum(longest, distance), longest)
    reached = (shortest <= distance) & (distance <= longest)
    held = (s["mode"] == Reach.HOLD) & ~reached
    result = np.minimum(np.maximum(distance, shortest), longest)
    softness = np.minimum(s["softness"], longest - shortest)
    soft = (softness > 0.0) & (distance > longest - softness) & ~held
    safe = np.where(soft, softness, 1.0)
    eased = longest - softness * np.exp(np.minimum((longest - softness - distance) / safe, 0.0))
    result = np.where(soft, eased, result)
    return result, stretch, reached & ~soft, held


def _swivel(d, a, b, pole, use_pole, hinge, plane, eps):
    """Vectorised :func:`.two_bone._swivel`."""
    from_pole, pole_ok = _perpendicular_unit(soa.sub(pole, a), d, eps)
    pole_ok &= use_pole
    axis = soa.cross(d, soa.unit_scaled(hinge)[0])
    forward, forward_ok = _perpendicular_unit(axis, d, DEGENERATE)
    current, current_ok = _perpendicular_unit(soa.sub(b, a), d, eps)
    in_plane, plane_ok = _perpendicular_unit(soa.unit_scaled(plane)[0], d, DEGENERATE)
    side = soa.where(forward_ok, forward, current)
    flip = (forward_ok | current_ok) & (soa.dot(in_plane, side) < 0.0)
    in_plane = soa.where(flip, soa.scale(in_plane, -1.0), in_plane)
    chosen = soa.where(plane_ok, in_plane, current)
    chosen_ok = plane_ok | current_ok
    backwards = forward_ok & (~chosen_ok | (soa.dot(chosen, forward) < -DEGENERATE))
    chosen = soa.where(backwards, forward, chosen)
    chosen_ok |= forward_ok
    chosen = soa.where(chosen_ok, chosen, soa.any_perpendicular(d))
    return soa.where(pole_ok, from_pole, chosen)


def _perpendicular_unit(v, d, eps):
    """Vectorised :func:`.two_bone._perpendicular_unit`, with its second projection (zero where None)."""
    u, ok = soa.unit_or_zero(soa.sub(v, soa.scale(d, soa.dot(v, d))), eps)
    return soa.unit_or_zero(soa.sub(u, soa.scale(d, soa.dot(u, d))), 0.0)[0], ok
