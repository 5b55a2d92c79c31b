# SPDX-License-Identifier: GPL-3.0-or-later
"""How high the body goes between stances and flights (:func:`solvers.planting.pelvis.body_height`)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from solvers.planting.pelvis import body_height
from solvers.planting.timeline import smooth_above

#: Frames without a foot on the ground that make a flight in these tests.
FLIGHT = 3


@st.composite
def runs(draw):
    """A run's support: stances of 1-12 frames, each carried at its own height, between flights of
    FLIGHT-10 frames. Returns the (F, 1) ceilings and carries, and the stances as (first, last, level)."""
    stances = []
    frame, ceilings, carried = 0, [], []
    for number in range(draw(st.integers(2, 5))):
        if number:
            gap = draw(st.integers(FLIGHT, 10))
            ceilings += [0.0] * gap
            carried += [False] * gap
            frame += gap
        length, level = draw(st.integers(1, 12)), draw(st.floats(-0.5, 0.5))
        stances.append((frame, frame + length - 1, level))
        ceilings += [level] * length
        carried += [True] * length
        frame += length
    return np.array(ceilings)[:, None], np.array(carried)[:, None], stances


@given(runs(), st.floats(0.0, 8.0))
def test_a_run_rises_and_falls_in_the_air_and_keeps_each_stance(run, sigma):
    ceiling, carries, stances = run
    height = body_height(ceiling, carries, carries[:, 0], np.zeros(len(ceiling)), sigma, FLIGHT)
    assert np.isfinite(height).all()
    for first, last, level in stances:  # every stance at its own height: the legs as bent as animated
        np.testing.assert_allclose(height[first : last + 1], level, atol=1e-12)
    for (_, end, before), (start, _, after) in zip(stances, stances[1:]):
        flight = height[end : start + 1]  # from the last frame of a stance to the first of the next
        low, high = min(before, after), max(before, after)
        assert (flight >= low - 1e-12).all() and (flight <= high + 1e-12).all()
        assert (np.diff(flight) * np.sign(after - before) >= -1e-12).all()  # one way, no overshoot


@given(st.lists(st.floats(-0.5, 0.5), min_size=8, max_size=60), st.integers(0, 20), st.floats(0.5, 8.0))
def test_a_gap_shorter_than_a_flight_is_smoothed_across(levels, start, sigma):
    """A frame or two without support in a walk is noise: the heights are filled across it and smoothed
    as one, as though the foot had stayed."""
    ceiling = np.array(levels)[:, None]
    carries = np.ones_like(ceiling, bool)
    start = min(start, len(levels) - 3)
    carries[start : start + FLIGHT - 1] = False
    height = body_height(ceiling, carries, carries[:, 0], np.zeros(len(levels)), sigma, FLIGHT)
    filled = ceiling[:, 0].copy()
    frames = np.arange(len(levels))
    gap = ~carries[:, 0]
    filled[gap] = np.interp(frames[gap], frames[~gap], filled[~gap])
    np.testing.assert_allclose(height, -smooth_above(-filled, sigma), atol=1e-12)
