# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting maths over time: contacts, foot lock, smoothing, sole tilt and pelvis drop.

Everything works on arrays over frames (and feet), in world space with +Z up, so a bake can
use the whole timeline at once: contacts are found from the animation itself, the pelvis is
smoothed with a centred window (no lag), and locked feet release smoothly. Nothing here reads
Blender; :mod:`..rig.plant` hands the arrays over.
"""

import numpy as np

from .errors import SolverError

UP = np.array([0.0, 0.0, 1.0])


def smoothstep(x: np.ndarray) -> np.ndarray:
    """0 below 0, 1 above 1, and a smooth S in between."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def contact_weight(clearance: np.ndarray, blend_height: float) -> np.ndarray:
    """How fully a sole at ``clearance`` above the floor follows the ground: 1 on it, 0 from
    ``blend_height`` up, easing in between."""
    if blend_height <= 0.0:
        return (clearance <= 0.0).astype(np.float64)
    return 1.0 - smoothstep(np.asarray(clearance, dtype=np.float64) / blend_height)


def contact_mask(height, speed, max_height: float, max_speed: float, min_frames: int = 3, max_gap: int = 1):
    """Frames where a foot stands: low and slow, with contacts shorter than ``min_frames``
    dropped and gaps of up to ``max_gap`` frames inside a contact filled."""
    mask = (np.asarray(height) <= max_height) & (np.asarray(speed) <= max_speed)
    for start, end in intervals(~mask):  # fill short gaps between contacts
        if start > 0 and end < len(mask) - 1 and end - start + 1 <= max_gap:
            mask[start : end + 1] = True
    for start, end in intervals(mask):  # drop brief touches
        if end - start + 1 < min_frames:
            mask[start : end + 1] = False
    return mask


def intervals(mask) -> list[tuple[int, int]]:
    """Runs of True in ``mask`` as (first, last) frame indices, inclusive."""
    mask = np.asarray(mask, bool)
    edges = np.diff(np.concatenate([[False], mask, [False]]).astype(np.int8))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def lock_offsets(mask, drift, release: int) -> np.ndarray:
    """Horizontal corrections that hold a foot still while it stands.

    ``drift`` (F, 2): how far the foot's touching sole points moved since the previous frame in
    the animation. During a contact the correction cancels that movement (so they stay where
    they touched down); after lift-off it fades to zero over ``release`` frames. A contact that
    starts before the fade ends carries on from the current correction, so nothing jumps.
    """
    mask = np.asarray(mask, bool)
    drift = np.asarray(drift, dtype=np.float64)
    if drift.shape != (len(mask), 2):
        raise SolverError(f"drift must be (frames, 2) = ({len(mask)}, 2), not {drift.shape}")
    offsets = np.zeros((len(mask), 2))
    correction = np.zeros(2)
    at_lift, frames_since_lift = None, 0  # the correction when the foot last lifted, and since when
    for frame in range(len(mask)):
        if mask[frame]:
            if frame > 0 and mask[frame - 1]:
                correction = correction - drift[frame]
            at_lift = None
        elif at_lift is not None or (frame > 0 and mask[frame - 1]):
            if at_lift is None:
                at_lift, frames_since_lift = correction, 0
            frames_since_lift += 1
            correction = at_lift * (1.0 - smoothstep(np.array(frames_since_lift / max(release, 1))))
            if frames_since_lift >= release:
                at_lift = None
        offsets[frame] = correction
    return offsets


def smooth(values, sigma: float) -> np.ndarray:
    """Centred Gaussian smoothing over frames (no lag), ``sigma`` in frames; edges are mirrored."""
    values = np.asarray(values, dtype=np.float64)
    if sigma <= 0.0 or len(values) < 2:
        return values.copy()
    radius = int(np.ceil(3.0 * sigma))
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    kernel /= kernel.sum()
    padded = np.pad(values, (radius, radius), mode="reflect" if len(values) > radius else "edge")
    return np.convolve(padded, kernel, mode="valid")


def tilt(normals, weight, max_angle: float) -> np.ndarray:
    """(F, 4) world rotations turning +Z toward each surface normal, by ``weight`` of the way and
    never more than ``max_angle`` radians: how a sole tips to lie on the ground."""
    normals = np.asarray(normals, dtype=np.float64)
    length = np.linalg.norm(normals, axis=1)
    if not (length > 0.0).all():
        raise SolverError("surface normals must not be zero")
    n = normals / length[:, None]
    axis = np.cross(UP, n)
    sin_angle = np.linalg.norm(axis, axis=1)
    angle = np.arctan2(sin_angle, n[:, 2])
    angle = np.minimum(angle, max_angle) * np.clip(np.asarray(weight, dtype=np.float64), 0.0, 1.0)
    unit = np.divide(axis, sin_angle[:, None], out=np.zeros_like(axis), where=sin_angle[:, None] > 1e-15)
    return np.column_stack([np.cos(0.5 * angle), unit * np.sin(0.5 * angle)[:, None]])


def vertical_drop(hip, goal, reach) -> np.ndarray:
    """How far (>= 0) each hip must move down so that ``goal`` is within ``reach`` of it.

    The smaller root of ``|hip - d * up - goal| = reach``; when no vertical move can bring the
    goal within reach, the drop that brings the hip level with it (closest approach).
    """
    v = np.asarray(hip, dtype=np.float64) - np.asarray(goal, dtype=np.float64)
    reach = np.asarray(reach, dtype=np.float64)
    along = v[:, 2]
    discriminant = along * along - np.einsum("ij,ij->i", v, v) + reach * reach
    drop = np.where(discriminant >= 0.0, along - np.sqrt(np.maximum(discriminant, 0.0)), along)
    return np.maximum(drop, 0.0)
