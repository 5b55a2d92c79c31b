# SPDX-License-Identifier: GPL-3.0-or-later
"""The foot lock (``solvers.planting.contacts.lock_offsets``) on generated soles: it holds a standing foot's
holding point still, and never jolts a foot rolling off its toe by more than a standing point moves in a frame."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.planting.contacts import BALL, holders, lock_offsets

SOLES = settings(max_examples=max(settings().max_examples, 50))


@st.composite
def soles(draw):
    """(F, 3, 2) heel, ball and tip wandering a few millimetres a frame, with now and then a step of centimetres
    (a toe rolling off as the foot leaves, a noisy marker), and (F, 3) which of them stand."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frames = draw(st.integers(3, 60))
    steps = rng.normal(scale=0.002, size=(frames, 3, 2))
    jumps = rng.random((frames, 3)) < draw(st.floats(0.0, 0.3))
    steps[jumps] *= 15.0
    stance = rng.random((frames, 3)) < draw(st.floats(0.3, 1.0))
    return np.cumsum(steps, axis=0), stance


def _rolling(stance) -> np.ndarray:
    """(F,) frames a foot stands after its ball has stood in that stance, its ball no longer down: rolling off."""
    out, stood = np.zeros(len(stance), bool), False
    for frame, points in enumerate(stance):
        stood = stood and points.any()
        out[frame] = stood and points.any() and not points[BALL]
        stood = stood or points[BALL]
    return out


@SOLES
@given(soles(), st.floats(0.001, 0.05), st.one_of(st.just(np.inf), st.floats(0.005, 0.2)))
def test_a_foot_rolling_off_its_toe_is_moved_no_faster_than_a_standing_point(take, fastest, most):
    """Between two standing frames, the foot rolling off its toe, the correction changes by no more than
    ``fastest``: a longer step of the toe goes with the foot, and the cap ``most`` only shortens a
    correction."""
    sole, stance = take
    offsets = lock_offsets(sole, stance, 3.0, most, fastest)
    standing = stance.any(axis=1)
    both = standing[1:] & standing[:-1] & _rolling(stance)[1:]
    change = np.linalg.norm(np.diff(offsets, axis=0), axis=1)
    assert (change[both] <= fastest + 1e-12).all()
    assert (np.linalg.norm(offsets, axis=1) <= most + 1e-12).all()


@SOLES
@given(soles())
def test_the_lock_holds_the_holding_point_where_it_stood(take):
    """Uncapped, the holding point of every standing frame is where it was the frame before, unless the foot
    is rolling off its toe with a step longer than a standing point takes: then it keeps that step, and
    nothing more."""
    sole, stance = take
    fastest = 0.01
    offsets = lock_offsets(sole, stance, 3.0, np.inf, fastest)
    holder, rolling = holders(stance), _rolling(stance)
    standing = stance.any(axis=1)
    for frame in range(1, len(stance)):
        if not (standing[frame] and standing[frame - 1]):
            continue
        point = holder[frame]
        step = sole[frame, point] - sole[frame - 1, point]
        moved = sole[frame, point] + offsets[frame] - sole[frame - 1, point] - offsets[frame - 1]
        expected = step if rolling[frame] and np.linalg.norm(step) > fastest else np.zeros(2)
        assert np.allclose(moved, expected, atol=1e-12), (frame, moved, step)
