# SPDX-License-Identifier: GPL-3.0-or-later
"""Which frames of a foot down on the ground hold it there (:mod:`solvers.planting.held`)."""

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from solvers.planting.held import held_part, landings

runs = st.integers(1, 40).flatmap(lambda m: st.tuples(*(hnp.arrays(bool, m) for _ in range(2))))


@given(runs)
def test_a_run_hanging_at_its_ends_is_held_between_them(run):
    """Frames where the foot hangs on a point that does not stand are a swing at the run's ends only: the rest holds,
    whether the foot stands there or slides."""
    hanging, standing = run
    held = held_part(hanging, standing)
    if hanging.all():
        return
    inside = np.flatnonzero(~hanging)
    expected = np.zeros(len(hanging), bool)
    expected[inside[0] : inside[-1] + 1] = True
    assert (held == expected).all()


@given(st.integers(1, 40).flatmap(lambda m: hnp.arrays(bool, m)))
def test_a_run_hanging_throughout_holds_where_the_foot_stands(standing):
    """A stance on a stair whose toe is over the next tread, no place along the foot with footing, hangs at every
    frame. It used to be a swing: the foot went with its hip, and a body stepping up three treads carried it off
    the ground (the triceratops walking in place on stairs: ball p95 2.7 m; 0.4 m now). Now it holds where the
    foot stands, resting on what holds it up; a run that never stands (a skim over an edge) stays a swing."""
    held = held_part(np.ones(len(standing), bool), standing)
    assert (held == standing).all()


@given(st.integers(3, 30), st.integers(4, 30), st.integers(1, 3), st.floats(0.0, 1.0), st.floats(0.05, 0.5))
@example(stance=3, swing=4, touch=1, where=0.0, stride=0.05)
def test_a_touch_in_a_swing_over_other_ground_is_in_the_air_however_short(stance, swing, touch, where, stride):
    """A swing that touches the ground on its way (a scuff), going forward from its hip against the way the foot goes
    while it stands, is in the air there, for a frame too where that ground is not where it lands: held on a lower
    tread it passes, the foot jumped up the riser to land (the exhausted walk on stairs: 31.4° at the knee in a
    frame; before, a frame's touch was never cut). A frame's touch on the ground it lands on holds (the step's
    upper level, just before the landing). The stances hold."""
    touch = min(touch, swing - 2)
    frames = 2 * stance + swing
    ahead = np.r_[np.linspace(stride, -stride, stance), np.linspace(-stride, stride, swing + 2)[1:-1]]
    ahead = np.r_[ahead, np.linspace(stride, -stride, stance)]
    from_hip = np.stack([ahead, np.zeros(frames)], axis=1)
    standing = np.zeros(frames, bool)
    standing[:stance] = standing[stance + swing :] = True
    first = stance + 1 + round(where * (swing - touch - 2))
    held = standing.copy()
    held[first : first + touch] = True
    tread = np.r_[np.zeros(first + touch), np.full(frames - first - touch, 0.15)]  # the landing's a tread up
    same = np.zeros(frames)
    cut = landings(held, standing, from_hip, tread, 0.03)
    assert cut[first : first + touch].all()
    assert not cut[standing].any()
    assert landings(held, standing, from_hip, same, 0.03)[first] == (touch > 1)
