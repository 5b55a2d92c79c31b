# SPDX-License-Identifier: GPL-3.0-or-later
"""Forward kinematics of a chain as Blender will pose it once new local rotations are written, in float64.

Blender poses a bone that inherits fully from its parent as ``M = P @ L @ R @ S``: the parent's pose
matrix, the rest offset and location, then the bone's own rotation and scale. Writing ``R'`` and
``S'`` changes bone ``i`` about its own origin by ``M_i @ S^-1 R^-1 R' S' @ M_i^-1``, and every bone
below it with it, so a joint moves by the changes of the bones above it, the lowest first. The solve
checks what it wrote with this, independently of the write-back's carried frames, before it reports a
limb as reached.
"""

import numpy as np

from . import vectors

BLOCK = 8192  #: chains per block: the component arrays of a block stay in cache


def posed_points(matrices, scales, rotations, points, new_rotations, y_scale=None) -> np.ndarray:
    """(N, k + 1, 3) joints of N chains of k bones once ``new_rotations`` (N, k, 4) and Y scale factors
    ``y_scale`` (N, k) replace the local ``rotations``. ``matrices`` (N, k, 4, 4), ``scales`` (N, k, 3):
    the bones' pose matrices and local scales as they are; ``points`` (N, k + 1, 3): the joints as they
    are, point ``i + 1`` moving with bone ``i``. The first point, the top bone's head, stays."""
    matrices = np.asarray(matrices, dtype=np.float64)
    scales = np.asarray(scales, dtype=np.float64)
    n, k = matrices.shape[:2]
    out = np.empty((n, k + 1, 3))
    arrays = [np.asarray(a, dtype=np.float64) for a in (rotations, new_rotations, points)]
    for rows in vectors.blocks(n, BLOCK):
        m = vectors.components(matrices[rows, :, :3])  # (k, 3, 4, B)
        s = vectors.components(scales[rows])
        frames = [tuple(m[i, r, c] / s[i, c] for r in range(3) for c in range(3)) for i in range(k)]
        heads = [(m[i, 0, 3], m[i, 1, 3], m[i, 2, 3]) for i in range(k)]
        old, new, joints = ([tuple(row) for row in vectors.components(a[rows])] for a in arrays)
        factors = None if y_scale is None else list(vectors.components(np.asarray(y_scale, dtype=np.float64)[rows]))
        old, new = ([vectors.quat_unit(q) for q in quats] for quats in (old, new))
        posed = posed_block(frames, [vectors.mat_inv(f)[0] for f in frames], heads, old, new, factors, joints)
        for i, point in enumerate(posed):
            vectors.join(point, out[rows, i])
    return out


def posed_block(frames, inverses, heads, rotations, new_rotations, y_scale, points) -> list[vectors.Vec]:
    """:func:`posed_points` for a block of chains, as component arrays: each bone's rotation frame ``F``
    (its pose matrix without its scale), ``F``'s inverse, its head, its local rotation and its new one (unit
    quaternions), its Y scale factor (``y_scale`` None for none), and the k + 1 joints. Returns the posed
    joints."""
    # Each bone's own change F T Y F^-1 about its head, with its turn T = R^T R' and Y the factor on its Y
    # scale, moves a joint below it; joint j moves by the changes of bones j - 1 to 0, in that order.
    turns = [vectors.quat_mul(vectors.quat_conjugate(r), new) for r, new in zip(rotations, new_rotations)]
    out = [points[0]]
    for j in range(1, len(frames) + 1):
        p = points[j]
        for i in reversed(range(j)):
            local = vectors.mat_vec(inverses[i], vectors.sub(p, heads[i]))
            if y_scale is not None:
                local = (local[0], local[1] * y_scale[i], local[2])
            p = vectors.add(heads[i], vectors.mat_vec(frames[i], vectors.quat_rotate(turns[i], local)))
        out.append(p)
    return out
