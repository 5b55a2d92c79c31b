# SPDX-License-Identifier: GPL-3.0-or-later
"""Object and bone matrices from their transform channels, composed as Blender composes them, for many
frames at once (float64).

- An object: ``parent @ parent_inverse @ T(location + delta) @ D @ R @ S(scale * delta)``, where ``D`` is
  the delta rotation in the object's own rotation mode, and an object without a parent is its basis alone.
- A pose bone that inherits its parent's rotation and scale fully: ``parent_pose @ offset @ T(l) @ R @ S``,
  its rest ``offset = parent_rest^-1 @ rest`` (a root bone's is its rest). A connected bone ignores its
  location; a bone without Local Location moves along its parent's posed axes rather than its own rest
  axes, which is the same product with ``l`` turned back by the offset's rotation.

Both are products down a tree of parents (:func:`down_tree`). The rig layer evaluates the channels and
makes sure nothing else (constraints, other ways of inheriting) moves what is composed here.
"""

import numpy as np

from . import rotation_modes
from .errors import SolverError


def _quaternion_products() -> np.ndarray:
    """(10, 9): a rotation matrix's entries, row-major, from the products ``q[a] * q[b]`` (a <= b, in the order of
    :data:`_PAIRS`) of a unit quaternion's components (w, x, y, z)."""
    table = np.zeros((4, 4, 9))
    w, x, y, z = range(4)
    entries = (
        {(w, w): 1, (x, x): 1, (y, y): -1, (z, z): -1},
        {(x, y): 2, (w, z): -2},
        {(x, z): 2, (w, y): 2},
        {(x, y): 2, (w, z): 2},
        {(w, w): 1, (x, x): -1, (y, y): 1, (z, z): -1},
        {(y, z): 2, (w, x): -2},
        {(x, z): 2, (w, y): -2},
        {(y, z): 2, (w, x): 2},
        {(w, w): 1, (x, x): -1, (y, y): -1, (z, z): 1},
    )
    for entry, terms in enumerate(entries):
        for (a, b), factor in terms.items():
            table[a, b, entry] = factor
    return table[_PAIRS]


_PAIRS = np.triu_indices(4)
_QUATERNION_PRODUCTS = _quaternion_products()


def rotation_matrices(values, mode: str) -> np.ndarray:
    """(..., 3, 3) rotation matrices of rotation channels ``values`` in Blender's rotation ``mode``:
    (..., 4) quaternions (normalised first; a zero one is Blender's half turn about X), (..., 4)
    axis-angles or (..., 3) Euler angles. Raises :class:`.SolverError` for values that are not finite."""
    values = np.asarray(values, dtype=np.float64)
    flat = values.reshape(-1, values.shape[-1])
    if mode == "QUATERNION":
        if not np.isfinite(flat).all():
            raise SolverError("quaternions must be finite")
        length = np.einsum("ij,ij->i", flat, flat)
        zero = length == 0.0
        if zero.any():
            flat, length = np.where(zero[:, None], [0.0, 1.0, 0.0, 0.0], flat), np.where(zero, 1.0, length)
        # Each entry is a sum of products of two components over the squared length.
        matrices = (flat[:, _PAIRS[0]] * flat[:, _PAIRS[1]]) @ _QUATERNION_PRODUCTS / length[:, None]
        return matrices.reshape(*values.shape[:-1], 3, 3)
    if mode == "AXIS_ANGLE":
        quaternions = rotation_modes.axis_angle_to_quat(flat)
    else:
        quaternions = rotation_modes.euler_to_quat(flat, mode)
    return rotation_modes.quat_to_matrix(quaternions).reshape(*values.shape[:-1], 3, 3)


def compose(location, rotation, scale) -> np.ndarray:
    """(..., 4, 4) matrices ``T(location) @ rotation @ S(scale)`` from (..., 3), (..., 3, 3) and (..., 3)."""
    rotation = np.asarray(rotation, dtype=np.float64)
    out = np.zeros((*rotation.shape[:-2], 4, 4))
    out[..., :3, :3] = rotation * np.asarray(scale, dtype=np.float64)[..., None, :]
    out[..., :3, 3] = location
    out[..., 3, 3] = 1.0
    return out


def bone_locals(parents, rest, connected, local_location, location, rotation, scale) -> np.ndarray:
    """(F, B, 4, 4) each bone's matrix relative to its parent's pose matrix (for :func:`down_tree`).

    ``parents`` (B,): each bone's parent's position among these bones, -1 for a root bone; ``rest``
    (B, 4, 4): armature-space rest matrices; ``connected``, ``local_location`` (B,) bool: the bones'
    flags; ``location``, ``scale`` (F, B, 3) and ``rotation`` (F, B, 3, 3): their channels over F frames.
    """
    parents = np.asarray(parents)
    rest = np.asarray(rest, dtype=np.float64)
    offsets = rest.copy()
    child = parents >= 0
    offsets[child] = np.linalg.solve(rest[parents[child]], rest[child])
    location = np.where(np.asarray(connected)[None, :, None], 0.0, np.asarray(location, dtype=np.float64))
    along_parent = ~np.asarray(local_location, dtype=bool)
    if along_parent.any():
        turn_back = np.linalg.inv(offsets[along_parent, :3, :3])
        location[:, along_parent] = np.einsum("bij,fbj->fbi", turn_back, location[:, along_parent])
    return offsets @ compose(location, rotation, scale)


def down_tree(parents, local) -> np.ndarray:
    """(F, N, 4, 4) each node's matrix ``parent's @ local`` (a root's: its ``local``), for ``local``
    (F, N, 4, 4) and ``parents`` (N,), each node's parent's position among these nodes or -1."""
    parents = np.asarray(parents)
    depth = np.zeros(len(parents), int)
    for _ in range(len(parents)):
        deeper = np.where(parents >= 0, depth[np.maximum(parents, 0)] + 1, 0)
        if np.array_equal(deeper, depth):
            break
        depth = deeper
    else:
        if len(parents):
            raise SolverError("parents must form a tree")
    out = np.array(local, dtype=np.float64)
    for level in range(1, int(depth.max(initial=0)) + 1):
        nodes = np.flatnonzero(depth == level)
        out[:, nodes] = out[:, parents[nodes]] @ out[:, nodes]
    return out
