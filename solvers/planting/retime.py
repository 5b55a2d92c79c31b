# SPDX-License-Identifier: GPL-3.0-or-later
"""A swing that must rise onto higher ground soon after it leaves (a step's edge just ahead of the toe) lifts first
and moves on after: its way across the ground is re-timed, slow at take-off and faster towards landing, so the foot
does not rise the step's height in one frame."""

import numpy as np

#: Powers tried for the re-timing, as animated first: a swing's time t (0 at take-off, 1 at landing) goes to t**power.
POWERS = (1.0, 1.5, 2.0, 3.0)
#: Metres a foot point may move in a frame beyond its move in the source before its swing is re-timed.
JUMP = 0.01


def retimed(track, power: float) -> np.ndarray:
    """(m + 2, K, 3) a swing's K points from take-off to landing (both ends on the ground) with their way across the
    ground re-timed: frame i goes where the swing was at (m + 1) (i / (m + 1)) ** ``power``; heights kept."""
    track = np.asarray(track, np.float64)
    steps = len(track) - 1
    at = steps * (np.arange(steps + 1) / steps) ** power
    low = np.minimum(np.floor(at).astype(int), steps - 1)
    weight = (at - low)[:, None, None]
    out = track.copy()
    out[..., :2] = (1.0 - weight) * track[low, :, :2] + weight * track[low + 1, :, :2]
    return out


def jump(track, source) -> float:
    """The most any of the (F, K, 3) ``track``'s points moves in one frame beyond its move in ``source`` (F, K, 3)."""
    moves = np.linalg.norm(np.diff(track, axis=0), axis=-1) - np.linalg.norm(np.diff(source, axis=0), axis=-1)
    return float(moves.max(initial=0.0))


def least_jump(track, lifted_track, source, lifted) -> np.ndarray:
    """The swing ``track`` (m + 2, K, 3), from take-off to landing, as ``lifted`` (a track -> the track risen over
    what it would pass through; ``lifted_track`` for ``track`` itself) has it at the power of :data:`POWERS` whose
    result jumps least beyond ``source`` (m + 2, K, 3); as animated wherever that is within :data:`JUMP`."""
    best, most = lifted_track, jump(lifted_track, source)
    for power in POWERS[1:]:
        if most <= JUMP:
            break
        trial = lifted(retimed(track, power))
        if (trial_jump := jump(trial, source)) < most:
            best, most = trial, trial_jump
    return best
