# SPDX-License-Identifier: GPL-3.0-or-later
"""One solve for many limbs: what the rig layer gathers goes in, new local rotations come out.

This is the single code path behind the Solve button, the live frame handler, the bake and the
scripting API. Every row is one chain (a limb at one frame) of ``k`` bones, all in the
armature's space:

1. the positions are solved in the chain's own *rigid space*, the frame of the first bone
   with its rotation taken out, so a parent's non-uniform scale cannot distort bone lengths;
2. the new joints become local rotations by the minimal-rotation write-back
   (:func:`.local_rotation.chain_local_rotations`);
3. influence blends each bone from its animated (FK) rotation to the IK one.
"""

from dataclasses import dataclass, field, fields
from typing import NamedTuple

import numpy as np

from . import rotation_modes, soa
from .batch import solve_three_bone_batch, solve_two_bone_batch
from .errors import SolverError
from .local_rotation import chain_local_rotations
from .options import Reach

#: A current bend whose normal is shorter than this fraction of ``upper * lower`` counts as straight.
STRAIGHT = 1e-6


@dataclass
class ChainBatch:
    """N chains of k (2 or 3) bones, in armature space. Arrays are float64 unless noted.

    ``matrices`` (N, k, 4, 4), ``scales`` (N, k, 3) and ``rotations`` (N, k, 4): each bone's pose
    matrix, local scale and local rotation quaternion, as animated (FK). ``points`` (N, k + 1, 3):
    the joints, first bone's head to the effector. ``target`` (N, 3): where the effector goes.
    ``end_rotation``: the last bone's goal orientation (three-bone chains only), as (N, 4)
    quaternions or (N, 3, 3) matrices whose nearest rotations are meant (a target's, scaled or
    not). ``hinge``
    (N, 3): the knee's hinge axis in the first bone's rotation frame, zero to take it from the
    current bend. Settings are scalars or (N,) arrays; ``softness`` is in armature units.
    ``toe_matrices``, ``toe_scales``, ``toe_rotations`` and ``toe_goal`` (three-bone chains, all
    or none): a bone below the end bone that takes the goal orientation ``toe_goal`` too, as
    a toe staying flat on the ground while its foot rolls.
    """

    matrices: np.ndarray
    scales: np.ndarray
    rotations: np.ndarray
    points: np.ndarray
    target: np.ndarray
    end_rotation: np.ndarray | None = None
    pole: np.ndarray | None = None
    pole_mask: np.ndarray | bool = False
    hinge: np.ndarray | None = None
    use_hinge: np.ndarray | bool = True
    natural: np.ndarray | bool = False
    influence: np.ndarray | float = 1.0
    options: dict = field(default_factory=dict)  #: mode, softness, max_stretch, stretch_start, min_bend, max_bend
    toe_matrices: np.ndarray | None = None
    toe_scales: np.ndarray | None = None
    toe_rotations: np.ndarray | None = None
    toe_goal: np.ndarray | None = None


def stack(batches: list[ChainBatch]) -> ChainBatch:
    """One batch holding the rows of several, in order (a limb set at many frames, for a bake)."""
    counts = [len(b.matrices) for b in batches]

    def rows(value, count):  # a setting as ``count`` rows; scalars are broadcast
        array = np.asarray(value)
        return np.broadcast_to(array, (count, *array.shape[1:])) if array.ndim else np.full(count, array)

    def join(values):
        if values[0] is None:
            return None
        if isinstance(values[0], dict):
            return {key: join([v[key] for v in values]) for key in values[0]}
        return np.concatenate([rows(v, c) for v, c in zip(values, counts)])

    return ChainBatch(**{f.name: join([getattr(b, f.name) for b in batches]) for f in fields(ChainBatch)})


class ChainResult(NamedTuple):
    rotations: np.ndarray  #: (N, k, 4) new local rotations, influence applied (k + 1 with a toe)
    y_scale: np.ndarray  #: (N, k) factor for each bone's local Y scale (k + 1 with a toe)
    points: np.ndarray  #: (N, k + 1, 3) solved joints (at full influence)
    reached: np.ndarray  #: (N,) bool


