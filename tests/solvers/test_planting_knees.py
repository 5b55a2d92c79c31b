# SPDX-License-Identifier: GPL-3.0-or-later
"""How far a planted knee turns in a frame beyond the animation's turn (:mod:`solvers.planting.knees`)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from solvers.planting.air import extension
from solvers.planting.knees import knee_turns


def _leg(bends, thigh=0.45, shin=0.4):
    """(F, 1, 3) hips at the origin and ankles straight below them, the knee bent by ``bends`` (radians)."""
    bends = np.asarray(bends, np.float64)
    hips = np.zeros((len(bends), 1, 3))
    ankles = np.zeros_like(hips)
    ankles[:, 0, 2] = -extension(bends, thigh, shin)
    lengths = np.full((len(bends), 1), thigh), np.full((len(bends), 1), shin)
    return hips, ankles, *lengths


@given(st.lists(st.floats(0.0, 3.0), min_size=2, max_size=30), st.lists(st.floats(0.0, 3.0), min_size=30, max_size=30))
def test_a_knee_turns_beyond_the_animation_by_the_difference_of_the_turns(planted, animated):
    animated = animated[: len(planted)]
    hips, ankles, thigh, shin = _leg(planted)
    source_hips, source_ankles, *_ = _leg(animated)
    turns = knee_turns(hips, ankles, source_hips, source_ankles, thigh, shin)
    expected = np.abs(np.diff(planted) - np.diff(animated))[:, None]
    assert turns.shape == (len(planted) - 1, 1) and np.allclose(turns, expected, atol=1e-6)


def test_an_ankle_out_of_reach_leaves_the_knee_straight():
    hips, ankles, thigh, shin = _leg([0.3, 0.3])
    ankles[1, 0, 2] = -5.0  # far beyond the leg's reach: the knee straightens by 0.3 rad, the animation's does not
    assert np.allclose(knee_turns(hips, ankles, hips, _leg([0.3, 0.3])[1], thigh, shin), [[0.3]])
