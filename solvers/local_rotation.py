# SPDX-License-Identifier: GPL-3.0-or-later
"""From new joint positions to new local bone rotations (article 001, "adjusting the orientations").

A pose bone's armature-space matrix is ``M = P @ T @ R @ S``: whatever its parent and rest pose
contribute (``P``, which may hold the parent's non-uniform scale), then its own location,
rotation and scale. Rotating the bone means replacing ``R`` by ``R @ D``. In the bone's
*rotation frame* ``F = M @ S^-1 = P @ T @ R`` a point attached to the bone sits at
``F^-1 @ p``; ``D`` is the minimal rotation taking that local direction of the child joint's
old position to the local direction of its new one. The minimal rotation adds no twist about
the bone, and working in ``F`` rather than in ``M`` keeps it right for any roll, offset
(unconnected) joints, the bone's own non-uniform scale and its parent's.

After each bone, its change ``F @ D @ F^-1`` (about its head) is carried to the bones below it,
exactly as Blender's hierarchy would carry it, before the next bone is turned. This needs
neither the rest matrices nor the inheritance flags: only each bone's current pose matrix,
local scale and local rotation, which is what a rig hands over.
"""

from typing import NamedTuple

import numpy as np

from . import rotation_modes, soa
from .errors import SolverError


#: Relative departure from a similarity that single-precision pose matrices show without any shear.
SHEAR_NOISE = 1e-4


class LocalRotations(NamedTuple):
    rotations: np.ndarray  #: (N, k, 4) new local rotation quaternions
    y_scale: np.ndarray  #: (N, k) factor for each bone's local Y scale (1 unless stretching)


