# SPDX-License-Identifier: GPL-3.0-or-later
"""From the flat floor a foot was animated on to the surface it must stand on.

A foot on the floor is carried by one rigid map per frame: a turn about its ball (on the
floor) that tips the floor's up to the surface's normal under the ball, and a lift to the
surface's height there. Heights above the floor become heights above the surface and the
foot's pitch against the floor becomes its pitch against the surface. The ball of a standing
foot is locked, so its map holds still for the whole stance. A foot in the air blends from its
take-off map to its landing map while riding on the body's ground level, and is raised on a
smooth path wherever it would pass through the ground.
"""

import numpy as np

from ..constants import IDENTITY
from ..rotation_modes import axis_angle_to_quat, matrix_to_quat, quat_to_axis_angle, quat_to_matrix, slerp
from .contacts import BALL
from .timeline import bridges, intervals, smooth, smoothstep

#: Most a standing foot pitches, heel or toe up, to rest on the ground under it: enough for a
#: bump, not to fold a foot over a step's edge.
MAX_REST = np.radians(20.0)
UP = np.array([0.0, 0.0, 1.0])


def tilt(normals, max_angle: float) -> np.ndarray:
    """(N, 4) quaternions turning +Z toward the (N, 3) upward ``normals``, by at most ``max_angle``."""
    normals = np.asarray(normals, dtype=np.float64)
    n = normals / np.linalg.norm(normals, axis=1, keepdims=True)
    axis = np.cross(UP, n)
    sin_angle = np.linalg.norm(axis, axis=1)
    angle = np.minimum(np.arctan2(sin_angle, n[:, 2]), max_angle)
    unit = np.divide(axis, sin_angle[:, None], out=np.zeros_like(axis), where=sin_angle[:, None] > 1e-15)
    return np.column_stack([np.cos(0.5 * angle), unit * np.sin(0.5 * angle)[:, None]])


def rise(normals, steepest=None) -> np.ndarray:
    """(..., 2) the rise over run, along x and y, of ground whose upward ``normals`` (..., 3) are given; where
    ``steepest`` (rise over run, broadcast over ``normals``' leading axes) is, no steeper than that, the way kept."""
    normals = np.asarray(normals, np.float64)
    gradient = -normals[..., :2] / np.maximum(normals[..., 2:], 1e-6)
    if steepest is None:
        return gradient
    steep = np.linalg.norm(gradient, axis=-1)
    return gradient * (np.minimum(steep, steepest) / np.maximum(steep, 1e-12))[..., None]


def rest(turn, sole, depth, lift, cast_down) -> tuple[np.ndarray, np.ndarray]:
    """How far held feet, turned by ``turn`` (k, 4) about their balls, pitch further, heel up (> 0) or toe up, by at
    most :data:`MAX_REST`, just enough that none of their (k, P, 3) ``sole`` points (heel, ball, tip) goes into the
    ground deeper than ``depth`` (k, P) allows: the ground under a foot can only push. (k,) angles (radians) and
    (k, 3) the axes across the feet they turn about (:func:`pitched`). A foot over a bump that would sink at both
    ends is pitched to share the difference; its lift takes the rest."""
    pivot = sole[:, BALL]
    moved = transform(turn, pivot, lift, sole)
    heights, normals, hit = cast_down(moved.reshape(-1, 3))
    heights, normals, hit = heights.reshape(depth.shape), normals.reshape(*depth.shape, 3), hit.reshape(depth.shape)
    deficit = np.where(hit, heights + depth - moved[..., 2], -np.inf)
    # Only the ground rising above the plane under the ball pitches the foot: what that plane itself asks (a point
    # low under a raised ball, a hoof's tip, sinks a millimetre or two as the ball's height is kept upright) is
    # the lift's, or a tip close ahead of the ball would pitch the foot degrees for it.
    gradient = rise(normals[:, BALL, None])
    plane = heights[:, BALL, None] + np.einsum("kpi,kpi->kp", gradient, moved[..., :2] - moved[:, BALL, None, :2])
    deficit -= np.where(hit & hit[:, BALL, None], np.maximum(plane + depth - moved[..., 2], 0.0), 0.0)
    forward = moved[:, -1, :2] - moved[:, 0, :2]  # heel to tip, across the ground
    length = np.linalg.norm(forward, axis=1, keepdims=True)
    forward = np.divide(forward, length, out=np.zeros_like(forward), where=length > 1e-9)
    along = np.einsum("kpi,ki->kp", moved[..., :2] - moved[:, BALL, None, :2], forward)  # < 0 behind the ball
    behind, ahead = along < -1e-6, along > 1e-6
    # Pitching by a slope ``s`` raises a point ``-along * s``: points behind need ``s >= low``, ahead ``s <= high``.
    low = np.where(behind, deficit / np.where(behind, -along, 1.0), -np.inf).max(axis=1)
    high = np.where(ahead, -deficit / np.where(ahead, along, 1.0), np.inf).min(axis=1)
    # Where the bounds cross both are finite; elsewhere an unbounded side would make the unused midpoint NaN.
    middle = 0.5 * (np.where(np.isfinite(low), low, 0.0) + np.where(np.isfinite(high), high, 0.0))
    slope = np.where(low <= high, np.clip(0.0, low, high), middle)
    angle = np.clip(np.arctan(np.nan_to_num(slope, posinf=0.0, neginf=0.0)), -MAX_REST, MAX_REST)
    axis = np.column_stack([-forward[:, 1], forward[:, 0], np.zeros(len(forward))])  # up x forward
    return angle, axis


