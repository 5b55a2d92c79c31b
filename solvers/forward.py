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
    k = matrices.shape[1]
    out = np.empty_like(points)
    out[:, 0] = points[:, 0]
    linear, shift = None, None  # the change of the bones above, as p -> linear p + shift
    for i in range(k):
        m = soa.components(matrices[:, i, :3])
        frame = (m[0, 0], m[0, 1], m[0, 2], m[1, 0], m[1, 1], m[1, 2], m[2, 0], m[2, 1], m[2, 2])
        head = (m[0, 3], m[1, 3], m[2, 3])
        scale = soa.components(scales[:, i])
        new_scale = scale if y_scale is None else (scale[0], scale[1] * y_scale[:, i], scale[2])
        # M S^-1 R^T R' S' M^-1: the bone's own change, about its head
        old_turn, new_turn = soa.quat_to_mat(_unit(rotations[:, i])), soa.quat_to_mat(_unit(new_rotations[:, i]))
        own = soa.mat_mul(soa.mat_transpose(old_turn), new_turn)
        own = soa.mat_scale_columns(own, tuple(new_scale))
        own = tuple(e / scale[r // 3] for r, e in enumerate(own))
        turn = soa.mat_mul(soa.mat_mul(frame, own), soa.mat_inv(frame)[0])
        moved = soa.sub(head, soa.mat_vec(turn, head))
        if linear is None:
            linear, shift = turn, moved
        else:
            linear, shift = soa.mat_mul(linear, turn), soa.add(soa.mat_vec(linear, moved), shift)
        soa.join(soa.add(soa.mat_vec(linear, tuple(soa.components(points[:, i + 1]))), shift), out[:, i + 1])
    return out


def _unit(q) -> soa.Quat:
    q = soa.split(q)
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)
