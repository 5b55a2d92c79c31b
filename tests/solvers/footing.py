# SPDX-License-Identifier: GPL-3.0-or-later
"""Measuring planted feet with definitions of our own, none of the solver's.

Contacts come from the source motion alone: the ball is down when it is within 3 cm of the
lowest height it holds for three frames running (so a one-frame dip does not set it) and slower
than 0.3 m/s across the floor, into or out of the frame. A planted point is the output foot matrix applied to where that
point sits in the source foot's frame; the ground is the analytic terrain's own formula.
"""

from dataclasses import dataclass

import numpy as np

from solvers.planting import Legs, Planted

CONTACT_HEIGHT = 0.03  #: m above the ball's lowest resting height
CONTACT_SPEED = 0.3  #: m/s across the floor


def horizontal_speed(points, fps: float) -> np.ndarray:
    """(F, ...) speed across the floor of (F, ..., 3) points: the slower of the steps into and out of
    each frame, so that a ball landing at a frame, or leaving after it, still stands there."""
    xy = np.asarray(points, dtype=np.float64)[..., :2]
    if len(xy) < 2:
        return np.zeros(xy.shape[:-1])
    step = np.linalg.norm(np.diff(xy, axis=0), axis=-1) * fps
    return np.minimum(np.concatenate([step[:1], step]), np.concatenate([step, step[-1:]]))


def lowest_held(height, frames: int = 3) -> np.ndarray:
    """(...,) the lowest height each (F, ...) track stays at or below for ``frames`` frames running."""
    height = np.asarray(height, dtype=np.float64)
    if len(height) < frames:
        return height.min(axis=0)
    windows = np.lib.stride_tricks.sliding_window_view(height, frames, axis=0)
    return windows.max(axis=-1).min(axis=0)


def contacts(legs: Legs, fps: float) -> np.ndarray:
    """(F, n) frames where the source ball is low and slow."""
    ball = np.asarray(legs.ball)
    low = ball[..., 2] <= lowest_held(ball[..., 2]) + CONTACT_HEIGHT
    return low & (horizontal_speed(ball, fps) < CONTACT_SPEED)


def runs(mask) -> list[tuple[int, int]]:
    """Runs of True in a (F,) mask, as (first, last) inclusive."""
    mask = np.concatenate([[False], np.asarray(mask, bool), [False]])
    edges = np.flatnonzero(np.diff(mask.astype(np.int8)))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2])]


def carried(source_foot, planted_foot, points) -> np.ndarray:
    """(F, n, 3) ``points`` (F, n, 3) as they sit in the source foot frames, moved with the planted ones."""
    homogeneous = np.concatenate([points, np.ones(points.shape[:-1] + (1,))], axis=-1)
    local = np.linalg.solve(source_foot, homogeneous[..., None])
    return (planted_foot @ local)[..., :3, 0]


def bend(hip, ankle, thigh, shin) -> np.ndarray:
    """(F, n) knee bend in radians (0 = straight) of legs whose hip and ankle are where given, by
    the law of cosines; an ankle out of reach reads straight."""
    d = np.linalg.norm(np.asarray(hip) - np.asarray(ankle), axis=-1)
    cos = (thigh**2 + shin**2 - d**2) / (2.0 * thigh * shin)
    return np.pi - np.arccos(np.clip(cos, -1.0, 1.0))


def angle_to(vectors, normals) -> np.ndarray:
    """(...,) angles between (..., 3) vectors and (..., 3) unit normals."""
    v = np.asarray(vectors, dtype=np.float64)
    n = np.asarray(normals, dtype=np.float64)
    across = np.linalg.norm(np.cross(v, n), axis=-1)
    return np.arctan2(across, np.einsum("...i,...i->...", v, n))


@dataclass(frozen=True)
class Footing:
    """Everything the properties look at, for one planted take on one terrain."""

    contact: np.ndarray  #: (F, n) source contacts
    ankle: np.ndarray  #: (F, n, 3) planted ankles
    ball: np.ndarray  #: (F, n, 3) planted balls
    hip: np.ndarray  #: (F, n, 3) planted hips: the source hips carried by the planted body
    height_error: np.ndarray  #: (F, n) ball's height above the ground less its authored height above the floor
    sinking: np.ndarray  #: (F, n, 2) how far the ankle and the ball are below the ground (positive: in it)
    above_floor: np.ndarray  #: (F, n, 2) the source ankle and ball are at or above the floor
    pitch_error: np.ndarray  #: (F, n) degrees: foot (ankle to ball) against the ground normal, less against +Z
    knee_turn: np.ndarray  #: (F - 1, n) degrees the planted knee turns in a frame beyond the source's turn
    stretch: np.ndarray  #: (F, n) planted hip-to-ankle distance less thigh + shin


def measure(legs: Legs, planted: Planted, terrain, fps: float, floor: float) -> Footing:
    contact = contacts(legs, fps)
    ankle = planted.foot[..., :3, 3]
    ball = carried(legs.foot, planted.foot, legs.ball)
    body = np.asarray(planted.body)
    hip = np.einsum("fij,fnj->fni", body[:, :3, :3], legs.hip) + body[:, None, :3, 3]  # carried by the body
    frames, count = contact.shape

    def ground(points):
        return terrain.height(points.reshape(-1, 3)[:, :2]).reshape(points.shape[:-1])

    height_error = (ball[..., 2] - ground(ball)) - (legs.ball[..., 2] - floor)
    points = np.stack([ankle, ball], axis=2)
    sinking = ground(points) - points[..., 2]
    above_floor = np.stack([legs.foot[..., 2, 3], legs.ball[..., 2]], axis=2) >= floor
    normal = terrain.normal(ball.reshape(-1, 3)[:, :2]).reshape(frames, count, 3)
    source_pitch = angle_to(legs.ball - legs.foot[..., :3, 3], np.array([0.0, 0.0, 1.0]))
    pitch_error = np.degrees(angle_to(ball - ankle, normal) - source_pitch)
    thigh, shin = np.asarray(legs.thigh), np.asarray(legs.shin)
    before = bend(legs.hip, legs.foot[..., :3, 3], thigh, shin)
    after = bend(hip, ankle, thigh, shin)
    knee_turn = np.degrees(np.abs(np.diff(after, axis=0)) - np.abs(np.diff(before, axis=0)))
    stretch = np.linalg.norm(hip - ankle, axis=-1) - (thigh + shin)
    return Footing(contact, ankle, ball, hip, height_error, sinking, above_floor, pitch_error, knee_turn, stretch)


def slides(footing: Footing) -> np.ndarray:
    """(k,) for each contact run of at least two frames, the farthest the planted ball gets from
    where it was at the run's first frame, across the ground."""
    out = []
    for n in range(footing.contact.shape[1]):
        for first, last in runs(footing.contact[:, n]):
            if last > first:
                xy = footing.ball[first : last + 1, n, :2]
                out.append(float(np.linalg.norm(xy - xy[0], axis=1).max()))
    return np.array(out)
