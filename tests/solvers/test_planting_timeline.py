# SPDX-License-Identifier: GPL-3.0-or-later
"""The timeline helpers planting is built on (``solvers.planting.timeline``) and the contact level
(``solvers.planting.contacts.contact_level``), against definitions of our own."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from solvers.planting.contacts import contact_level
from solvers.planting.timeline import clean, ease_jumps, envelope, fill_gaps, intervals, smooth, smooth_above

EXAMPLES = max(settings.default.max_examples // 4, 20)
quick = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)

sigmas = st.floats(0.5, 8.0)
signals = hnp.arrays(np.float64, st.integers(2, 120), elements=st.floats(-10.0, 10.0, width=64))
masks = hnp.arrays(bool, st.integers(1, 80))


def reach(sigma: float) -> int:
    """Frames a smoothing of ``sigma`` reaches to either side."""
    return int(math.ceil(3.0 * sigma))


# ---------------------------------------------------------------------------------------------
# smooth


@quick
@given(signals, sigmas)
def test_smooth_stays_within_the_values(values, sigma):
    """Each output is a weighted mean of inputs (the ends held), so it lies within their range."""
    out = smooth(values, sigma)
    assert out.shape == values.shape
    assert (out >= values.min() - 1e-9).all() and (out <= values.max() + 1e-9).all()


@quick
@given(st.integers(2, 120), st.floats(-5.0, 5.0), st.floats(-1.0, 1.0), sigmas)
def test_smooth_keeps_a_line_away_from_the_ends(frames, start, slope, sigma):
    values = start + slope * np.arange(frames)
    out = smooth(values, sigma)
    inner = slice(reach(sigma), frames - reach(sigma))
    np.testing.assert_allclose(out[inner], values[inner], rtol=0.0, atol=1e-9)


def test_smooth_holds_a_constant_and_copies_without_sigma():
    values = np.full(30, 2.5)
    np.testing.assert_allclose(smooth(values, 3.0), values, rtol=0.0, atol=1e-12)
    ramp = np.arange(10.0)
    out = smooth(ramp, 0.0)
    np.testing.assert_array_equal(out, ramp)
    assert out is not ramp


def test_smooth_holds_the_edge_values():
    """A jump at the very last frame is not extrapolated beyond it: the end stays between the values."""
    values = np.zeros(40)
    values[-1] = 1.0
    out = smooth(values, 4.0)
    assert 0.0 < out[-1] < 1.0
    assert out[0] == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# envelope and smooth_above


@quick
@given(signals, sigmas)
def test_envelope_is_never_below(values, sigma):
    assert (envelope(values, sigma) >= values).all()


def test_envelope_eases_around_a_spike():
    values = np.zeros(60)
    values[30] = 1.0
    out = envelope(values, 3.0)
    assert out[30] == 1.0
    assert 0.0 < out[27] < 1.0 and 0.0 < out[33] < 1.0  # raised before and after, not jumping
    assert out[0] == pytest.approx(0.0, abs=1e-9) and out[-1] == pytest.approx(0.0, abs=1e-9)


@quick
@given(signals, sigmas)
def test_smooth_above_is_never_below(values, sigma):
    assert (smooth_above(values, sigma) >= values - 1e-12).all()


@quick
@given(signals, sigmas, st.floats(0.0, 0.5))
def test_eased_jumps_are_never_below_nor_above_what_the_jumps_reach_nearby(values, sigma, steady):
    """The eased jumps (what :func:`ease_jumps` adds to the steady changes) are at or above the jumps, and at or
    below the highest they reach within round(2 sigma) frames: a held foot's ground that steps up 20 cm as its short
    run starts is eased into before the step and held there after it. Smoothed from above alone, it carried on
    rising to the run's end: the dash played backwards stood its foot 4.7 cm above the step after landing on it."""
    values = np.asarray(values, dtype=np.float64)
    change = np.diff(values)
    jumps = np.concatenate([[0.0], np.cumsum(change - np.clip(change, -steady, steady))])
    eased = ease_jumps(values, np.full(len(change), steady), sigma) - (values - jumps)
    window = max(int(round(2.0 * sigma)), 1)
    near = [jumps[max(i - window, 0) : i + window + 1].max() for i in range(len(jumps))]
    assert (eased >= jumps - 1e-9).all()
    assert (eased <= np.array(near) + 1e-9).all()


