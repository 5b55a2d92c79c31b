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


def consistent(chains, solved):
    """``solved`` for the rows of ``chains`` whose pose misses the solved joints, solved again with lengths
    the pose keeps. ``chains`` is a :class:`.chains._Chains`; returns a :class:`.chains._Solved`."""
    miss = np.linalg.norm(solved.posed - solved.points, axis=2).max(axis=1)
    rows = np.flatnonzero(miss > chains.noise * chains.size)
    if len(rows) == 0:
        return solved
    return scatter(solved, _solve(chains.subset(rows)), rows)


def scatter(whole, part, rows):
    """``whole`` (a tuple of arrays, or of such tuples) with ``part`` in its ``rows``."""
    if isinstance(whole, tuple):
        return type(whole)(*(scatter(w, p, rows) for w, p in zip(whole, part)))
    whole = whole.copy()
    whole[rows] = part
    return whole


def _solve(chains):
    """Solve ``chains`` with the lengths of the bones below the first at a root of ``g(l) - l``: the lower
    bone's by :func:`_lower_root`, and a three-bone end bone's by secant steps around that."""
    if chains.k == 2:
        return _lower_root(chains)[0]
    end = chains.lengths(chains.points)[:, 2]
    solved, posed = _lower_root(chains, end)
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
        solved, posed = _lower_root(chains, end)
    return solved


def _lower_root(chains, end=None):
    """Solve ``chains`` with the lower bone's length at a root of ``h(l) = g(l) - l`` (a three-bone end
    bone at the lengths ``end``). Returns the solve and the end bones' posed lengths.

    ``h`` is >= 0 where the lower bone is shortest and <= 0 where it is longest. A root where the solve
    reaches the goal lies where the lower bone spans the goal's distance from the first joint, so that
    interval is probed first, for the change of sign nearest the current length. Secant steps then
    narrow the bracket, and a step out of it, or one that did not halve ``h``, bisects it instead.
    """
    lengths = chains.lengths(chains.points)
    if end is not None:
        lengths[:, 2] = end

    def h(x):
        lengths[:, 1] = x
        solved = chains.solve(chains.with_lengths(lengths))
        posed = chains.lengths(solved.posed)
        return posed[:, 1] - x, solved, posed

    current = lengths[:, 1].copy()
    positive, negative = _lower_range(chains)  # h >= 0 at the first, <= 0 at the second
    _, _, posed = h(current)  # the end bones' direction and lengths for the goal's distance
    distance, upper = chains.goal_distance(lengths), lengths[:, 0]
    probes = np.linspace(np.maximum(np.abs(distance - upper), positive), np.minimum(distance + upper, negative), 5)
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
    residual, solved, posed = h(x)
    previous, slow = None, np.zeros(len(x), bool)
    for _ in range(STEPS):
        unsettled = np.abs(residual) > TOLERANCE * chains.size
        if not unsettled.any():
            break
        positive = np.where(residual > 0.0, x, positive)
        negative = np.where(residual < 0.0, x, negative)
        step = x + residual  # the length the pose gave: a fixed-point step, then secant steps
        if previous is not None:
            slope = residual - previous[1]
            secant = x - residual * (x - previous[0]) / np.where(slope != 0.0, slope, 1.0)
            step = np.where(slope != 0.0, secant, step)
        inside = ((step - positive) * (step - negative) < 0.0) & ~slow
        previous = (x, residual)
        x = np.where(unsettled, np.where(inside, step, 0.5 * (positive + negative)), x)
        residual, solved, posed = h(x)
        slow = np.abs(residual) > 0.5 * np.abs(previous[1])
    return solved, posed[:, 2] if end is not None else None


def _lower_range(chains) -> tuple[np.ndarray, np.ndarray]:
    """The shortest and longest the second bone can be in the rigid space, over every direction."""
    frames = chains.frames_below()  # its frame without its own turn, seen from the rigid space
    own = np.linalg.norm(np.linalg.solve(frames, chains.segment(1)[..., None])[..., 0], axis=1)
    singular = np.linalg.svd(frames, compute_uv=False)
    return own * singular[:, -1], own * singular[:, 0]
