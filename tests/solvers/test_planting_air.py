# SPDX-License-Identifier: GPL-3.0-or-later
"""A knee in the air turns gently (:func:`solvers.planting.air.gentle_knees`), against the law of cosines."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from solvers.planting.air import bend, extension, gentle_knees
from solvers.planting.timeline import intervals

MOST = np.radians(6.0)


@st.composite
def swings(draw):
    """A leg over 3-40 frames, held on random runs, its ankle at random bends (25-150°) along random directions from
    a hip at the origin, animated bent 5-20° (so every bend asked lies between straight and folded). Returns held,
    hips, ankles, animated distances, thigh, shin (F,)."""
    frames = draw(st.integers(3, 40))
    thigh, shin = draw(st.floats(0.3, 0.5)), draw(st.floats(0.3, 0.5))
    held = np.array(draw(st.lists(st.booleans(), min_size=frames, max_size=frames)))
    bends = np.radians(np.array(draw(st.lists(st.floats(25.0, 150.0), min_size=frames, max_size=frames))))
    animated = np.radians(np.array(draw(st.lists(st.floats(5.0, 20.0), min_size=frames, max_size=frames))))
    ways = np.array(draw(st.lists(st.floats(-0.6, 0.6), min_size=2 * frames, max_size=2 * frames))).reshape(-1, 2)
    direction = np.column_stack([ways, -np.ones(frames)])
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    lengths = np.full(frames, thigh), np.full(frames, shin)
    ankles = direction * extension(bends, thigh, shin)[:, None]
    return held, np.zeros((frames, 3)), ankles, extension(animated, thigh, shin), *lengths


@given(swings())
def test_a_knee_in_the_air_turns_no_faster_than_its_swing_allows(swing):
    held, hips, ankles, animated, thigh, shin = swing
    offsets = gentle_knees(held, hips, ankles, animated, thigh, shin, MOST)
    assert np.isfinite(offsets).all() and not offsets[held].any()
    moved = ankles + offsets
    assert np.allclose(np.cross(moved - hips, ankles - hips), 0.0, atol=1e-9)  # along the line from the hip
    beyond = bend(np.linalg.norm(moved - hips, axis=1), thigh, shin) - bend(animated, thigh, shin)
    frames = len(held)
    for first, last in intervals(~held):
        ends = [end for end in (first - 1, last + 1) if 0 <= end < frames]
        rate = MOST
        if len(ends) == 2:
            rate = max(MOST, abs(beyond[ends[1]] - beyond[ends[0]]) / (ends[1] - ends[0]))
        span = slice(max(first - 1, 0), min(last + 2, frames))
        assert (np.abs(np.diff(beyond[span])) <= rate + 1e-7).all()


@given(swings())
def test_a_knee_that_turns_gently_already_is_left_alone(swing):
    held, hips, ankles, animated, thigh, shin = swing
    steady = np.radians(40.0) + np.radians(2.0) * np.arange(len(held))  # 2° a frame beyond a steady animated bend
    animated = np.full(len(held), extension(np.radians(30.0), thigh[0], shin[0]))
    ankles = ankles / np.linalg.norm(ankles, axis=1, keepdims=True) * extension(steady, thigh, shin)[:, None]
    assert not gentle_knees(held, hips, ankles, animated, thigh, shin, MOST).any()
