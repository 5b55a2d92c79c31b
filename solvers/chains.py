# SPDX-License-Identifier: GPL-3.0-or-later
"""One solve for many limbs: what the rig layer gathers goes in, new local rotations come out.

This is the single code path behind the Solve button, the live frame handler, the bake and the
scripting API. Every row is one chain (a limb at one frame) of ``k`` bones, all in the
armature's space:

1. the positions are solved in the chain's own *rigid space*, the frame of the first bone
   with its rotation taken out, so a parent's non-uniform scale cannot distort bone lengths;
2. the new joints become local rotations by the minimal-rotation write-back
   (:func:`.local_rotation.chain_local_rotations`);
3. the rotations are posed as Blender will pose them (:func:`.forward.posed_points`); where a bone
   scaled unevenly across its axis makes the bones below it change length as they turn, the chain
   is solved again with the lengths they take (:mod:`.refine`), and a chain is reported reached
   only if its posed effector is on the target;
4. influence blends each bone from its animated (FK) rotation to the IK one.

A chain given a plane is solved in it (:mod:`.plane`): its goal projected into the plane through its
first joint, its end bone's goal orientation turned into the plane, and reached there.
"""

from dataclasses import dataclass, field, fields
from functools import partial
from typing import NamedTuple

import numpy as np

from . import plane, rotation_modes, soa
from .batch import solve_three_bone_batch, solve_two_bone_batch
from .constants import REACHED, STRAIGHT
from .errors import SolverError
from .forward import posed_points
from .local_rotation import LocalRotations, chain_local_rotations
from .options import Reach
from .refine import consistent, scatter

#: Chains whose pose misses the solved joints by more than this, relative to the chain, are solved again
#: (:mod:`.refine`). Less counts as reached: single-precision pose matrices alone leave up to about 1e-6.
LENGTH_NOISE = REACHED


