# SPDX-License-Identifier: GPL-3.0-or-later
"""A cycle in place that loops is planted as a loop (``solvers.planting.loops``): what plays on repeat has no seam.

The loops are cut from the synthetic walker (:mod:`walker`) without its capture noise, so that every stride is the
same: a whole number of strides, its last frame its first again, walked in place and planted on a plane of any slope
or a step.
"""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from terrain import Plane, Step
from test_planting import budget, in_place
from walker import gaits, walk

from solvers.planting import Legs, PlantSettings, plant
from solvers.planting.loops import period, tracked


def waves(frames: int, loop: int, points: int, seed: int) -> np.ndarray:
    """(frames, points, 3) smooth motion that repeats every ``loop`` frames: sums of its first three harmonics."""
    rng = np.random.default_rng(seed)
    t = 2.0 * math.pi * np.arange(frames) / loop
    out = np.zeros((frames, points, 3))
    for k in (1, 2, 3):
        amplitude, phase = rng.uniform(0.01, 0.3, (points, 3)), rng.uniform(0.0, 2.0 * math.pi, (points, 3))
        out += amplitude / k * np.sin(k * t[:, None, None] + phase)
    return out


@given(loop=st.integers(12, 60), points=st.integers(7, 13), seed=st.integers(0, 2**16))
def test_a_loop_is_read_by_its_seam(loop, points, seed):
    """A take whose last frame is its first again loops over one frame less than it has; one whose last frame runs on
    into its first as any frame into the next loops over all of them."""
    motion = waves(loop + 1, loop, points, seed)
    assert period(motion) == loop
    assert period(motion[:loop]) == loop


@pytest.mark.parametrize("loop", range(12, 61, 8))
@pytest.mark.parametrize("seed", range(5))
def test_a_take_cut_off_short_of_its_loop_is_no_loop(loop, seed):
    """Cut a quarter of the loop short, its last frame does not run on into its first: no loop (the motion of two
    legs' ankles, balls and hips and the pelvis' height, seven points)."""
    motion = waves(loop, loop, 7, seed)
    assert period(motion[: loop - loop // 4]) is None


def looping_walk(gait, strides: int = 4) -> Legs:
    """The legs of ``gait`` without capture noise, walked in place, over one stride from the middle of ``strides``:
    its last frame is its first again."""
    per_stride = max(round(gait.period * gait.fps), 8)
    gait = dataclasses.replace(
        gait,
        period=per_stride / gait.fps,
        seconds=strides * per_stride / gait.fps,
        jitter=0.0,
        dips=0,
        slide=0.0,
    )
    legs = in_place(walk(gait).legs)
    first = (strides // 2) * per_stride
    cut = slice(first, first + per_stride + 1)
    return dataclasses.replace(
        legs,
        **{name: getattr(legs, name)[cut] for name in ("foot", "ball", "tip", "toe", "hip", "pelvis", "thigh", "shin")},
    )


@budget()
@given(
    gait=gaits(),
    ground=st.sampled_from(["slope", "step"]),
    slope=st.floats(3.0, 12.0),
    direction=st.floats(0.0, 2.0 * math.pi),
)
def test_a_cycle_in_place_that_loops_still_loops_planted(gait, ground, slope, direction):
    """A walk or jog cycle in place whose last frame is its first again, planted on a slope rising any way or across a
    20 cm step: the planted feet and body at its last frame are where they are at its first, within a millimetre, so it
    plays on repeat without a jump (with one loop planted either way, not two, up to 18 mm). Planted as a take
    with two ends, a foot stood on one level at the first frame and on the other at the last: 200 mm."""
    try:
        legs = looping_walk(gait)
    except ValueError:  # a stride too long for these legs
        return
    assert period(tracked(legs)) == len(legs.ball) - 1
    origin = tuple(legs.pelvis[0, :2])
    if ground == "slope":
        surface = Plane(slope=math.radians(slope), direction=direction, base=gait.floor, origin=origin)
    else:
        surface = Step(rise=0.2, direction=direction, base=gait.floor, origin=origin)
    planted = plant(legs, surface, PlantSettings(fps=gait.fps, floor=gait.floor))
    feet = np.abs(planted.foot[-1, :, :3, 3] - planted.foot[0, :, :3, 3]).max()
    body = np.abs(planted.body[-1] - planted.body[0]).max()
    assert feet <= 1e-3 and body <= 1e-3, f"the seam: feet {1e3 * feet:.1f} mm, body {1e3 * body:.1f} mm"
