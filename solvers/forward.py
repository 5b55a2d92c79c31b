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

from . import rotation_modes, vectors

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


def loose_end(matrices, scales, rotations, new_rotations, y_scale, posed, location) -> tuple[np.ndarray, np.ndarray]:
    """The local rotation (N, 4) and location (N, 3) that pose the last bone of each of N chains where the
    write-back would carry it, for a last bone that hangs from no bone of its chain (an exported IK foot under
    the root): nothing carries it, so it must be moved by its own location as well as turned.

    ``matrices`` (N, k, 4, 4), ``scales`` (N, k, 3), ``rotations`` and ``new_rotations`` (N, k, 4), ``y_scale``
    (N, k): the chain as solved, its last bone posed as if it were the child of the bone above (each bone's
    change ``M S^-1 R^-1 R' Y S M^-1`` carries it, as :func:`posed_block`). ``posed`` (N, 4, 4): the last
    bone's pose matrix as Blender has it, and ``location`` (N, 3) its location channel; its parent, which the
    solve does not move, and its own scale stay. For a bone posed ``M = B T(l) R S`` (``B``: its parent and
    rest), the new ``T(l') R' = T(l) R S M^-1 M' S^-1``."""
    matrices = np.asarray(matrices, dtype=np.float64)
    n, k = matrices.shape[:2]
    scale = np.zeros((n, k, 4, 4))
    scale[:, :, [0, 1, 2, 3], [0, 1, 2, 3]] = np.concatenate([np.asarray(scales, np.float64), np.ones((n, k, 1))], -1)
    stretch = np.ones((n, k, 4))
    if y_scale is not None:
        stretch[:, :, 1] = y_scale
    turn = np.zeros((n, k, 4, 4))
    turn[:, :, 3, 3] = 1.0
    old = np.asarray(rotations, dtype=np.float64).reshape(-1, 4)
    new = np.asarray(new_rotations, dtype=np.float64).reshape(-1, 4)
    turn[:, :, :3, :3] = rotation_modes.quat_to_matrix(
        vectors.join(vectors.quat_mul(vectors.quat_conjugate(vectors.split(old)), vectors.split(new)))
    ).reshape(n, k, 3, 3)
    unscaled = np.linalg.inv(scale)
    changes = matrices @ unscaled @ turn @ (stretch[..., None] * scale) @ np.linalg.inv(matrices)
    carried = matrices[:, -1]
    for i in reversed(range(k)):
        carried = changes[:, i] @ carried
    own = scale[:, -1] @ np.linalg.inv(np.asarray(posed, dtype=np.float64)) @ carried @ unscaled[:, -1]
    rotation = rotation_modes.quat_to_matrix(old.reshape(n, k, 4)[:, -1])
    turned = rotation_modes.matrix_to_quat(rotation @ rotation_modes.nearest_rotation(own[:, :3, :3]))
    return turned, np.asarray(location, dtype=np.float64) + np.einsum("nij,nj->ni", rotation, own[:, :3, 3])
