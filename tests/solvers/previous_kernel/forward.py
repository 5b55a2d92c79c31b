# SPDX-License-Identifier: GPL-3.0-or-later
"""Forward kinematics of a chain as Blender will pose it once new local rotations are written, in float64.

Blender poses a bone that inherits fully from its parent as ``M = P @ L @ R @ S``: the parent's pose
matrix, the rest offset and location, then the bone's own rotation and scale. Writing ``R'`` and
``S'`` changes bone ``i`` about its own origin by ``M_i @ S^-1 R^-1 R' S' @ M_i^-1``, and every bone
below it with it, so the change of bone ``i`` in armature space is the product of the changes of the
bones from the top of the chain down to it. The solve checks what it wrote with this, independently
of the write-back's carried frames, before it reports a limb as reached.
"""

import numpy as np

from . import soa


def posed_points(matrices, scales, rotations, points, new_rotations, y_scale=None) -> np.ndarray:
    """(N, k + 1, 3) joints of N chains of k bones once ``new_rotations`` (N, k, 4) and Y scale factors
    ``y_scale`` (N, k) replace the local ``rotations``. ``matrices`` (N, k, 4, 4), ``scales`` (N, k, 3):
    the bones' pose matrices and local scales as they are; ``points`` (N, k + 1, 3): the joints as they
    are, point ``i + 1`` moving with bone ``i``. The first point, the top bone's head, stays."""
    matrices = np.asarray(matrices, dtype=np.float64)
    points = np.asarray(points, dtype=np.float64)
    n, k = matrices.shape[:2]
    # Every bone's own change at once: M S^-1 R^T R' S' M^-1 = F T Y F^-1 about its head, with its rotation
    # frame F = M S^-1, its turn T = R^T R' and Y the factor on its Y scale.
    frame = soa.split_matrices(matrices[:, :, :3, :3] / np.asarray(scales, dtype=np.float64)[:, :, None, :])
    turn = soa.quat_to_mat(soa.quat_mul(_conjugate(_unit(rotations)), _unit(new_rotations)))
    if y_scale is not None:
        turn = soa.mat_scale_columns(turn, (1.0, np.ravel(y_scale), 1.0))
    change = soa.mat_mul(soa.mat_mul(frame, turn), soa.mat_inv(frame)[0])
    heads = soa.split(matrices[:, :, :3, 3].reshape(-1, 3))
    moved = soa.join(soa.sub(heads, soa.mat_vec(change, heads))).reshape(n, k, 3)
    change = soa.join_matrices(change).reshape(n, k, 3, 3)
    # Down the chain: each bone moves with the changes of the bones above it, p -> linear p + shift.
    out = np.empty_like(points)
    out[:, 0] = points[:, 0]
    linear, shift = change[:, 0], moved[:, 0]
    for i in range(k):
        if i > 0:
            shift = np.einsum("nij,nj->ni", linear, moved[:, i]) + shift
            linear = np.einsum("nij,njk->nik", linear, change[:, i])
        out[:, i + 1] = np.einsum("nij,nj->ni", linear, points[:, i + 1]) + shift
    return out


def _unit(q) -> soa.Quat:
    q = soa.split(np.asarray(q, dtype=np.float64).reshape(-1, 4))
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


def _conjugate(q: soa.Quat) -> soa.Quat:
    return (q[0], -q[1], -q[2], -q[3])
