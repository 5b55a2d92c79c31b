# SPDX-License-Identifier: GPL-3.0-or-later
"""Exact solves for chains whose bones change length as they turn: below a bone scaled unevenly across its axis.

The positions are solved in the chain's rigid space, where the first bone turns rigidly. A bone
below it turns in a frame that carries the scale of every chain bone above it; where that scale is
uneven, the bone's length in the rigid space depends on the direction it turns to. So the lengths
``l`` of the bones below the first are unknowns: solved with lengths ``l``, the chain is posed
(:func:`.forward.posed_points`) and its bones come out ``g(l)`` long, and the pose is exact at a root
of ``g(l) - l``. For the lower bone that root is bracketed: in any direction its length lies between
``r * s_min`` and ``r * s_max`` (``r``: its length in its own frame, ``s``: the singular values of that
frame seen from the rigid space), so ``g(l) - l`` changes sign between them. A three-bone end bone,
which points along its goal, is searched around that. Where the root found does not put the effector
on the target (another swivel might), the chain is reported unreached.
"""

import numpy as np

#: Rigid-space lengths are consistent when the pose changes them by less than this, relative to the chain.
TOLERANCE = 1e-13
STEPS = 40  #: at most this many steps of each search
#: Below this, relative to the chain, rounding governs how far a step reduces ``g(l) - l``.
ROUNDING = 1e-9


def consistent(chains, solved):
    """``solved`` for the rows of ``chains`` whose pose misses the solved joints, solved again with lengths
    the pose keeps. ``chains`` is a :class:`.chains.Chains`; returns a :class:`.chains.Solved`."""
    rows = np.flatnonzero(solved.drift > chains.noise * chains.size)
    if len(rows) == 0:
        return solved
    part = chains.subset(rows)
    part.rolls_knee = False  # a roll under an uneven scale changes the lengths below: see Chains.rolls_knee
    return scatter(solved, _solve(part), rows)


def scatter(whole, part, rows):
    """``whole`` (a tuple of arrays, or of such tuples) with ``part`` in its ``rows``."""
    if isinstance(whole, tuple):
        return type(whole)(*(scatter(w, p, rows) for w, p in zip(whole, part)))
    whole = whole.copy()
    whole[rows] = part
    return whole


def _solve(chains):
    """Solve ``chains`` with the lengths of the bones below the first at a root of ``g(l) - l``: the lower
    bone's by :func:`_lower_root`, and a three-bone end bone's by secant steps around that, each step's
    lower root searched from the last one's."""
    if chains.k == 2:
        return _lower_root(chains)[0]
    end = chains.lengths(chains.points)[:, 2]
    solved, posed, near = _lower_root(chains, end)
    previous = None
    for _ in range(STEPS):
        residual = posed - end
        unsettled = np.abs(residual) > TOLERANCE * chains.size
        if not unsettled.any():
            break
        step = posed  # the length the pose gave: a fixed-point step, then secant steps
        if previous is not None:
            slope = residual - previous[1]
            secant = end - residual * (end - previous[0]) / np.where(slope != 0.0, slope, 1.0)
            step = np.where((slope != 0.0) & (secant > 0.0), secant, posed)
        previous, end = (end, residual), np.where(unsettled, step, end)
        solved, posed, near = _lower_root(chains, end, near)
    return solved


