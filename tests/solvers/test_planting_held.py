# SPDX-License-Identifier: GPL-3.0-or-later
"""Which frames of a foot down on the ground hold it there (:mod:`solvers.planting.held`)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from solvers.planting.held import held_part

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
