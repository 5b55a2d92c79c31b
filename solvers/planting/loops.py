# SPDX-License-Identifier: GPL-3.0-or-later
"""A cycle in place that loops is planted as the loop it is: the take played on repeat, from :data:`AROUND` loops
before its first frame to as many after its last, is planted and the take's own frames kept. So its first and last
frames are planted with the frames that come before and after them on repeat (a stance the first frame cuts stands as
the whole stance does; the body's smoothing runs across the seam), and the planted take loops as the take does."""

from dataclasses import fields, is_dataclass, replace

import numpy as np

#: A take whose last frame runs on into its first with a change of speed up to this many times the largest between
#: its frames loops (a loop sampled coarsely has its sharpest turn at the seam as often as anywhere else).
SEAM_BEND = 1.5
#: Loops planted before the take's first frame and after its last: what reaches further, as a body held up over
#: several strides, differs between the two ends by what is left of it.
AROUND = 2


def period(points) -> int | None:
    """The frames the take ``points`` (F, m, 3), every tracked point relative to the pelvis and the pelvis' height,
    loops over: F - 1 where its last frame is its first again, F where its last frame runs on into its first as any
    frame into the next (no change of speed at the seam beyond :data:`SEAM_BEND` times the take's largest); None where
    it does not loop."""
    points = np.asarray(points, np.float64)
    frames = len(points)
    if frames < 4:
        return None
    size = np.abs(points - points.mean(axis=0)).max()
    if np.abs(points[-1] - points[0]).max() <= 1e-4 * max(size, 1e-9):
        return frames - 1
    bends = np.linalg.norm(points[2:] - 2.0 * points[1:-1] + points[:-2], axis=-1).max(axis=1)
    seam = np.concatenate([points[-2:], points[:2]])
    at_seam = np.linalg.norm(seam[2:] - 2.0 * seam[1:-1] + seam[:-2], axis=-1).max(axis=1)
    return frames if at_seam.max() <= SEAM_BEND * bends.max() else None


def tracked(legs) -> np.ndarray:
    """(F, m, 3) what :func:`period` compares of ``legs`` (:class:`.Legs`): each ankle, ball and hip relative to the
    pelvis, and the pelvis' height."""
    pelvis = np.asarray(legs.pelvis, np.float64)
    parts = [np.asarray(legs.foot)[..., :3, 3], np.asarray(legs.ball), np.asarray(legs.hip)]
    relative = [p - pelvis[:, None] for p in parts]
    height = np.zeros((len(pelvis), 1, 3))
    height[:, 0, 2] = pelvis[:, 2]
    return np.concatenate([*relative, height], axis=1)


def frames_around(frames: int, loop: int) -> tuple[np.ndarray, int]:
    """The take's frame for each frame of the take played on repeat (the take looping over ``loop`` frames), from
    :data:`AROUND` loops before its first frame to as many after its last; and how many frames come before its
    first."""
    before = AROUND * loop
    return np.arange(-before, frames + before) % loop, before


def taken(data, index: np.ndarray, kept=("girdle", "solid", "level")):
    """``data`` (a dataclass whose arrays are per frame, first axis the frame, but the fields ``kept``; a dataclass in
    it the same) at the frames ``index``."""
    changes = {}
    for field in fields(data):
        value = getattr(data, field.name)
        if is_dataclass(value):
            changes[field.name] = taken(value, index, kept)
        elif value is not None and field.name not in kept:
            changes[field.name] = np.asarray(value)[index]
    return replace(data, **changes)
