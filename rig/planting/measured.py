# SPDX-License-Identifier: GPL-3.0-or-later
"""What the foot figures measure at each frame: planted feet as they play against the take as authored.

The definitions of :mod:`.figures` (the foot report sums these up per foot) and of :mod:`.limits` (a planting
bake holds them to the limits), numpy only: nothing here calls the planting solver.
"""

from dataclasses import dataclass

import numpy as np

from ...solvers.planting.contacts import DOWN, UP
from ...solvers.planting.timeline import intervals
from .ground import Ground

CONTACT_HEIGHT = 0.03  #: metres above its lowest height a ball in contact may be
CONTACT_SPEED = 0.3  #: metres per second across the floor a ball in contact may move
IN_PLACE = 0.5  #: a body that travels less than this much of its legs' length (pelvis to ankle) walks in place
TIE = 0.002  #: metres: a sole stands on the same point as authored while that point is this close to its lowest


@dataclass
class Measured:
    """The figures' measurements at each of F frames, n feet: what a foot report sums up per foot, and what a
    planting bake holds to the limits (:mod:`.limits`)."""

    contact: np.ndarray  #: (F, n) where the foot stands as authored (its standing point low and slow)
    height: np.ndarray  #: (F, n) metres the standing point is off its authored height above ground (NaN: unmeasured)
    pitch: np.ndarray  #: (F, n) radians the foot's pitch is off its authored pitch (NaN: not measured)
    #: (F, n) metres the ankle, the standing point or (where sampled) any vertex of the foot goes into the surface,
    #: where above the floor as authored (a vertex: where the foot's lowest vertex was)
    sink: np.ndarray
    turn: np.ndarray  #: (F, n) radians the knee turns since the frame before beyond the authored turn (0 at first)
    slide: np.ndarray  #: (F, n) metres the standing point has moved across the ground since its contact began
    without_ground: np.ndarray  #: (F, n) where the ankle or the standing point has no surface under it
    travels: bool  #: whether the body travels: else an in-place cycle, whose standing feet slide back by design
    under: np.ndarray  #: (F, n) metres the standing point lies under the floor as authored (0 where above)
    tilt: np.ndarray  #: (F, n) radians the surface under the standing point tilts from level
    #: (F, n) metres from the point of the foot the take stands on to the one it stands on as it plays (0: that same
    #: point)
    elsewhere: np.ndarray


def measure(authored: dict, played: dict, ground: Ground, seconds: np.ndarray, floor, forced=None) -> Measured:
    """Compare the legs as they play (``played``) with the take as authored (``authored``), both
    :func:`.figures.points` over the same F frames, at ``seconds`` (F,) on the take's clock, on ``ground``.
    ``floor``: the height the take was authored on, one for all, or (F, n) under each foot.

    A foot is in contact where, as authored, its standing point is within :data:`CONTACT_HEIGHT` of its lowest
    height over the frames and moves slower than :data:`CONTACT_SPEED` across the floor since the frame before;
    where the body travels less than :data:`IN_PLACE` of its legs' length (a cycle walked in place), by height
    alone; and where the animator forced it down, not where forced up (``forced``: (F, n), from
    :func:`.contacts.forced`)."""
    was_ankle, ankle = authored["ankle"], played["ankle"]
    # A foot stands on a point of its sole: of every vertex of its skin where that was sampled (as the independent
    # measure reads a mesh), else of its heel, ball, tip and outline (the ball alone for a bone sole).
    skinned = "skin" in played and "low" in authored
    sole = played["skin"] if skinned else played["sole"]
    points = np.concatenate([ankle[..., None, :], sole], axis=-2)  # (F, n, 1 + P, 3): ankle, then sole
    heights, normals, hit = ground.cast_down(points.reshape(-1, 3))
    heights, normals, hit = (
        heights.reshape(points.shape[:-1]),
        normals.reshape(points.shape),
        hit.reshape(points.shape[:-1]),
    )
    clearance = points[..., 1:, 2] - np.where(hit[..., 1:], heights[..., 1:], 0.0)
    if skinned:
        taken = np.asarray(authored["low"]).astype(int)
        was_ball, chosen = authored["low_point"], _same_or_lowest(taken, clearance)
        into = np.where(hit[..., 1:], -clearance, 0.0).max(axis=-1)  # (F, n) how deep its deepest vertex goes
    else:
        was_ball, chosen, taken = _standing(authored["sole"], clearance)
    ball = _pick(points[..., 1:, :], chosen)
    elsewhere = np.linalg.norm(ball - _pick(points[..., 1:, :], taken), axis=-1)
    frames, count = ball.shape[:2]
    floor = np.broadcast_to(np.asarray(floor, dtype=np.float64), (frames, count))
    # The ground under the ankle and under the standing point: (2, F, n).
    heights, normals, hit = (
        np.stack([heights[..., 0], _pick(heights[..., 1:, None], chosen)[..., 0]]),
        np.stack([normals[..., 0, :], _pick(normals[..., 1:, :], chosen)]),
        np.stack([hit[..., 0], _pick(hit[..., 1:, None], chosen)[..., 0]]),
    )
    found = hit.all(axis=0)
    sink = np.maximum(np.stack([heights[0] - ankle[..., 2], heights[1] - ball[..., 2]]), 0.0)
    sink[0][was_ankle[..., 2] < floor] = 0.0
    sink[1][was_ball[..., 2] < floor] = 0.0
    sink = np.where(found, sink.max(axis=0), 0.0)
    if skinned:  # any vertex of a foot whose lowest the take has above its floor
        sink = np.maximum(sink, np.where(was_ball[..., 2] < floor, 0.0, np.maximum(into, 0.0)))

    pelvis = authored["pelvis"]
    legs_length = np.linalg.norm(was_ankle - pelvis[:, None], axis=-1).max(initial=0.0)
    travels = bool(np.linalg.norm(pelvis[:, :2] - pelvis[:1, :2], axis=1).max(initial=0.0) >= IN_PLACE * legs_length)
    speed = np.linalg.norm(np.diff(was_ball[..., :2], axis=0), axis=-1) / np.diff(seconds)[:, None]
    contact = np.zeros((frames, count), bool)
    low = was_ball[1:, :, 2] < was_ball[..., 2].min(axis=0) + CONTACT_HEIGHT
    contact[1:] = low & (speed < CONTACT_SPEED) if travels else low
    if forced is not None:
        contact = np.where(forced == DOWN, True, np.where(forced == UP, False, contact))
    measured = contact & found
    height = np.abs((ball[..., 2] - heights[1]) - np.maximum(was_ball[..., 2] - floor, 0.0))
    pitch = np.abs(_pitch(was_ankle, was_ball, np.array([0.0, 0.0, 1.0])) - _pitch(ankle, ball, normals[1]))
    turn = np.zeros((frames, count))
    turn[1:] = np.abs(np.diff(played["knee"], axis=0) - np.diff(authored["knee"], axis=0))
    slide = np.zeros((frames, count))
    for n in range(count):
        for first, last in intervals(contact[:, n]):
            moved = ball[first : last + 1, n, :2] - ball[first, n, :2]
            slide[first : last + 1, n] = np.linalg.norm(moved, axis=1)
    return Measured(
        contact,
        np.where(measured, height, np.nan),
        np.where(measured, pitch, np.nan),
        sink,
        turn,
        slide,
        ~found,
        travels,
        np.maximum(floor - was_ball[..., 2], 0.0),
        np.arccos(np.clip(normals[1][..., 2], -1.0, 1.0)),
        elsewhere,
    )