def _lower_root(chains, end=None, near=None):
    """Solve ``chains`` with the lower bone's length at a root of ``h(l) = g(l) - l`` (a three-bone end
    bone at the lengths ``end``). Returns the solve, the end bones' posed lengths, and the root with the
    probes bracketing it, to search from when ``end`` changes a little (``near``).

    ``h`` is >= 0 where the lower bone is shortest and <= 0 where it is longest. A root where the solve
    reaches the goal lies where the lower bone spans the goal's distance from the first joint, so that
    interval is probed first, for the change of sign nearest the current length; given ``near``, the
    search starts at its root and within its probes instead, and probes only if it does not settle there.
    Secant steps then narrow the bracket, and a step out of it, or one that did not halve ``h``, bisects
    it instead.
    """
    lengths = chains.lengths(chains.points)
    if end is not None:
        lengths[:, 2] = end

    def h(x):
        lengths[:, 1] = x
        solved = chains.solve(chains.with_lengths(lengths))
        posed = chains.lengths(solved.posed)
        return posed[:, 1] - x, solved, posed

    if near is not None:
        x, positive, negative, slope = near
        x, solved, posed, slope, settled = _narrow(chains, h, x, positive, negative, slope)
        if settled:
            return solved, posed[:, 2] if end is not None else None, (x, positive, negative, slope)
    current = lengths[:, 1].copy()
    positive, negative = _lower_range(chains)  # h >= 0 at the first, <= 0 at the second
    _, _, posed = h(current)  # the end bones' direction and lengths for the goal's distance
    distance, upper = chains.goal_distance(lengths), lengths[:, 0]
    low, high = np.maximum(np.abs(distance - upper), positive), np.minimum(distance + upper, negative)
    # Just inside: at either end the limb lies straight or folded onto the goal, where whether it reaches
    # is decided by the last bit of rounding, and kernels that round differently would bracket other roots.
    margin = np.minimum(ROUNDING * chains.size, 0.25 * np.abs(high - low))
    probes = np.linspace(low + margin, high - margin, 5)
    signs = np.array([np.sign(h(x)[0]) for x in probes])
    nearest = np.full(len(current), np.inf)
    for i in range(len(probes) - 1):
        change = (signs[i] * signs[i + 1] < 0.0) & (probes[i] < probes[i + 1])
        gap = np.maximum(np.maximum(probes[i] - current, current - probes[i + 1]), 0.0)
        better = change & (gap < nearest)
        nearest = np.where(better, gap, nearest)
        positive = np.where(better, np.where(signs[i] > 0.0, probes[i], probes[i + 1]), positive)
        negative = np.where(better, np.where(signs[i] > 0.0, probes[i + 1], probes[i]), negative)

    x = np.where((current - positive) * (current - negative) < 0.0, current, 0.5 * (positive + negative))
    x, solved, posed, slope, _ = _narrow(chains, h, x, positive, negative)
    return solved, posed[:, 2] if end is not None else None, (x, positive, negative, slope)


def _narrow(chains, h, x, positive, negative, slope=None):
    """Secant steps on ``h`` from ``x`` within the bracket from ``positive`` (h >= 0) to ``negative``
    (h <= 0), the first along ``slope`` if given (else a fixed-point step). Returns the root found, the solve
    and posed lengths there, the last secant's slope, and whether every row settled."""
    residual, solved, posed = h(x)
    previous, slow = None, np.zeros(len(x), bool)
    if slope is None:
        slope = np.full(len(x), -1.0)  # h(l) = g(l) - l: the fixed-point step
    for _ in range(STEPS):
        unsettled = np.abs(residual) > TOLERANCE * chains.size
        if not unsettled.any():
            break
        positive = np.where(residual > 0.0, x, positive)
        negative = np.where(residual < 0.0, x, negative)
        if previous is not None:
            moved = x - previous[0]
            secant = (moved != 0.0) & (residual != previous[1])
            slope = np.divide(residual - previous[1], moved, out=np.array(slope, dtype=np.float64), where=secant)
        step = x - residual / slope
        # A step onto the bracket's end, or past it by rounding, is taken there: a root at the end (a limb
        # straight toward a goal out of reach) is otherwise only approached by bisection, forty solves.
        low, high = np.minimum(positive, negative), np.maximum(positive, negative)
        inside = (step >= low - TOLERANCE * chains.size) & (step <= high + TOLERANCE * chains.size) & ~slow
        step = np.clip(step, low, high)
        previous = (x, residual)
        x = np.where(unsettled, np.where(inside, step, 0.5 * (positive + negative)), x)
        residual, solved, posed = h(x)
        # Not halving h counts as slow only above rounding: near the root a step from a root found for a
        # nearby end length (``near``) would otherwise be thrown away for a bisection.
        slow = (np.abs(residual) > 0.5 * np.abs(previous[1])) & (np.abs(residual) > ROUNDING * chains.size)
    else:
        unsettled = np.abs(residual) > TOLERANCE * chains.size
    return x, solved, posed, slope, not unsettled.any()


def _lower_range(chains) -> tuple[np.ndarray, np.ndarray]:
    """The shortest and longest the second bone can be in the rigid space, over every direction."""
    frames = chains.frames_below()  # its frame without its own turn, seen from the rigid space
    own = np.linalg.norm(np.linalg.solve(frames, chains.segment(1)[..., None])[..., 0], axis=1)
    singular = np.linalg.svd(frames, compute_uv=False)
    return own * singular[:, -1], own * singular[:, 0]
