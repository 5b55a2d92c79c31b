# SPDX-License-Identifier: GPL-3.0-or-later
"""Quaternions to and from the other rotation modes a pose bone can be in, for many rotations at once.

Blender's Euler order names the axes in the order they are applied: ``'XYZ'`` is
``Rz @ Ry @ Rx``; the angles are always stored as (x, y, z). Conversions here are float64
(``mathutils`` is single precision) and can keep a sequence continuous: Euler angles nearest
to the previous ones (choosing between the two equivalent triples and whole turns), and
quaternions on the same hemisphere as the previous ones. Every function raises
:class:`.SolverError` for a NaN or infinite input, a zero quaternion or a flat matrix; a quaternion
of any other length stands for its rotation.
"""

import numpy as np

from . import vectors
from .errors import SolverError

EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
_AXIS = {"X": 0, "Y": 1, "Z": 2}
_TAU = 2.0 * np.pi


def _order(order: str) -> tuple[int, int, int, float]:
    if order not in EULER_ORDERS:
        raise SolverError(f"Euler order must be one of {', '.join(EULER_ORDERS)}, not {order!r}")
    i, j, k = (_AXIS[a] for a in order)
    parity = 1.0 if (j - i) % 3 == 1 else -1.0  # XYZ, YZX, ZXY are even
    return i, j, k, parity


def _finite(name: str, values) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if not np.isfinite(array).all():
        raise SolverError(f"{name} must be finite")
    return array


def _quaternions(q) -> np.ndarray:
    """Quaternions checked finite and not zero."""
    q = _finite("quaternions", q)
    if not (np.abs(q).max(axis=-1, initial=0.0) > 0.0).all():
        raise SolverError("quaternions must not be zero")
    return q


def _rotations(q) -> np.ndarray:
    """Quaternions checked finite and not zero, at unit length."""
    q = _quaternions(q)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def quat_to_matrix(q) -> np.ndarray:
    """(N, 4) quaternions to (N, 3, 3) rotation matrices."""
    return vectors.join_matrices(vectors.quat_to_mat(vectors.split(_rotations(q))))


def matrix_to_quat(m) -> np.ndarray:
    """(N, 3, 3) rotation matrices to (N, 4) unit quaternions."""
    return vectors.join(vectors.mat_to_quat(vectors.split_matrices(_finite("matrices", m))))


def nearest_rotation(matrices) -> np.ndarray:
    """(n, 3, 3) nearest rotations to (n, 3, 3) matrices, of any scale or shear (:func:`.vectors.nearest_rotation`)."""
    matrices = _finite("matrices", matrices).reshape(-1, 3, 3)
    # Hadamard's bound: |det| reaches the product of the column lengths for orthogonal columns.
    if not (np.abs(np.linalg.det(matrices)) > 1e-12 * np.prod(np.linalg.norm(matrices, axis=1), axis=1)).all():
        raise SolverError("matrices must not be flat (a zero scale)")
    return vectors.join_matrices(vectors.nearest_rotation(vectors.split_matrices(matrices)))


def euler_to_quat(euler, order: str) -> np.ndarray:
    """(N, 3) Euler angles (x, y, z) in ``order`` to (N, 4) quaternions."""
    i, j, k, _ = _order(order)
    euler = _finite("Euler angles", euler)
    parts = []
    for axis in (i, j, k):
        half = 0.5 * euler[:, axis]
        q = np.zeros((len(euler), 4))
        q[:, 0] = np.cos(half)
        q[:, 1 + axis] = np.sin(half)
        parts.append(vectors.split(q))
    # The first axis is applied first, so it is the rightmost factor.
    return vectors.join(vectors.quat_mul(parts[2], vectors.quat_mul(parts[1], parts[0])))


def quat_to_euler(q, order: str, previous=None) -> np.ndarray:
    """(N, 4) quaternions to (N, 3) Euler angles in ``order``.

    With ``previous`` (N, 3), each result is the equivalent triple nearest to it, so keys and
    repeated solves stay continuous instead of jumping by whole or half turns.
    """
    primary, alternative = _euler_candidates(q, order)
    if previous is None:
        return primary
    return _nearest(primary, alternative, _finite("previous Euler angles", previous))


def quat_to_euler_sequence(q, order: str, previous=None) -> np.ndarray:
    """(F, N, 4) quaternions, frame by frame, to (F, N, 3) Euler angles continuous along F.

    The first frame is nearest to ``previous`` (N, 3) when given.
    """
    q = np.asarray(q, dtype=np.float64)
    frames, n = q.shape[:2]
    primary, alternative = _euler_candidates(q.reshape(-1, 4), order)
    primary, alternative = primary.reshape(frames, n, 3), alternative.reshape(frames, n, 3)
    out = np.empty_like(primary)
    last = primary[0] if previous is None else _finite("previous Euler angles", previous)
    for f in range(frames):
        last = out[f] = _nearest(primary[f], alternative[f], last)
    return out