def solve_chains(batch: ChainBatch) -> ChainResult:
    """Solve every chain of ``batch``; raises :class:`.SolverError` on bad input."""
    matrices = np.asarray(batch.matrices, dtype=np.float64)
    if matrices.ndim != 4 or matrices.shape[2:] != (4, 4):
        raise SolverError(f"matrices must be (N, k, 4, 4), not {matrices.shape}")
    n, k = matrices.shape[:2]
    if k not in (2, 3):
        raise SolverError(f"chains must have 2 or 3 bones, not {k}")
    points = np.asarray(batch.points, dtype=np.float64)
    rotations = np.asarray(batch.rotations, dtype=np.float64)
    scales = np.asarray(batch.scales, dtype=np.float64)
    # Checked here, before the rigid space is built from them, so that the message names the culprit.
    target = np.asarray(batch.target, dtype=np.float64)
    for name, array, dims, shape in (("points", points, "k + 1, 3", (n, k + 1, 3)),
                                     ("rotations", rotations, "k, 4", (n, k, 4)),
                                     ("scales", scales, "k, 3", (n, k, 3)),
                                     ("target", target, "3", (n, 3))):  # fmt: skip
        if array.shape != shape:
            raise SolverError(f"{name} must be (N, {dims}) = {shape}, not {array.shape}")
    for name, value in (("matrices", matrices), ("scales", scales), ("rotations", rotations), ("points", points),
                        ("end rotation", batch.end_rotation)):  # fmt: skip
        if value is not None and not np.isfinite(value).all():
            raise SolverError(f"{name} must be finite")
    if not (np.abs(scales) > 1e-12).all():
        raise SolverError("bones must not have zero scale")

    # The rigid space: the first bone's rotation frame (its matrix without its own scale), with
    # that bone's rotation taken back out. The chain turns rigidly in it.
    frame = matrices[:, 0, :3, :3] / scales[:, 0, None, :]
    rigid = frame @ np.swapaxes(rotation_modes.quat_to_matrix(_unit(rotations[:, 0])), 1, 2)
    # Hadamard's bound: |det| reaches the product of the column lengths for orthogonal columns.
    flat = ~(np.abs(np.linalg.det(rigid)) > 1e-12 * np.prod(np.linalg.norm(rigid, axis=1), axis=1))
    if flat.any():
        raise SolverError(f"the first bone has a degenerate (flat) pose matrix (row {int(np.argmax(flat))})")
    to_rigid = soa.join_matrices(soa.mat_inv(soa.split_matrices(rigid))[0])
    origin = points[:, 0]

    def local(p):
        return np.einsum("nij,nj->ni", to_rigid, p - origin)

    def direction(v):
        return np.einsum("nij,nj->ni", to_rigid, v)

    joints = [local(points[:, i]) for i in range(k + 1)]
    options = dict(batch.options)
    if "softness" in options:  # a distance: into the rigid space's units
        options["softness"] = np.asarray(options["softness"], dtype=np.float64) / np.cbrt(np.abs(np.linalg.det(rigid)))
    common = dict(
        pole=None if batch.pole is None else local(np.asarray(batch.pole, dtype=np.float64)),
        pole_mask=batch.pole_mask if batch.pole is not None else None,
        hinge=_hinge(batch, to_rigid @ frame, joints, n),
        **options,
    )
    target = local(target)
    end_rotation = None
    if k == 2:
        solved = solve_two_bone_batch(joints[0], joints[1], joints[2], target, **common)
        new_local = [joints[0], solved.knee, solved.end]
    else:
        if batch.end_rotation is None:
            raise SolverError("three-bone chains need an end rotation")
        end_rotation = _orientations(batch.end_rotation)
        end_direction = rotation_modes.quat_to_matrix(end_rotation)[:, :, 1]
        solved = solve_three_bone_batch(*joints, target, direction(end_direction), natural=batch.natural, **common)
        new_local = [joints[0], solved.knee, solved.ankle, solved.tip]
    new_points = np.stack([origin + np.einsum("nij,nj->ni", rigid, p) for p in new_local], axis=1)

    stretching = np.broadcast_to(np.asarray(batch.options.get("mode", Reach.EXTEND)) == Reach.STRETCH, (n,))
    solved_points = new_points
    if batch.toe_matrices is not None:
        if k != 3:
            raise SolverError("only three-bone chains carry a toe")
        toe_tip = points[:, 3:]  # the toe takes a goal rotation: its own child point is not used
        matrices = np.concatenate([matrices, np.asarray(batch.toe_matrices, dtype=np.float64)[:, None]], axis=1)
        scales = np.concatenate([scales, np.asarray(batch.toe_scales, dtype=np.float64)[:, None]], axis=1)
        rotations = np.concatenate([rotations, np.asarray(batch.toe_rotations, dtype=np.float64)[:, None]], axis=1)
        points = np.concatenate([points, toe_tip], axis=1)
        new_points = np.concatenate([new_points, toe_tip], axis=1)
        end_rotation = np.stack([end_rotation, _orientations(batch.toe_goal)], axis=1)
        k = 4
    ik = chain_local_rotations(matrices, scales, rotations, points, new_points, end_rotation, stretching)
    influence = np.broadcast_to(np.asarray(batch.influence, dtype=np.float64), (n,))
    blended = np.empty_like(ik.rotations)
    for i in range(k):
        blended[:, i] = rotation_modes.slerp(_unit(rotations[:, i]), ik.rotations[:, i], influence)
    y_scale = 1.0 + influence[:, None] * (ik.y_scale - 1.0)
    return ChainResult(blended, y_scale, solved_points, solved.reached)


def _orientations(value) -> np.ndarray:
    """(N, 4) unit quaternions from quaternions or from matrices of any scale."""
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 3:
        return rotation_modes.matrix_to_quat(rotation_modes.nearest_rotation(array))
    return _unit(array)


def _unit(q: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if not (n > 0.0).all():
        raise SolverError("rotation quaternions must not be zero")
    return q / n


def _hinge(batch: ChainBatch, frame: np.ndarray, joints: list[np.ndarray], n: int) -> np.ndarray:
    """Hinge axis in the rigid space: the given local axis carried by the first bone's current frame
    (``frame``, seen from the rigid space), else the normal of the current bend, else none (zero).
    Zero where hinges are off. The bend's normal is taken from the joints in the rigid space: under a
    parent's uneven scale a normal does not map like a direction, and mapped it could point backwards."""
    local_axis = np.zeros((n, 3)) if batch.hinge is None else np.asarray(batch.hinge, dtype=np.float64)
    carried = np.einsum("nij,nj->ni", frame, local_axis)
    upper, lower = joints[1] - joints[0], joints[2] - joints[1]
    bend = np.cross(upper, lower)
    straight = np.linalg.norm(bend, axis=1) <= STRAIGHT * np.linalg.norm(upper, axis=1) * np.linalg.norm(lower, axis=1)
    current = np.where(straight[:, None], 0.0, bend)
    given = np.linalg.norm(local_axis, axis=1) > 0.0
    axis = np.where(given[:, None], carried, current)
    use = np.broadcast_to(np.asarray(batch.use_hinge, bool), (n,))
    return np.where(use[:, None], axis, 0.0)
