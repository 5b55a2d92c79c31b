# SPDX-License-Identifier: GPL-3.0-or-later
"""Signals over frames: runs of a mask, centred smoothing, smooth envelopes, gaps filled."""

import numpy as np

#: Frames: a Gaussian narrower than this gives its neighbours no weight in float64 (exp(-0.5 / 0.02²) is 0).
NARROWEST = 0.02


def smoothstep(x) -> np.ndarray:
    """0 below 0, 1 above 1, and a smooth S in between."""
    x = np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def intervals(mask) -> list[tuple[int, int]]:
    """Runs of True in ``mask`` as (first, last) frame indices, inclusive."""
    mask = np.asarray(mask, bool)
    edges = np.diff(np.concatenate([[False], mask, [False]]).astype(np.int8))
    return list(zip(np.flatnonzero(edges == 1).tolist(), (np.flatnonzero(edges == -1) - 1).tolist()))


def bridges(kept) -> list[tuple[int, int, int, int, np.ndarray]]:
    """Each run of frames not ``kept`` (F,; some kept), as (first, last, before, after, weights): the kept frames
    either side (before the first kept frame, the one after stands for both; after the last, the one before) and
    (last - first + 1,) smoothstep weights easing from ``before`` (0) to ``after`` (1) across the run."""
    frames = len(kept)
    out = []
    for first, last in intervals(~np.asarray(kept, bool)):
        before = first - 1 if first > 0 else last + 1
        after = last + 1 if last < frames - 1 else first - 1
        weights = smoothstep((np.arange(first, last + 1) - first + 1) / (last - first + 2))
        out.append((first, last, before, after, weights))
    return out


def clean(mask, min_frames: int, max_gap: int) -> np.ndarray:
    """``mask`` with inner gaps of up to ``max_gap`` frames filled, then runs shorter than
    ``min_frames`` dropped: a touch of one frame is noise, and so is a one-frame lift."""
    mask = np.array(mask, bool)
    for first, last in intervals(~mask):
        if first > 0 and last < len(mask) - 1 and last - first + 1 <= max_gap:
            mask[first : last + 1] = True
    for first, last in intervals(mask):
        if last - first + 1 < min_frames:
            mask[first : last + 1] = False
    return mask


def smooth(values, sigma: float) -> np.ndarray:
    """Centred Gaussian smoothing along the first axis (no lag); ``sigma`` in frames. Beyond the edges
    the values hold, so nothing is read into the last frames (a jump there stays put)."""
    values = np.asarray(values, dtype=np.float64)
    if sigma < NARROWEST or len(values) < 2:
        return values.copy()
    radius = int(np.ceil(3.0 * sigma))
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    kernel /= kernel.sum()
    pad = [(radius, radius)] + [(0, 0)] * (values.ndim - 1)
    padded = np.pad(values, pad, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, len(kernel), axis=0)
    return windows @ kernel


def envelope(needed, sigma: float) -> np.ndarray:
    """A smooth curve at or above ``needed`` everywhere, easing in and out over about ``sigma``
    frames instead of jumping: a widened maximum, smoothed, never below ``needed``."""
    needed = np.asarray(needed, dtype=np.float64)
    if sigma <= 0.0 or len(needed) < 2 or (needed == needed[0]).all():
        return needed.copy()
    return np.maximum(smooth(widened(needed, sigma), sigma), needed)


def widened(values, sigma: float) -> np.ndarray:
    """(F,) the most of ``values`` (F,) within round(2 ``sigma``) frames either way (at least one); beyond the edges
    the values hold."""
    window = max(int(round(2.0 * sigma)), 1)
    padded = np.pad(np.asarray(values, dtype=np.float64), window, mode="edge")
    return np.lib.stride_tricks.sliding_window_view(padded, 2 * window + 1).max(axis=1)


def fill_gaps(values, valid) -> np.ndarray:
    """``values`` (F, ...) with the frames where ``valid`` is False interpolated linearly in time
    from the valid ones around them (held at the ends); unchanged where nothing is valid."""
    values = np.array(values, dtype=np.float64)
    valid = np.asarray(valid, bool)
    if valid.all() or not valid.any():
        return values
    frames = np.arange(len(values))
    flat = values.reshape(len(values), -1)
    for column in range(flat.shape[1]):
        flat[~valid, column] = np.interp(frames[~valid], frames[valid], flat[valid, column])
    return flat.reshape(values.shape)


def smooth_above(values, sigma: float) -> np.ndarray:
    """``values`` (F,) smoothed over about ``sigma`` frames, centred, and raised wherever that
    would dip below them: exact where they are steady, easing across a jump before and after it,
    never below."""
    smoothed = smooth(values, sigma)
    return smoothed + envelope(np.maximum(np.asarray(values) - smoothed, 0.0), sigma)


def ease_jumps(values, steady, sigma: float) -> np.ndarray:
    """``values`` (F,) with each change between two frames that exceeds ``steady`` (F - 1,), the
    most it can change by itself, eased over about ``sigma`` frames before and after, never
    below and never above the highest the jumps reach within about ``2 * sigma`` frames: the jumps (a step
    function) are smoothed from above, the rest is left exact. (Raised to stay above a step that a short run
    starts with, the smoothing would carry on rising past it to the run's end.)"""
    values = np.asarray(values, dtype=np.float64)
    change = np.diff(values)
    kept = np.clip(change, -steady, steady)
    if np.array_equal(kept, change):
        return values.copy()
    jumps = np.concatenate([[0.0], np.cumsum(change - kept)])
    return values - jumps + np.minimum(smooth_above(jumps, sigma), widened(jumps, sigma))
