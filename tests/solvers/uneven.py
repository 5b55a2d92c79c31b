# SPDX-License-Identifier: GPL-3.0-or-later
"""Walks authored on ground that is not flat: the walker's stances raised to levels of their own.

Each stance of each foot (heel strike to toe-off) stands on a level drawn for it, at least the
floor: blocks at random heights, stairs going up or down, one step, a floor a few centimetres uneven;
the foot in the air blends from the level it leaves to the one it lands on (over the walker's own
swing arc), and the pelvis rides on the lower foot's level, smoothed, never stretching a leg further
than the flat walk does. The ground truth is each frame's source level under each foot.
"""

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from walker import Walk, gaussian, smoothstep

from solvers.planting import Legs
from solvers.planting.timeline import intervals

#: Metres: a stance raised by less than this is on the floor, one raised more is clearly on something.
#: Levels are drawn as the floor or at least this high, so that no stance sits on the contact height's edge.
LOWEST_RAISE = 0.08
#: Metres: the levels of a capture floor a few centimetres uneven, each stance on the floor or this far up: above
#: the contact height (3 cm), so not on the floor's contact band, and across twice it, where a stance is on a block.
UNEVEN_FLOOR = (0.04, 0.075)


@dataclass(frozen=True)
class Uneven:
    """A walk on raised stances and its ground truth."""

    walk: Walk  #: the flat walk the levels were added to
    legs: Legs  #: the walk with each stance on its level
    level: np.ndarray  #: (F, n) the level under each foot, above the floor: its stance's, blended in the air
    stance: np.ndarray  #: (F, n) the walker's stances
    raised: np.ndarray  #: (F, n) the stance's level at stance frames (NaN in the air)


def stance_runs(w: Walk) -> list[tuple[int, int, int]]:
    """Every stance of the walk as (first, last, leg), in the order they land."""
    runs = [(first, last, n) for n in range(w.stance.shape[1]) for first, last in intervals(w.stance[:, n])]
    return sorted(runs)


def raise_stances(w: Walk, heights, least: float = LOWEST_RAISE) -> Uneven:
    """``w`` with its k-th stance (in landing order, :func:`stance_runs`) raised by ``heights[k]``, less the
    lowest of the stances it shows at least half of (then on the floor if less than ``least``)."""
    g = w.gait
    frames, count = w.stance.shape
    runs = stance_runs(w)
    # The lowest level a stance the take shows whole stands on is the floor: nothing tells a take all on a
    # platform from one on the floor.
    whole = [k for k, (first, last, _) in enumerate(runs) if last - first + 1 >= 0.5 * g.duty * g.period * g.fps]
    lowest = min((heights[k] for k in whole), default=0.0)
    raised = np.full((frames, count), np.nan)
    for (first, last, n), height in zip(runs, heights):
        rise = height - lowest
        raised[first : last + 1, n] = rise if rise >= least else 0.0
    level = np.empty((frames, count))
    for n in range(count):
        known = ~np.isnan(raised[:, n])
        if not known.any():
            level[:, n] = 0.0
            continue
        level[:, n] = raised[:, n]
        for first, last in intervals(~known):
            before = raised[first - 1, n] if first > 0 else raised[last + 1, n]
            after = raised[last + 1, n] if last < frames - 1 else before
            u = smoothstep((np.arange(first, last + 1) - first + 1) / (last - first + 2))
            level[first : last + 1, n] = before + u * (after - before)
    foot = w.legs.foot.copy()
    foot[..., 2, 3] += level
    lowest = level.min(axis=1)
    body = gaussian(lowest, g.ease * g.fps)
    body -= max(float((body - lowest).max()), 0.0)  # never above the lower foot's level: no leg stretches more
    legs = Legs(
        foot=foot,
        ball=w.legs.ball + level[..., None] * [0.0, 0.0, 1.0],
        tip=w.legs.tip + level[..., None] * [0.0, 0.0, 1.0],
        toe=w.legs.toe,
        hip=w.legs.hip + body[:, None, None] * [0.0, 0.0, 1.0],
        pelvis=w.legs.pelvis + body[:, None] * [0.0, 0.0, 1.0],
        thigh=w.legs.thigh,
        shin=w.legs.shin,
    )
    return Uneven(w, legs, level, w.stance, raised)


def _floats(lo: float, hi: float):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def levels(draw, count: int, kind: str) -> list[float]:
    """``count`` stance levels above the floor, the lowest on it: ``blocks`` at random heights (the floor or
    8-30 cm), ``stairs`` a step of 8-18 cm per stance up or down, one ``step`` 8-30 cm up or down after a
    drawn stance, or an uneven ``floor`` (the floor or :data:`UNEVEN_FLOOR` up)."""
    if kind == "floor":
        heights = [draw(st.one_of(st.just(0.0), _floats(*UNEVEN_FLOOR))) for _ in range(count)]
    elif kind == "blocks":
        heights = [draw(st.one_of(st.just(0.0), _floats(LOWEST_RAISE, 0.3))) for _ in range(count)]
    elif kind == "stairs":
        rise = draw(_floats(0.08, 0.18))
        heights = [rise * k for k in range(count)]
    else:
        rise, at = draw(_floats(LOWEST_RAISE, 0.3)), draw(st.integers(1, max(count - 1, 1)))
        heights = [0.0 if k < at else rise for k in range(count)]
    if kind != "blocks" and draw(st.booleans()):
        heights = heights[::-1]  # going down
    return heights