def test_a_step_at_the_start_of_a_short_run_is_held_after_it():
    out = ease_jumps(np.array([0.003, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]), np.full(6, 0.01), 3.0)
    assert 0.003 < out[0] < 0.2
    assert out[1:] == pytest.approx(0.2)


@quick
@given(st.integers(2, 150), st.floats(-5.0, 5.0), st.floats(-1.0, 1.0), sigmas)
def test_smooth_above_keeps_a_line_away_from_the_ends(frames, start, slope, sigma):
    """Exact on steady change: the smoothing reaches ceil(3 sigma) frames, what it leaves below the
    line at the ends is widened by round(2 sigma) and smoothed again."""
    values = start + slope * np.arange(frames)
    margin = 2 * reach(sigma) + max(int(round(2.0 * sigma)), 1)
    assume(frames > 2 * margin)
    out = smooth_above(values, sigma)
    np.testing.assert_allclose(out[margin:-margin], values[margin:-margin], rtol=0.0, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# fill_gaps


@quick
@given(
    hnp.arrays(np.float64, st.tuples(st.integers(1, 60), st.integers(1, 3)), elements=st.floats(-10.0, 10.0)),
    st.data(),
)
def test_fill_gaps_interpolates_between_valid_frames(values, data):
    valid = data.draw(hnp.arrays(bool, len(values)))
    out = fill_gaps(values, valid)
    if not valid.any():
        np.testing.assert_array_equal(out, values)
        return
    np.testing.assert_array_equal(out[valid], values[valid])
    good = np.flatnonzero(valid)
    for frame in np.flatnonzero(~valid):
        before, after = good[good < frame], good[good > frame]
        if not len(before):
            expected = values[after[0]]
        elif not len(after):
            expected = values[before[-1]]
        else:
            a, b = before[-1], after[0]
            expected = values[a] + (values[b] - values[a]) * (frame - a) / (b - a)
        np.testing.assert_allclose(out[frame], expected, rtol=0.0, atol=1e-9)


def test_fill_gaps_leaves_its_input_alone():
    values = np.array([1.0, 0.0, 3.0])
    fill_gaps(values, [True, False, True])
    np.testing.assert_array_equal(values, [1.0, 0.0, 3.0])


# ---------------------------------------------------------------------------------------------
# intervals and clean, against plain loops


def runs_of(mask) -> list[tuple[int, int]]:
    out, start = [], None
    for i, m in enumerate(list(mask) + [False]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            out.append((start, i - 1))
            start = None
    return out


def cleaned(mask, min_frames: int, max_gap: int) -> list[bool]:
    mask = [bool(m) for m in mask]
    for first, last in runs_of([not m for m in mask]):
        if first > 0 and last < len(mask) - 1 and last - first + 1 <= max_gap:
            mask[first : last + 1] = [True] * (last - first + 1)
    for first, last in runs_of(mask):
        if last - first + 1 < min_frames:
            mask[first : last + 1] = [False] * (last - first + 1)
    return mask


@quick
@given(masks)
def test_intervals_are_the_runs(mask):
    assert intervals(mask) == runs_of(mask)


@quick
@given(masks, st.integers(1, 6), st.integers(0, 4))
def test_clean_fills_inner_gaps_then_drops_short_runs(mask, min_frames, max_gap):
    assert clean(mask, min_frames, max_gap).tolist() == cleaned(mask, min_frames, max_gap)


def test_clean_examples():
    mask = np.array([1, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1], bool)
    assert clean(mask, 3, 1).astype(int).tolist() == [1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1]
    assert clean(mask, 3, 0).astype(int).tolist() == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]
    assert clean([0, 1, 1, 1], 2, 5).tolist() == [False, True, True, True]  # a gap at the start stays


# ---------------------------------------------------------------------------------------------
# contact_level


@quick
@given(
    st.integers(20, 200),
    st.floats(-0.5, 0.5),
    st.floats(0.0, 0.002),
    st.integers(1, 2),
    st.floats(0.016, 0.05),
    st.data(),
)
def test_a_glitch_of_a_frame_or_two_is_not_the_level(frames, rest, jitter, length, depth, data):
    """A point resting at ``rest`` (jittering by up to 2 mm) that dips once, for one or two frames,
    more than the tolerance below it: its level is its lowest resting height (within its jitter), not the dip's."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    height = rest + rng.uniform(0.0, jitter, frames)
    at = data.draw(st.integers(0, frames - length))
    resting = np.delete(height, range(at, at + length)).min()
    height[at : at + length] = resting - depth
    assert resting <= contact_level(height, 3, 0.015) <= resting + jitter


def test_a_point_that_rests_is_at_its_level():
    height = np.concatenate([np.full(10, 0.3), np.linspace(0.3, 0.02, 5), np.full(10, 0.02)])
    assert contact_level(height, 4, 0.015) == pytest.approx(0.02)


def test_a_point_that_never_rests_takes_its_lowest():
    height = np.linspace(1.0, 0.0, 5)
    assert contact_level(height, 3, 0.001) == 0.0


@quick
@given(st.integers(2, 6), st.integers(3, 8), st.floats(0.3, 1.0), st.floats(-0.1, 0.1), st.integers(2, 3), st.data())
def test_a_swing_resting_only_at_its_top_is_not_on_its_floor(cycles, apex, leg, floor, touch, data):
    """A gallop's hoof: it hangs still for ``apex`` frames at the top of each swing, a third of its ``leg`` or more
    over its floor, and touches the floor for two or three frames going through it (never resting there). Its level
    is where it goes lowest, not the top of its swing; with no bound on a rest's height it would be that top."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    top = floor + leg * data.draw(st.floats(1.0 / 3.0, 1.0))
    height = []
    for _ in range(cycles):
        down = floor - rng.uniform(0.01, 0.06, touch)  # through the floor, more than the tolerance apart
        down[1::2] += 0.02
        rising = np.linspace(floor, top, 5)[1:-1]
        height += [*down, *rising, *(top + rng.uniform(0.0, 0.002, apex)), *rising[::-1]]
    height = np.array(height)
    assert contact_level(height, 3, 0.015) >= top - 1e-9
    assert contact_level(height, 3, 0.015, highest=0.25 * leg) == height.min()


@quick
@given(st.floats(0.3, 1.0), st.floats(-0.1, 0.1), st.floats(0.03 / 0.3, 0.249))
def test_a_rest_within_the_bound_is_still_the_level(leg, floor, up):
    """A foot resting a while at its floor and at the top of its swing: the bound on a rest's height leaves the
    floor its level; and a rest no higher than the bound over where the foot goes is a level too."""
    swing = np.concatenate([np.full(6, floor), np.linspace(floor, floor + leg, 6), np.full(6, floor + leg)])
    assert contact_level(swing, 3, 0.015, highest=0.25 * leg) == pytest.approx(floor)
    rest = floor - 0.03 + up * leg  # over a two-frame dip to floor - 3 cm
    dip = np.concatenate([np.full(8, rest), [floor - 0.03, floor - 0.03], np.full(8, rest)])
    assert contact_level(dip, 3, 0.015, highest=0.25 * leg) == pytest.approx(rest)


def test_isolated_one_frame_glitches_are_not_the_level():
    """Three single-frame dips, seconds apart and each as short as the one above that is ignored."""
    height = np.full(240, 0.02)
    height[[40, 120, 200]] = [-0.010, -0.012, -0.008]
    assert contact_level(height, 3, 0.015) == 0.02