def chain_local_rotations(
    matrices, scales, rotations, old_points, new_points, end_rotation=None, stretch=None
) -> LocalRotations:
    """New local rotations for N chains of k bones each.

    ``matrices`` (N, k, 4, 4): each bone's armature-space pose matrix; ``scales`` (N, k, 3): its
    local scale; ``rotations`` (N, k, 4): its local rotation quaternion (w, x, y, z).
    ``old_points`` and ``new_points`` (N, k + 1, 3): the chain's joints before and after the
    solve, starting with the first bone's head; point ``i + 1`` moves with bone ``i``.
    ``end_rotation`` (N, 4) or (N, m, 4), optional: armature-space rotations the last bone (or
    the last ``m`` bones) must take instead of their minimal rotations: a foot or hand that copies
    its target's orientation, a toe that stays flat while its foot rolls.
    ``stretch`` (N,) bool, optional: rows whose bones may also scale along their Y axis so each
    child point lands at its new distance too (exact when the child lies on the bone's axis,
    as in a connected chain); the bones below inherit that scale as Blender's hierarchy does.
    All maths in float64.
    """
    matrices = np.asarray(matrices, dtype=np.float64)
    scales = np.asarray(scales, dtype=np.float64)
    rotations = np.asarray(rotations, dtype=np.float64)
    old_points = np.asarray(old_points, dtype=np.float64)
    new_points = np.asarray(new_points, dtype=np.float64)
    n, k = matrices.shape[:2]
    if matrices.shape != (n, k, 4, 4) or scales.shape != (n, k, 3) or rotations.shape != (n, k, 4):
        raise SolverError("matrices, scales and rotations must be (N, k, 4, 4), (N, k, 3) and (N, k, 4)")
    if old_points.shape != (n, k + 1, 3) or new_points.shape != (n, k + 1, 3):
        raise SolverError(f"old and new points must be (N, k + 1, 3) = ({n}, {k + 1}, 3)")
    for name, array in (("matrices", matrices), ("scales", scales), ("rotations", rotations),
                        ("old points", old_points), ("new points", new_points)):  # fmt: skip
        if not np.isfinite(array).all():
            raise SolverError(f"{name} must be finite")
    if not (np.abs(scales) > 1e-12).all():
        raise SolverError("bones must not have zero scale")

    goals = None if end_rotation is None else np.asarray(end_rotation, dtype=np.float64).reshape(n, -1, 4)
    first_goal = k if goals is None else k - goals.shape[1]
    if first_goal < 0:
        raise SolverError(f"{goals.shape[1]} goal rotations for a chain of {k} bones")

    # Accumulated change of the bones above, as an affine map x -> W x + w.
    w_lin: soa.Mat | None = None
    w_off: soa.Vec | None = None
    stretch = np.zeros(n, bool) if stretch is None else np.broadcast_to(np.asarray(stretch, bool), (n,))
    result = np.empty((n, k, 4))
    y_scale = np.ones((n, k))
    for i in range(k):
        inv_scale = soa.split(1.0 / scales[:, i])
        frame = soa.mat_scale_columns(soa.split_matrices(matrices[:, i, :3, :3]), inv_scale)
        head = soa.split(matrices[:, i, :3, 3])
        rotation = soa.split(rotations[:, i])
        if w_lin is not None:
            frame = soa.mat_mul(w_lin, frame)
            head = soa.add(soa.mat_vec(w_lin, head), w_off)
        frame_inv, det = soa.mat_inv(frame)
        if not (np.abs(det) > 1e-300).all():
            raise SolverError(f"bone {i} has a degenerate (flat) pose matrix")

        factor = np.ones(n)
        if i >= first_goal:
            # The frame before this bone's own rotation is F @ R^-1; its rotation part times the
            # new local rotation must equal the goal.
            before = soa.mat_mul(frame, soa.mat_transpose(soa.quat_to_mat(rotation)))
            goal = soa.quat_to_mat(_normalised(soa.split(goals[:, i - first_goal])))
            local = soa.mat_mul(soa.mat_transpose(_rotation_part(before)), goal)
            # Where ``before`` shears (a parent scaled unevenly), its rotation part alone would not
            # point the bone along the goal: turn the local Y axis onto the goal's Y as seen
            # through ``before``. Blender's single-precision matrices are never exactly
            # orthogonal; below that noise the rotation part is the better estimate.
            wanted = soa.mat_vec(soa.mat_inv(before)[0], (goal[1], goal[4], goal[7]))
            aim = soa.rotation_between((local[1], local[4], local[7]), wanted)
            sheared = _shear(before) > SHEAR_NOISE
            aim = tuple(np.where(sheared, a, identity) for a, identity in zip(aim, (1.0, 0.0, 0.0, 0.0)))
            new_rotation = _normalised(soa.quat_mul(aim, soa.mat_to_quat(local)))
            turn = soa.quat_mul(_conjugate(_normalised(rotation)), new_rotation)  # R^-1 R'
        else:
            old_child = soa.split(old_points[:, i + 1])
            if w_lin is not None:  # where the parents' change carried it
                old_child = soa.add(soa.mat_vec(w_lin, old_child), w_off)
            old_local = soa.mat_vec(frame_inv, soa.sub(old_child, head))
            new_local = soa.mat_vec(frame_inv, soa.sub(soa.split(new_points[:, i + 1]), head))
            turn = soa.rotation_between(old_local, new_local)
            new_rotation = _normalised(soa.quat_mul(rotation, turn))
            factor = np.where(stretch, soa.norm(new_local) / np.maximum(soa.norm(old_local), 1e-300), 1.0)
        y_scale[:, i] = factor
        if i < k - 1:
            # This bone's change about its head, F T Y F^-1 (T: its local turn, Y: the stretch
            # along its axis), composed after the parents' change.
            m = soa.quat_to_mat(turn)
            m = (m[0], m[1] * factor, m[2], m[3], m[4] * factor, m[5], m[6], m[7] * factor, m[8])
            change = soa.mat_mul(soa.mat_mul(frame, m), frame_inv)
            shift = soa.sub(head, soa.mat_vec(change, head))
            if w_lin is None:
                w_lin, w_off = change, shift
            else:
                w_lin = soa.mat_mul(change, w_lin)
                w_off = soa.add(soa.mat_vec(change, w_off), shift)
        result[:, i] = soa.join(new_rotation)
    return LocalRotations(result, y_scale)


def _shear(m: soa.Mat) -> np.ndarray:
    """How far each matrix is from a rotation times a uniform scale (0 for none)."""
    gram = soa.mat_mul(soa.mat_transpose(m), m)
    size = (gram[0] + gram[4] + gram[8]) / 3.0
    off = [np.abs(g - (size if i in (0, 4, 8) else 0.0)) for i, g in enumerate(gram)]
    return np.max(off, axis=0) / size


def _conjugate(q: soa.Quat) -> soa.Quat:
    return (q[0], -q[1], -q[2], -q[3])


def _normalised(q: soa.Quat) -> soa.Quat:
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if not (n > 0.0).all():
        raise SolverError("rotation quaternions must not be zero")
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


def _rotation_part(m: soa.Mat) -> soa.Mat:
    """Nearest rotation to each matrix (polar decomposition); exact for rotation times any uniform scale."""
    return soa.split_matrices(rotation_modes.nearest_rotation(soa.join_matrices(m)))
