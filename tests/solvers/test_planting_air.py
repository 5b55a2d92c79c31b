# SPDX-License-Identifier: GPL-3.0-or-later
"""A knee in the air bends as animated give or take an eased difference (:mod:`solvers.planting.air`: ``bend_in_air``)
and turns gently (``gentle_knees``, ``gentle_swing``), against the law of cosines."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from solvers.planting.air import bend, bend_in_air, beyond, extension, gentle_knees, gentle_swing
from solvers.planting.surface import clearing_lift
from solvers.planting.timeline import intervals, smoothstep

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
def test_a_swing_the_take_cuts_off_eases_back_to_its_animated_bend(swing):
    """A swing running into the take's first or last frame has no take-off or landing there: its knee eases from the
    bend planting gave the stance it leaves (or lands on) to the animated one at the take's end, instead of keeping
    that stance's difference to the end (a gallop's leg 14° straighter than animated through its whole last swing)."""
    held, hips, ankles, animated, thigh, shin = swing
    frames = len(held)
    moved = bend_in_air(held, np.zeros(frames, bool), hips, ankles, animated, thigh, shin, thigh + shin)
    given = bend(np.linalg.norm(ankles - hips, axis=1), thigh, shin) - bend(animated, thigh, shin)
    out = bend(np.linalg.norm(moved - hips, axis=1), thigh, shin) - bend(animated, thigh, shin)
    if not held.any():
        return
    for first, last in intervals(~held):
        weights = smoothstep((np.arange(first, last + 1) - first + 1) / (last - first + 2))
        if last == frames - 1 and first > 0:  # from the take-off to the take's end
            assert (np.abs(out[first:]) <= np.abs(given[first - 1]) * (1.0 - weights) + 1e-7).all()
        if first == 0 and last < frames - 1:  # from the take's start to the landing
            assert (np.abs(out[: last + 1]) <= np.abs(given[last + 1]) * weights + 1e-7).all()


@given(swings())
def test_a_knee_that_turns_gently_already_is_left_alone(swing):
    held, hips, ankles, animated, thigh, shin = swing
    steady = np.radians(40.0) + np.radians(2.0) * np.arange(len(held))  # 2° a frame beyond a steady animated bend
    animated = np.full(len(held), extension(np.radians(30.0), thigh[0], shin[0]))
    ankles = ankles / np.linalg.norm(ankles, axis=1, keepdims=True) * extension(steady, thigh, shin)[:, None]
    assert not gentle_knees(held, hips, ankles, animated, thigh, shin, MOST).any()


def _step_up(frames, height, riser, held_frames):
    """A leg swinging 1.2 m forward with its hip, held ``held_frames`` at each end, landing ``height`` up on a step
    whose riser its ankle crosses at ``riser`` (m along): held, hips, ankles, animated distances, thigh, shin and the
    step's height over each frame's ankle (-inf before the riser)."""
    thigh = shin = np.full(frames, 0.45)
    held = np.zeros(frames, bool)
    held[:held_frames] = held[-held_frames:] = True
    hips = np.column_stack([np.linspace(-0.3, 0.3, frames), np.zeros(frames), np.full(frames, 0.85)])
    animated = extension(np.radians(20.0 + 40.0 * np.sin(np.linspace(0.0, np.pi, frames)) ** 2), thigh, shin)
    along = np.linspace(-0.6, 0.6, frames)
    ankles = np.column_stack([along, np.zeros(frames), 0.85 - np.sqrt(animated**2 - (along - hips[:, 0]) ** 2)])
    ankles[-held_frames:, 2] += height
    return held, hips, ankles, animated, thigh, shin, np.where(along > riser, height, -np.inf)


def _turns(hips, ankles, animated, thigh, shin) -> float:
    return np.abs(np.diff(beyond(hips, ankles, animated, thigh, shin))).max()


@given(st.integers(10, 30), st.floats(0.05, 0.3), st.floats(-0.5, 0.5), st.integers(1, 4))
def test_a_foot_stepping_up_clears_the_step_its_knee_turning_no_faster_than_lifted_after(
    frames, height, riser, held_frames
):
    held, hips, ankles, animated, thigh, shin, step = _step_up(frames, height, riser, held_frames)
    leg = (animated, thigh, shin)

    def sinking(offsets):
        return np.where(held, 0.0, np.maximum(step - (ankles + offsets)[:, 2], 0.0))

    offsets, need = gentle_swing(held, hips, ankles, *leg, MOST, sinking)
    assert np.isfinite(offsets).all() and not offsets[held].any()
    assert np.allclose(need, sinking(offsets))
    swung = ankles + offsets
    swung[:, 2] += clearing_lift(need, held, 2.0)
    assert (sinking(swung - ankles) <= 1e-9).all()
    # Bent gently first and then lifted over the step, as planting did before.
    gentle = ankles + gentle_knees(held, hips, ankles, *leg, MOST)
    gentle[:, 2] += clearing_lift(sinking(gentle - ankles), held, 2.0)
    assert _turns(hips, swung, *leg) <= max(MOST, _turns(hips, gentle, *leg)) + 1e-9


def test_a_foot_stepping_up_early_bends_its_knee_early_enough():
    """Its ankle crosses the riser a third of the way into its swing, 20 cm up: bent at 6° a frame it would be in
    the step there, and lifted over it its knee turned 9.7° in a frame; bent sooner, 6.0°."""
    held, hips, ankles, animated, thigh, shin, step = _step_up(16, 0.2, -0.1, 2)

    def sinking(offsets):
        return np.where(held, 0.0, np.maximum(step - (ankles + offsets)[:, 2], 0.0))

    offsets, need = gentle_swing(held, hips, ankles, animated, thigh, shin, MOST, sinking)
    assert not need.any()
    assert _turns(hips, ankles + offsets, animated, thigh, shin) <= MOST + 1e-9
    gentle = ankles + gentle_knees(held, hips, ankles, animated, thigh, shin, MOST)
    gentle[:, 2] += clearing_lift(sinking(gentle - ankles), held, 2.0)
    assert _turns(hips, gentle, animated, thigh, shin) > np.radians(9.0)
