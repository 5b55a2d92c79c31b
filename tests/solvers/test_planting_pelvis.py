# SPDX-License-Identifier: GPL-3.0-or-later
"""How high the body goes between stances and flights (:func:`solvers.planting.pelvis.body_height`), and how fast it
rises or sinks over a standing leg, or with the ground under its foot (:func:`solvers.planting.pelvis.knee_guard`)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from solvers.planting.air import bend, extension
from solvers.planting.pelvis import KNEE_TURN, body_height, knee_guard
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


@st.composite
def rising_stances(draw):
    """Two legs standing on fixed ankles (a few centimetres off under their hips, nearly straight) while the body
    rises by 0-4 cm a frame, each leg held over random runs and animated bent 5-60°, turning up to 8° a frame.
    Returns hips, ankles, animated distances, thigh, shin (F, n) and held."""
    frames = draw(st.integers(3, 40))
    thigh, shin = draw(st.floats(0.35, 0.5)), draw(st.floats(0.35, 0.5))
    rises = np.cumsum(draw(st.lists(st.floats(0.0, 0.04), min_size=frames, max_size=frames)))
    start = draw(st.floats(0.85, 0.99)) * (thigh + shin)
    offsets = np.array(draw(st.lists(st.floats(-0.05, 0.05), min_size=4, max_size=4))).reshape(2, 2)
    ankles = np.zeros((frames, 2, 3))
    ankles[..., :2] = offsets
    hips = np.zeros((frames, 2, 3))
    hips[..., 2] = (start + rises)[:, None]
    turns = np.array(draw(st.lists(st.floats(-8.0, 8.0), min_size=2 * frames, max_size=2 * frames)))
    bends = np.radians(np.clip(30.0 + np.cumsum(turns.reshape(frames, 2), axis=0), 5.0, 60.0))
    held = np.array(draw(st.lists(st.booleans(), min_size=2 * frames, max_size=2 * frames))).reshape(frames, 2)
    lengths = np.full((frames, 2), thigh), np.full((frames, 2), shin)
    return hips, ankles, extension(bends, thigh, shin), *lengths, held


@given(rising_stances(), st.floats(0.0, 6.0))
def test_a_rising_body_never_snaps_a_standing_knee_straight(stance, sigma):
    hips, ankles, animated, thigh, shin, held = stance
    drop = knee_guard(hips, ankles, animated, thigh, shin, held, sigma, lower=True)
    assert np.isfinite(drop).all() and (drop >= 0.0).all()
    lowered = hips - drop[:, None, None] * np.array([0.0, 0.0, 1.0])
    beyond = bend(np.linalg.norm(lowered - ankles, axis=-1), thigh, shin) - bend(animated, thigh, shin)
    turned = beyond[1:] - beyond[:-1]
    both = held[1:] & held[:-1]
    rose = np.diff(lowered[:, 0, 2]) > 1e-12
    assert (turned[both & rose[:, None]] >= -KNEE_TURN - 1e-6).all()  # or held level: the motion's own turn
    body = lowered[:, 0, 2]
    assert (body[1:] >= np.minimum(body[:-1], hips[1:, 0, 2]) - 1e-12).all()  # held from rising, never pushed down
    if not both.any():
        assert not drop.any()  # no knee stands two frames running: nothing to hold down


def test_a_body_that_rises_as_the_legs_allow_is_left_alone():
    frames = 30
    thigh = shin = np.full((frames, 1), 0.45)
    ankles = np.zeros((frames, 1, 3))
    bends = np.radians(np.linspace(40.0, 10.0, frames))[:, None]  # the leg straightens 1° a frame, as animated
    hips = np.zeros((frames, 1, 3))
    hips[:, 0, 2] = extension(bends[:, 0], 0.45, 0.45)
    drop = knee_guard(hips, ankles, extension(bends, 0.45, 0.45), thigh, shin, np.ones((frames, 1), bool), 3.0, True)
    assert not drop.any()


@given(rising_stances(), st.floats(0.0, 6.0), st.floats(0.0, 0.1))
def test_a_sinking_body_never_folds_a_standing_knee_and_keeps_within_reach(stance, sigma, spare):
    hips, ankles, animated, thigh, shin, held = stance
    sunk = hips[:, 0, 2] - hips[0, 0, 2]
    hips = hips.copy()  # the body sinks 0-4 cm a frame over the feet, from nearly straight legs
    hips[..., 2] = (0.99 * (thigh[0, 0] + shin[0, 0]) - sunk)[:, None]
    room = np.full(len(hips), spare)
    rise = knee_guard(hips, ankles, animated, thigh, shin, held, sigma, lower=False, room=room)
    assert np.isfinite(rise).all() and (rise >= 0.0).all() and (rise <= room + 1e-12).all()
    raised = hips + rise[:, None, None] * np.array([0.0, 0.0, 1.0])
    beyond = bend(np.linalg.norm(raised - ankles, axis=-1), thigh, shin) - bend(animated, thigh, shin)
    body = raised[:, 0, 2]
    sank = np.diff(body) < -1e-12
    held_up = np.isclose(rise, room)[1:]  # as high as every standing leg reaches: no higher
    both = held[1:] & held[:-1]
    assert (np.diff(beyond, axis=0)[both & (sank & ~held_up)[:, None]] <= KNEE_TURN + 1e-6).all()
    assert (body[1:] <= np.maximum(body[:-1], hips[1:, 0, 2]) + 1e-12).all()  # held from sinking, never pushed up


@st.composite
def sliding_stances(draw):
    """One leg standing under a body that stays, its foot carried up or down 0-3 cm a frame by the ground under it
    (an in-place cycle's foot sliding back over a slope), animated bent 5-60° and turning up to 3° a frame.
    Returns hips, ankles, animated distances, thigh and shin (F, 1), and whether the ground rises."""
    frames = draw(st.integers(3, 30))
    thigh, shin = draw(st.floats(0.35, 0.5)), draw(st.floats(0.35, 0.5))
    rises = draw(st.booleans())
    steps = np.array(draw(st.lists(st.floats(0.0, 0.03), min_size=frames, max_size=frames)))
    turns = np.array(draw(st.lists(st.floats(-3.0, 3.0), min_size=frames, max_size=frames)))
    bends = np.radians(np.clip(draw(st.floats(5.0, 60.0)) + np.cumsum(turns), 5.0, 60.0))[:, None]
    animated = extension(bends, thigh, shin)
    ankles = np.zeros((frames, 1, 3))
    ankles[:, 0, 2] = np.cumsum(steps if rises else -steps)
    hips = np.zeros((frames, 1, 3))
    hips[:, 0, 2] = ankles[0, 0, 2] + animated[0, 0]  # where the leg stands as animated on the first frame
    return hips, ankles, animated, np.full((frames, 1), thigh), np.full((frames, 1), shin), rises


@given(sliding_stances(), st.floats(0.0, 6.0))
def test_the_body_follows_a_foot_whose_ground_turns_its_knee(stance, sigma):
    """Ground rising under a standing foot bends its knee, ground falling straightens it, with the body where it is: the
    guard moves the body with the foot (up, or down) so the knee turns no more than the limit in a frame beyond its
    animated turn, no faster than it is let (here as fast as the ground moves), and lets go no faster either (a move let
    go at once where a leg stops reaching dropped the Quaternius horse's galloping body 373 mm in a frame); let move no
    faster than nothing, it holds the body where it was. (The 0 A.D. horse's trot in place, planted on a slope: a
    straight front leg bent 28.7° in a frame as its hoof slid back over the slope, the body held.)"""
    hips, ankles, animated, thigh, shin, rises = stance
    held = np.ones((len(hips), 1), bool)
    fastest = 0.03  # the most the ground moves the foot in a frame
    move = knee_guard(hips, ankles, animated, thigh, shin, held, sigma, lower=not rises, fastest=fastest)
    assert np.isfinite(move).all() and (move >= 0.0).all()
    way = 1.0 if rises else -1.0
    moved = hips + (way * move)[:, None, None] * np.array([0.0, 0.0, 1.0])
    turned = np.diff(bend(np.linalg.norm(moved - ankles, axis=-1), thigh, shin) - bend(animated, thigh, shin), axis=0)
    assert (way * turned <= KNEE_TURN + 1e-6).all()
    assert (way * np.diff(moved[:, 0, 2]) <= fastest + 1e-9).all()  # its way; back, as it lets go, it eases
    assert (np.diff(move) >= -fastest - 1e-9).all()  # and lets go no faster than it may move its way
    assert not knee_guard(hips, ankles, animated, thigh, shin, held, sigma, lower=not rises).any()


def _worst(hips, before, ankles, animated, thigh, shin, legs, frame) -> float:
    """The most any of ``legs`` turns its knee at ``frame`` beyond its animated turn past :data:`KNEE_TURN`, its hip at
    ``hips`` there and at ``before`` the frame before."""
    wanted = bend(animated, thigh, shin)
    last = bend(np.linalg.norm(before - ankles[frame - 1], axis=-1), thigh[frame - 1], shin[frame - 1])
    now = bend(np.linalg.norm(hips - ankles[frame], axis=-1), thigh[frame], shin[frame])
    turned = (now - wanted[frame]) - (last - wanted[frame - 1])
    return float(np.maximum(np.abs(turned[legs]) - KNEE_TURN, 0.0).max(initial=0.0))


@given(rising_stances(), st.floats(0.0, 6.0), st.booleans())
def test_the_guard_never_turns_the_standing_knees_further_past_the_limit(stance, sigma, lower):
    """The body moved for one standing leg's knee moves the others' too: at no frame does the worst turn beyond the
    limit, among the legs standing there and the frame before, come out worse than with the body left where it was
    at that frame. (The wolf's gallop lowered its body 33.7 mm for a front leg straightening less than its take's,
    and its partner's knee bent 20.8° in a frame for it.)"""
    hips, ankles, animated, thigh, shin, held = stance
    move = knee_guard(hips, ankles, animated, thigh, shin, held, sigma, lower=lower)
    moved = hips + ((-1.0 if lower else 1.0) * move)[:, None, None] * np.array([0.0, 0.0, 1.0])
    both = held[1:] & held[:-1]
    for frame in range(1, len(hips)):
        legs = both[frame - 1]
        args = ankles, animated, thigh, shin, legs, frame
        assert _worst(moved[frame], moved[frame - 1], *args) <= _worst(hips[frame], moved[frame - 1], *args) + 1e-9


def test_a_body_lowered_for_one_front_leg_shares_the_turn_with_its_partner():
    """Two standing legs under a body rising 3 cm in a frame: the first, on a fixed ankle, is animated to bend 15° more
    in that frame (the gallop's landing leg, raised onto the ground, turning 26° less than its take's); the second's
    ankle rises with the body, nearly straight as animated. Lowered to hold the first, the body would bend the second
    past the limit: it goes down part of the way, the worst of the two turns beyond the limit least."""
    frames, length = 6, 0.4
    thigh = shin = np.full((frames, 2), length)
    rise = np.where(np.arange(frames) >= 3, 0.03, 0.0)
    hips = np.zeros((frames, 2, 3))
    hips[..., 2] = (0.7 + rise)[:, None]
    bends = np.radians(np.where(np.arange(frames)[:, None] >= 3, [45.0, 10.0], [30.0, 10.0]))
    ankles = np.zeros((frames, 2, 3))
    ankles[:, 0, 2] = 0.7 - extension(np.radians(50.0), length, length)
    ankles[:, 1, 2] = hips[:, 1, 2] - extension(np.radians(10.0), length, length)
    animated = extension(bends, length, length)
    drop = knee_guard(hips, ankles, animated, thigh, shin, np.ones((frames, 2), bool), 3.0, True)
    lowered = hips - drop[:, None, None] * np.array([0.0, 0.0, 1.0])
    args = ankles, animated, thigh, shin
    each = [
        _worst(lowered[3], lowered[2], *args, [True, False], 3),
        _worst(lowered[3], lowered[2], *args, [False, True], 3),
    ]
    assert 0.005 < drop[3] < 0.03  # part of the way
    assert max(each) < _worst(hips[3], lowered[2], *args, [True, True], 3)  # better than not moving
    assert abs(each[0] - each[1]) < np.radians(3.0)  # shared: neither far worse than the other