def _euler_candidates(q: np.ndarray, order: str) -> tuple[np.ndarray, np.ndarray]:
    """The two equivalent Euler triples of each rotation: the principal one, with the middle
    angle in [-pi/2, pi/2], and (first + pi, pi - middle, last + pi)."""
    i, j, k, parity = _order(order)
    m = quat_to_matrix(q)
    cos_middle = np.hypot(m[:, i, i], m[:, j, i])
    middle = np.arctan2(-parity * m[:, k, i], cos_middle)
    # At gimbal lock (middle = +-pi/2) only first -+ last is defined: there the last angle is 0, as
    # in Blender. The first angle comes from row j of R_k(last)^T M = R_j(middle) R_i(first), which is
    # (cos first) e_j - parity (sin first) e_k whatever the middle angle: unlike the entries scaled by
    # cos(middle), it keeps its digits near the lock, and it agrees with whatever last angle was taken.
    last = np.where(cos_middle > 1e-14, np.arctan2(parity * m[:, j, i], m[:, i, i]), 0.0)
    c, s = np.cos(last), parity * np.sin(last)
    first = np.arctan2(-parity * (c * m[:, j, k] - s * m[:, i, k]), c * m[:, j, j] - s * m[:, i, j])
    primary, alternative = np.empty((len(m), 3)), np.empty((len(m), 3))
    primary[:, i], primary[:, j], primary[:, k] = first, middle, last
    alternative[:, i], alternative[:, j], alternative[:, k] = first + np.pi, np.pi - middle, last + np.pi
    return primary, alternative


def _nearest(primary: np.ndarray, alternative: np.ndarray, previous: np.ndarray) -> np.ndarray:
    a, b = _nearest_turns(primary, previous), _nearest_turns(alternative, previous)
    pick_b = np.abs(b - previous).sum(axis=1) < np.abs(a - previous).sum(axis=1)
    return np.where(pick_b[:, None], b, a)


def _nearest_turns(angles, previous):
    return angles + _TAU * np.round((previous - angles) / _TAU)


def quat_to_axis_angle(q) -> np.ndarray:
    """(N, 4) quaternions to (N, 4) Blender axis-angle (angle, x, y, z); no rotation gives axis +Y."""
    q = _rotations(q)
    v = q[:, 1:]
    angle = 2.0 * np.arctan2(np.linalg.norm(v, axis=1), q[:, 0])
    unit, ok = vectors.unit_scaled(vectors.split(v))  # scaled first: a 1e-160 turn still has a unit axis
    axis = np.where(ok[:, None], vectors.join(unit), [0.0, 1.0, 0.0])
    return np.column_stack([angle, axis])


def axis_angle_to_quat(axis_angle) -> np.ndarray:
    """(N, 4) Blender axis-angle (angle, x, y, z) to (N, 4) quaternions; a zero axis means no rotation."""
    axis_angle = _finite("axis-angles", axis_angle)
    unit, ok = vectors.unit_scaled(vectors.split(axis_angle[:, 1:]))  # any non-zero axis, however short
    half = 0.5 * np.where(ok, axis_angle[:, 0], 0.0)
    return np.column_stack([np.cos(half), vectors.join(unit) * np.sin(half)[:, None]])


def channels_to_quat(mode: str, quaternion, euler, axis_angle) -> np.ndarray:
    """(..., 4) unit quaternions of bones in rotation ``mode`` (``'QUATERNION'``, ``'AXIS_ANGLE'`` or an Euler
    order) from their channels, each (..., width) as Blender stores them. A zero quaternion stands for no
    rotation; a channel that is not a number gives NaN (not an error), so the caller can name what holds it."""
    if mode == "QUATERNION":
        q = np.asarray(quaternion, dtype=np.float64)
        length = np.linalg.norm(q, axis=-1, keepdims=True)
        return np.where(length > 0.0, q / np.where(length > 0.0, length, 1.0), [1.0, 0.0, 0.0, 0.0])
    channels = np.asarray(axis_angle if mode == "AXIS_ANGLE" else euler, dtype=np.float64)
    flat = channels.reshape(-1, channels.shape[-1])
    finite = np.isfinite(flat).all(axis=1)
    out = np.full((len(flat), 4), np.nan)
    out[finite] = axis_angle_to_quat(flat[finite]) if mode == "AXIS_ANGLE" else euler_to_quat(flat[finite], mode)
    return out.reshape(*channels.shape[:-1], 4)


def same_hemisphere(q, reference) -> np.ndarray:
    """Each quaternion of ``q``, negated where that brings it nearer to ``reference`` (same rotation). A zero
    reference, as a pose channel may hold, keeps the sign."""
    q = _quaternions(q)
    flip = np.einsum("ij,ij->i", q, _finite("reference quaternions", reference)) < 0.0
    return np.where(flip[:, None], -q, q)


def make_quat_continuous(q) -> np.ndarray:
    """A sequence of (F, 4) quaternions with signs chosen so each is nearest the one before."""
    q = _quaternions(q)
    flips = np.einsum("ij,ij->i", q[1:], q[:-1]) < 0.0
    sign = np.concatenate([[1.0], np.where(np.cumsum(flips) % 2 == 1, -1.0, 1.0)])
    return q * sign[:, None]


def slerp(a, b, t) -> np.ndarray:
    """Spherical interpolation from (N, 4) ``a`` to ``b`` by ``t`` (scalar or (N,)), along the shorter arc."""
    a = _rotations(a)
    b = _rotations(b)
    t = np.broadcast_to(_finite("slerp factors", t), (len(a),))
    return vectors.join(vectors.slerp(vectors.split(a), vectors.split(b), t))