@dataclass
class ChainBatch:
    """N chains of k (2 or 3) bones, in armature space. Arrays are float64 unless noted.

    ``matrices`` (N, k, 4, 4), ``scales`` (N, k, 3) and ``rotations`` (N, k, 4): each bone's pose
    matrix, local scale and local rotation quaternion, as animated (FK). ``points`` (N, k + 1, 3):
    the joints, first bone's head to the effector. ``target`` (N, 3): where the effector goes.
    ``end_rotation``: the last bone's goal orientation (three-bone chains only), as (N, 4)
    quaternions or (N, 3, 3) matrices whose nearest rotations are meant (a target's, scaled or not).
    ``hinge`` (N, 3): the knee's hinge axis in the first bone's rotation frame, zero to take it from
    the current bend. Settings are scalars or (N,) arrays; ``softness`` is in armature units.
    ``toe_matrices``, ``toe_scales``, ``toe_rotations`` and ``toe_goal`` (three-bone chains, all or
    none): a bone below the end bone that takes the goal orientation ``toe_goal`` too, as a toe
    staying flat on the ground while its foot rolls. ``plane`` (N, 3): the normal of the plane each
    chain is held in, through its first joint; zero rows (or None): none.
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
    end_plane: np.ndarray | bool = False  #: three-bone chains without a pole swivel into the end bone's plane
    influence: np.ndarray | float = 1.0
    options: dict = field(default_factory=dict)  #: mode, softness, max_stretch, stretch_start, min_bend, max_bend
    toe_matrices: np.ndarray | None = None
    toe_scales: np.ndarray | None = None
    toe_rotations: np.ndarray | None = None
    toe_goal: np.ndarray | None = None
    plane: np.ndarray | None = None


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


def take(batch: ChainBatch, rows: np.ndarray) -> ChainBatch:
    """The batch of the given rows of ``batch``; settings shared by all rows stay shared."""
    return ChainBatch(**{f.name: _rows(getattr(batch, f.name), rows) for f in fields(ChainBatch)})


def _rows(value, rows: np.ndarray):
    """The given rows of a per-chain array, or of each in a dict; shared settings (scalars, None) as they are."""
    if isinstance(value, dict):
        return {key: _rows(v, rows) for key, v in value.items()}
    if value is None or np.ndim(value) == 0:
        return value
    return np.asarray(value)[rows]


class ChainResult(NamedTuple):
    rotations: np.ndarray  #: (N, k, 4) new local rotations, influence applied (k + 1 with a toe)
    y_scale: np.ndarray  #: (N, k) factor for each bone's local Y scale (k + 1 with a toe)
    points: np.ndarray  #: (N, k + 1, 3) solved joints (at full influence)
    reached: np.ndarray  #: (N,) bool: on the target, or for a chain in a plane on the target's projection
    off_plane: np.ndarray  #: (N,) how far the target lay off the chain's plane; 0 within the reach tolerance


def solve_chains(batch: ChainBatch) -> ChainResult:
    """Solve every chain of ``batch``; raises :class:`.SolverError` on bad input.

    A chain is reported reached only if the pose written puts its effector on the target (for a chain
    in a plane, the target's projection), to :data:`REACHED` of the chain's length, as
    :func:`.forward.posed_points` finds it.
    """
    chains = _Chains(batch)
    solve = consistent(chains, chains.solve(chains.points))
    miss = np.linalg.norm(solve.posed[:, -1] - chains.target, axis=1)
    reached = solve.reached & (miss <= REACHED * chains.size)

    ik, k = solve.ik, chains.k + (batch.toe_matrices is not None)
    rotations = (
        chains.rotations
        if batch.toe_rotations is None
        else np.concatenate([chains.rotations, np.asarray(batch.toe_rotations, dtype=np.float64)[:, None]], axis=1)
    )
    influence = np.broadcast_to(np.asarray(batch.influence, dtype=np.float64), (chains.n,))
    blended = np.empty_like(ik.rotations)
    for i in range(k):
        blended[:, i] = rotation_modes.slerp(_unit(rotations[:, i]), ik.rotations[:, i], influence)
    y_scale = 1.0 + influence[:, None] * (ik.y_scale - 1.0)
    off_plane = np.where(chains.off_plane > REACHED * chains.size, chains.off_plane, 0.0)
    return ChainResult(blended, y_scale, solve.points, reached, off_plane)


class _Solved(NamedTuple):
    points: np.ndarray  #: (N, k + 1, 3) solved joints, armature space
    reached: np.ndarray  #: (N,) the solver's own verdict: the target is within the chain's range
    ik: LocalRotations  #: the write-back at full influence (toe included)
    posed: np.ndarray  #: (N, k + 1, 3) the joints as that write-back poses them


class _Chains:
    """The checked inputs of :func:`solve_chains` and their rigid space, solved for given bone lengths."""

    def __init__(self, batch: ChainBatch):
        self.batch = batch
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
        for name, array, dims, shape in (
            ("points", points, "k + 1, 3", (n, k + 1, 3)),
            ("rotations", rotations, "k, 4", (n, k, 4)),
            ("scales", scales, "k, 3", (n, k, 3)),
            ("target", target, "3", (n, 3)),
        ):
            if array.shape != shape:
                raise SolverError(f"{name} must be (N, {dims}) = {shape}, not {array.shape}")
        for name, value in (
            ("matrices", matrices),
            ("scales", scales),
            ("rotations", rotations),
            ("points", points),
            ("end rotation", batch.end_rotation),
        ):
            if value is not None and not np.isfinite(value).all():
                raise SolverError(f"{name} must be finite")
        if not (np.abs(scales) > 1e-12).all():
            raise SolverError("bones must not have zero scale")
        self.n, self.k = n, k
        self.matrices, self.scales, self.rotations = matrices, scales, rotations
        self.points, self.target = points, target

        # The rigid space: the first bone's rotation frame (its matrix without its own scale), with
        # that bone's rotation taken back out. The chain turns rigidly in it.
        self.frame = matrices[:, 0, :3, :3] / scales[:, 0, None, :]
        self.rigid = self.frame @ np.swapaxes(rotation_modes.quat_to_matrix(_unit(rotations[:, 0])), 1, 2)
        # Hadamard's bound: |det| reaches the product of the column lengths for orthogonal columns.
        det = np.linalg.det(self.rigid)
        flat = ~(np.abs(det) > 1e-12 * np.prod(np.linalg.norm(self.rigid, axis=1), axis=1))
        if flat.any():
            raise SolverError(f"the first bone has a degenerate (flat) pose matrix (row {int(np.argmax(flat))})")
        self.to_rigid = soa.join_matrices(soa.mat_inv(soa.split_matrices(self.rigid))[0])
        self.unit = np.cbrt(np.abs(det))  # armature length of one rigid-space unit
        self.size = np.linalg.norm(np.diff(points, axis=1), axis=2).sum(axis=1)  #: the chain's length
        if batch.toe_matrices is not None and k != 3:
            raise SolverError("only three-bone chains carry a toe")
        self._hold_in_planes(batch.plane)

    def _hold_in_planes(self, normals) -> None:
        """The chains given a plane (``flat``), their normals in the armature (``normal``) and in the rigid
        space, where a plane's normal maps by the transpose; their targets projected, and how far off."""
        self.flat, self.off_plane = np.zeros(self.n, bool), np.zeros(self.n)
        if normals is None:
            return
        normals = np.asarray(normals, dtype=np.float64)
        if normals.shape != (self.n, 3) or not np.isfinite(normals).all():
            raise SolverError(f"plane normals must be finite and (N, 3) = {(self.n, 3)}, not {normals.shape}")
        self.flat = np.abs(normals).max(axis=1) > 0.0
        if not self.flat.any():
            return
        rows = self.flat
        self.normal, self.rigid_normal = normals, np.einsum("nji,nj->ni", self.rigid, normals)
        projected, offset = plane.project(self.target[rows], self.points[rows, 0], normals[rows])
        self.target = self.target.copy()
        self.target[rows] = projected
        self.off_plane[rows] = np.abs(offset)

    noise = LENGTH_NOISE

    def subset(self, rows: np.ndarray) -> "_Chains":
        return _Chains(take(self.batch, rows))

    def segment(self, i: int) -> np.ndarray:
        """(N, 3) the segment from joint ``i`` to the next, in the rigid space."""
        return np.einsum("nij,nj->ni", self.to_rigid, self.points[:, i + 1] - self.points[:, i])

    def frames_below(self) -> np.ndarray:
        """(N, 3, 3) the second bone's rotation frame without its own rotation, seen from the rigid space:
        it carries the scale of the bone above."""
        frame = self.matrices[:, 1, :3, :3] / self.scales[:, 1, None, :]
        turn = rotation_modes.quat_to_matrix(_unit(self.rotations[:, 1]))
        return self.to_rigid @ frame @ np.swapaxes(turn, 1, 2)

    def goal_distance(self, lengths: np.ndarray) -> np.ndarray:
        """(N,) how far from the first bone's head the second bone's child must go, in the rigid space, with
        the bones at ``lengths``: the target, or a three-bone chain's ankle goal (after a :meth:`solve`)."""
        goal = self.local(self.target)
        if self.k == 3:
            goal = goal - self.end_direction * lengths[:, 2:3]
        return np.linalg.norm(goal, axis=1)

    def local(self, p: np.ndarray) -> np.ndarray:
        """Points (N, 3) in the rigid space, about the first bone's head."""
        return np.einsum("nij,nj->ni", self.to_rigid, p - self.points[:, 0])

    def lengths(self, points: np.ndarray) -> np.ndarray:
        """(N, k) rigid-space lengths of the segments from each joint to the next."""
        return np.linalg.norm(np.einsum("nij,nkj->nki", self.to_rigid, np.diff(points, axis=1)), axis=2)

    def with_lengths(self, lengths: np.ndarray) -> np.ndarray:
        """The joints with every segment below the first at the given rigid-space length, along its
        current direction: what the solve takes the bones' lengths from."""
        segments = np.diff(self.points, axis=1)
        factors = lengths / self.lengths(self.points)
        factors[:, 0] = 1.0  # the first bone turns rigidly: its segment keeps its length
        return np.concatenate(
            [self.points[:, :1], self.points[:, :1] + np.cumsum(segments * factors[..., None], axis=1)], axis=1
        )

    def solve(self, length_points: np.ndarray) -> _Solved:
        """Solve with the bones' lengths taken from ``length_points``, write back from the actual joints,
        and pose the result."""
        batch, n, k = self.batch, self.n, self.k
        joints = [self.local(length_points[:, i]) for i in range(k + 1)]
        options = dict(batch.options)
        if "softness" in options:  # a distance: into the rigid space's units
            options["softness"] = np.asarray(options["softness"], dtype=np.float64) / self.unit
        common = dict(
            pole=None if batch.pole is None else self.local(np.asarray(batch.pole, dtype=np.float64)),
            pole_mask=batch.pole_mask if batch.pole is not None else None,
            hinge=_hinge(batch, self.to_rigid @ self.frame, joints, n),
            **options,
        )
        target = self.local(self.target)
        end_rotation = None
        if k == 2:
            solved = self._solve_rows(solve_two_bone_batch, plane.solve_two_bone_plane, [*joints, target], common)
            new_local = [joints[0], solved.knee, solved.end]
        else:
            if batch.end_rotation is None:
                raise SolverError("three-bone chains need an end rotation")
            end_rotation = self._into_planes(_orientations(batch.end_rotation), self.points[:, 3] - self.points[:, 2])
            # The end bone's tail runs along its Y axis, or against it when its own Y scale is negative.
            along = rotation_modes.quat_to_matrix(end_rotation)[:, :, 1] * np.sign(self.scales[:, 2, 1:2])
            end_direction = np.einsum("nij,nj->ni", self.to_rigid, along)
            solid = partial(solve_three_bone_batch, natural=batch.end_plane)
            solved = self._solve_rows(solid, plane.solve_three_bone_plane, [*joints, target, end_direction], common)
            self.end_direction = end_direction / np.linalg.norm(end_direction, axis=1, keepdims=True)
            new_local = [joints[0], solved.knee, solved.ankle, solved.tip]
        origin = self.points[:, 0]
        new_points = np.stack([origin + np.einsum("nij,nj->ni", self.rigid, p) for p in new_local], axis=1)

        stretching = np.broadcast_to(np.asarray(batch.options.get("mode", Reach.EXTEND)) == Reach.STRETCH, (n,))
        matrices, scales, rotations, points = self.matrices, self.scales, self.rotations, self.points
        written = new_points
        if batch.toe_matrices is not None:
            toe_tip = points[:, 3:]  # the toe takes a goal rotation: its own child point is not used
            matrices = np.concatenate([matrices, np.asarray(batch.toe_matrices, dtype=np.float64)[:, None]], axis=1)
            scales = np.concatenate([scales, np.asarray(batch.toe_scales, dtype=np.float64)[:, None]], axis=1)
            rotations = np.concatenate([rotations, np.asarray(batch.toe_rotations, dtype=np.float64)[:, None]], axis=1)
            points = np.concatenate([points, toe_tip], axis=1)
            written = np.concatenate([new_points, toe_tip], axis=1)
            toe_goal = self._into_planes(_orientations(batch.toe_goal), new_points[:, 3] - new_points[:, 2])
            end_rotation = np.stack([end_rotation, toe_goal], axis=1)
        ik = chain_local_rotations(matrices, scales, rotations, points, written, end_rotation, stretching)
        posed = posed_points(
            self.matrices, self.scales, self.rotations, self.points, ik.rotations[:, :k], ik.y_scale[:, :k]
        )
        return _Solved(new_points, solved.reached, ik, posed)

    def _solve_rows(self, solid, planar, arrays: list[np.ndarray], settings: dict):
        """``solid`` (a 3D batch solver) for the chains without a plane, ``planar`` (its :mod:`.plane` form) for
        those with one, given rigid-space ``arrays`` (N, 3) and ``settings``."""
        if not self.flat.any():
            return solid(*arrays, **settings)
        rows = np.flatnonzero(self.flat)
        in_planes = planar(*(a[rows] for a in arrays), self.rigid_normal[rows], **_rows(settings, rows))
        return in_planes if len(rows) == self.n else scatter(solid(*arrays, **settings), in_planes, rows)

    def _into_planes(self, orientations: np.ndarray, fallback: np.ndarray) -> np.ndarray:
        """Armature-space orientations (N, 4), those of the chains with a plane turned to lay their Y axis in
        it (:func:`.plane.turned_into_plane`; ``fallback``: the direction laid in where Y is the normal)."""
        if not self.flat.any():
            return orientations
        rows = self.flat
        turned = orientations.copy()
        turned[rows] = plane.turned_into_plane(orientations[rows], self.normal[rows], fallback[rows])
        return turned


def _orientations(value) -> np.ndarray:
    """(N, 4) unit quaternions from quaternions or from matrices of any scale or shear (a goal seen from an
    armature scaled unevenly): the nearest rotation, turned to put its Y axis exactly along the matrix's,
    which is where the end bone points. A mirrored matrix (seen from an armature scaled by a negative
    factor) stands for its Y and Z axes: its X axis is flipped."""
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != 3:
        return _unit(array)
    array = array.copy()
    array[np.linalg.det(array) < 0.0, :, 0] *= -1.0
    nearest = rotation_modes.nearest_rotation(array)
    aim = soa.rotation_between(soa.split(nearest[:, :, 1]), soa.split(array[:, :, 1]))
    return soa.join(soa.quat_mul(aim, soa.split(rotation_modes.matrix_to_quat(nearest))))


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