def _standing(authored: np.ndarray, clearance: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The standing point (F, n, 3) of the sole ``authored`` (:func:`.figures.points`), (F, n) which point of the
    played sole stands, and (F, n) which the take stood on: the played one nearest the ground under it (``clearance``
    (F, n, P): each point's height above it), the same point as the authored while it is within :data:`TIE` of the
    nearest. On a slope a foot touching with its uphill edge stands there, though its downhill edge is lower."""
    # Of the points the authored sole stands on (a flat sole: within TIE of its lowest), the one nearest the ground
    # as it plays.
    low = authored[..., 2] <= authored[..., 2].min(axis=-1, keepdims=True) + TIE
    lowest = np.argmin(np.where(low, clearance, np.inf), axis=-1)
    same = np.take_along_axis(clearance, lowest[..., None], axis=-1)[..., 0] <= clearance.min(axis=-1) + TIE
    return _pick(authored, lowest), np.where(same, lowest, np.argmin(clearance, axis=-1)), lowest


def _same_or_lowest(authored: np.ndarray, clearance: np.ndarray) -> np.ndarray:
    """(F, n) which played point stands: the one the take stood on (``authored`` (F, n), an index into the P points
    whose height above the ground under them is ``clearance`` (F, n, P)) while it is within :data:`TIE` of the
    nearest the ground, else the nearest."""
    own = np.take_along_axis(clearance, authored[..., None], axis=-1)[..., 0]
    return np.where(own <= clearance.min(axis=-1) + TIE, authored, np.argmin(clearance, axis=-1))


def _pick(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """(F, n, k) of ``values`` (F, n, P, k), the point ``index`` (F, n) of each."""
    return np.take_along_axis(values, index[..., None, None], axis=-2)[..., 0, :]


def _pitch(ankle, ball, up) -> np.ndarray:
    """(F, n) radians the ankle-to-ball direction rises against the plane whose normal is ``up``."""
    direction = ball - ankle
    direction = direction / np.linalg.norm(direction, axis=-1, keepdims=True)
    return np.arcsin(np.clip(np.einsum("...i,...i->...", direction, np.broadcast_to(up, direction.shape)), -1.0, 1.0))


def percentile(values, q: float) -> float:
    """The ``q``-th percentile, taken as the nearest lower rank (as the independent measure does); 0 with no values."""
    values = np.sort(np.asarray(values, dtype=np.float64))
    return float(values[int(q / 100.0 * (len(values) - 1))]) if len(values) else 0.0