def pitched(turn, angle, axis) -> np.ndarray:
    """(k, 4) turns ``turn`` (k, 4) followed by a pitch of ``angle`` (k,) about ``axis`` (k, 3), as :func:`rest`
    gives them."""
    pitch = np.column_stack([np.cos(0.5 * angle), axis * np.sin(0.5 * angle)[:, None]])
    return matrix_to_quat(quat_to_matrix(pitch) @ quat_to_matrix(turn))


def eased_turns(turns, steady: float, sigma: float) -> np.ndarray:
    """(m, 4) one held run's turns ``turns`` (m, 4), each change between two frames faster than ``steady`` (radians)
    eased over about ``sigma`` frames before and after: a foot crossing an edge between two faces of the ground, or
    a bump's rim, tips to the new one over a few frames, not in one (its knee would turn as fast)."""
    turns = np.asarray(turns, np.float64)
    if len(turns) < 2:
        return turns.copy()
    turned = quat_to_axis_angle(np.where(turns[:, :1] < 0.0, -turns, turns))  # each turn under half a circle
    vectors = turned[:, 1:] * turned[:, :1]
    change = np.diff(vectors, axis=0)
    size = np.linalg.norm(change, axis=1, keepdims=True)
    kept = change * np.minimum(1.0, steady / np.maximum(size, 1e-12))
    if np.allclose(kept, change, rtol=0.0, atol=1e-12):
        return turns.copy()
    jumps = np.concatenate([np.zeros((1, 3)), np.cumsum(change - kept, axis=0)])
    vectors = vectors - jumps + smooth(jumps, sigma)
    return axis_angle_to_quat(np.column_stack([np.linalg.norm(vectors, axis=1), vectors]))


def swing(down, turn, lift, carrier) -> tuple[np.ndarray, np.ndarray]:
    """One foot's maps (F, 4) turns and (F,) lifts for every frame, from those of its ``down``
    frames: between two contacts the turn blends from take-off to landing, and the lift rides on
    ``carrier`` (F,), the ground level the foot moves over, with its offset from it blending
    likewise. A foot that never touches rides on the carrier, level."""
    down = np.asarray(down, bool)
    turn, lift = np.array(turn, dtype=np.float64), np.array(lift, dtype=np.float64)
    if not down.any():
        return np.tile(IDENTITY, (len(down), 1)), np.asarray(carrier, dtype=np.float64).copy()
    for first, last, before, after, u in bridges(down):
        turn[first : last + 1] = slerp(np.tile(turn[before], (len(u), 1)), np.tile(turn[after], (len(u), 1)), u)
        off_before, off_after = lift[before] - carrier[before], lift[after] - carrier[after]
        lift[first : last + 1] = carrier[first : last + 1] + off_before + u * (off_after - off_before)
    return turn, lift


def transform(turn, pivot, lift, points) -> np.ndarray:
    """``points`` (F, K, 3) carried by each frame's map: turned by ``turn`` (F, 4) about ``pivot``
    (F, 3), then raised by ``lift`` (F,)."""
    rotation = quat_to_matrix(turn)
    moved = np.einsum("fij,fkj->fki", rotation, points - pivot[:, None]) + pivot[:, None]
    moved[..., 2] += np.asarray(lift)[:, None]
    return moved


def clearing_lift(need, down, sigma: float) -> np.ndarray:
    """Extra lift (F,) that keeps one foot out of the ground, from ``need`` (F,), how far it
    would go in. On the floor a foot is raised by just what it needs. In the air it takes the
    lowest path that never dips between two obstacles, each of whose frames lifts its
    neighbours with a smooth bump about ``2 * sigma`` frames wide, narrower near take-off and
    landing, so the path starts and ends with the foot's own lift (where the take starts or ends in
    the air there is neither)."""
    need = np.asarray(need, dtype=np.float64)
    lift = need.copy()
    window = max(int(round(2.0 * sigma)), 1)
    for first, last in intervals(~np.asarray(down, bool)):
        span = need[first : last + 1]
        if not span.any():
            continue
        path = np.minimum(np.maximum.accumulate(span), np.maximum.accumulate(span[::-1])[::-1])
        frames = np.arange(len(path))
        to_take_off = frames + 1 if first > 0 else np.full(len(path), window)
        to_landing = len(path) - frames if last < len(need) - 1 else np.full(len(path), window)
        room = np.minimum(np.minimum(to_take_off, to_landing), window)
        distance = np.abs(frames[:, None] - frames[None, :])
        bumps = smoothstep(1.0 - distance / room[None, :])  # (frame, obstacle frame)
        lift[first : last + 1] = (path[None, :] * bumps).max(axis=1)
    return lift
