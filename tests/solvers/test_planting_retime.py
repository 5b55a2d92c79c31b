# SPDX-License-Identifier: GPL-3.0-or-later
"""A swing re-timed so it lifts before it crosses onto higher ground (:mod:`solvers.planting.retime`)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from solvers.planting.retime import JUMP, jump, least_jumps, retimed
from solvers.planting.surface import clearing_lift

swings = st.integers(3, 30).flatmap(
    lambda frames: hnp.arrays(np.float64, (frames, 2, 3), elements=st.floats(-1.0, 1.0, width=64))
)


@given(swings, st.floats(1.0, 4.0))
def test_a_retimed_swing_keeps_its_ends_its_heights_and_its_way(track, power):
    out = retimed(track, power)
    assert np.array_equal(out[[0, -1]], track[[0, -1]]) and np.array_equal(out[..., 2], track[..., 2])
    # Each frame lies on the swing's way across the ground, between two of its frames, never going back.
    at = (len(track) - 1) * (np.arange(len(track)) / (len(track) - 1)) ** power
    assert (np.diff(at) >= 0.0).all()
    low = np.minimum(np.floor(at).astype(int), len(track) - 2)
    weight = (at - low)[:, None, None]
    expected = (1.0 - weight) * track[low, :, :2] + weight * track[low + 1, :, :2]
    assert np.allclose(out[..., :2], expected, atol=1e-12)
    assert np.allclose(retimed(track, 1.0), track, atol=1e-12)


def _over_a_step(edge: float, frames: int = 9, height: float = 0.2):
    """A foot swinging 0.8 m forward at a steady pace, from the floor to a step ``height`` up whose edge is ``edge``
    metres ahead of take-off, and how it rises over the step (the planting's clearing lift)."""
    track = np.zeros((frames, 1, 3))
    track[:, 0, 0] = np.linspace(0.0, 0.8, frames)
    track[-1, 0, 2] = height
    down = np.zeros(frames, bool)
    down[[0, -1]] = True

    def lifted(swing):
        need = np.where(swing[:, 0, 0] > edge, height - swing[:, 0, 2], 0.0)
        out = swing.copy()
        out[..., 2] += clearing_lift(np.where(down, 0.0, np.maximum(need, 0.0)), down, 2.0)[:, None]
        return out

    return track, lifted


@given(st.floats(0.05, 0.75))
def test_a_swing_jumps_no_more_than_as_animated_and_lifts_before_an_early_edge(edge):
    track, lifted = _over_a_step(edge)
    source = track.copy()
    source[:, 0, 2] = 0.0
    as_animated = lifted(track)
    out = least_jumps([track], [as_animated], [source], lambda tracks, which: [lifted(t) for t in tracks])[0]
    assert jump(out, source) <= jump(as_animated, source) + 1e-12
    over = out[:, 0, 0] > edge + 1e-9
    assert (out[over, 0, 2] >= 0.2 - 1e-9).all()  # what crosses the edge is over it
    if edge < 0.1 and jump(as_animated, source) > JUMP:  # crossed on the swing's first frame: it lifts before
        assert jump(out, source) < jump(as_animated, source)


def test_an_edge_just_after_take_off_is_crossed_without_rising_the_step_in_a_frame():
    track, lifted = _over_a_step(0.05)
    source = track.copy()
    source[:, 0, 2] = 0.0
    as_animated = lifted(track)
    out = least_jumps([track], [as_animated], [source], lambda tracks, which: [lifted(t) for t in tracks])[0]
    assert np.diff(as_animated[:, 0, 2]).max() >= 0.2 - 1e-9  # the whole step in one frame
    assert np.diff(out[:, 0, 2]).max() <= 0.12
