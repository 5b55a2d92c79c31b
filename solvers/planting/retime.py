# SPDX-License-Identifier: GPL-3.0-or-later
"""A swing that must rise onto higher ground soon after it leaves (a step's edge just ahead of the toe) lifts first
and moves on after: its way across the ground is re-timed, slow at take-off and faster towards landing, so the foot
does not rise the step's height in one frame. One that must come down off higher ground just before it lands (a
landing just past a step's edge) is re-timed the other way: across first, then down."""

import numpy as np

#: Powers tried for the re-timing, as animated first: a swing's time t (0 at take-off, 1 at landing) goes to t**power
#: (above 1: slow at take-off; below 1: slow at landing).
POWERS = (1.0, 1.5, 1 / 1.5, 2.0, 0.5, 3.0, 1 / 3.0)
#: Metres a foot point may move in a frame beyond its move in the source before its swing is re-timed: a jump onto
#: a step, not the centimetre or two of following bumps or a slope (re-timing moves the foot off its animated way).
JUMP = 0.05
#: Metres a re-timing must take off that jump to be worth it.
SAVED = 0.01


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


def least_jumps(tracks, lifted_tracks, sources, lifted) -> list[np.ndarray]:
    """Each swing of ``tracks`` ((m + 2, K, 3) each, from take-off to landing) as ``lifted`` has it at the power of
    :data:`POWERS` whose result jumps least beyond its ``sources`` track, each power taken only where it saves more
    than :data:`SAVED`: as animated (``lifted_tracks``) wherever that is within :data:`JUMP` or nothing saves more.
    ``lifted(chosen, which)``: the tracks ``chosen``, of the swings ``which`` (indices), each risen over what it
    would pass through, all at once."""
    best = list(lifted_tracks)
    most = [jump(track, source) for track, source in zip(best, sources)]
    for power in POWERS[1:]:
        which = [i for i, worst in enumerate(most) if worst > JUMP]
        if not which:
            break
        for i, trial in zip(which, lifted([retimed(tracks[i], power) for i in which], which)):
            if (trial_jump := jump(trial, sources[i])) < most[i] - SAVED:
                best[i], most[i] = trial, trial_jump
    return best
