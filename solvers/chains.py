# SPDX-License-Identifier: GPL-3.0-or-later
"""One solve for many limbs: what the rig layer gathers goes in, new local rotations come out.

This is the single code path behind the Solve button, the live frame handler, the bake and the
scripting API. Every row is one chain (a limb at one frame) of ``k`` bones, all in the
armature's space:

1. the positions are solved in the chain's own *rigid space*, the frame of the first bone
   with its rotation taken out, so a parent's non-uniform scale cannot distort bone lengths;
2. the new joints become local rotations by the minimal-rotation write-back (:mod:`.local_rotation`), the
   first bone rolling as well to carry the knee's hinge into the new bend's plane, so the knee stays a hinge;
3. the rotations are posed as Blender will pose them (:mod:`.forward`); where a bone
   scaled unevenly across its axis makes the bones below it change length as they turn, the chain
   is solved again with the lengths they take (:mod:`.refine`), and a chain is reported reached
   only if its posed effector is on the target;
4. influence blends each bone from its animated (FK) rotation to the IK one; below full influence the
   tip stops between the animation and the goal, and the chain is reported reached only if that blend's
   effector is on the target all the same.

All four run a block of rows at a time on component arrays (:mod:`.vectors`), each input transposed once.

A chain given a plane is solved in it (:mod:`.plane`): its goal projected into the plane through its
first joint, its end bone's goal orientation turned into the plane, and reached there.
"""

import functools
from dataclasses import dataclass, field, fields
from typing import NamedTuple

import numpy as np

from . import plane, vectors
from .batch import check_range, limb_inputs, per_limb, solve_block, three_bone_block
from .constants import REACHED, STRAIGHT
from .errors import SolverError
from .forward import posed_block
from .local_rotation import Knee, block_bones, rolls, turn_bones, unscaled_bones
from .options import Reach
from .refine import consistent

BLOCK = 8192  #: chains per block: the component arrays of a block stay in cache
GOALS = ("end rotation", "toe goal")  #: the goal orientations' names, in errors

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
    return result_of(Chains(batch))


def result_of(chains: "Chains") -> ChainResult:
    """The result of :func:`solve_chains` for its checked inputs ``chains``, whichever kernel solves them."""
    solve = consistent(chains, chains.solve(chains.points))
    reached = solve.reached & (solve.miss <= REACHED * chains.size)
    off_plane = np.where(chains.off_plane > REACHED * chains.size, chains.off_plane, 0.0)
    return ChainResult(solve.rotations, solve.y_scale, solve.points, reached, off_plane)


class Arrays(NamedTuple):
    """The arrays of a :class:`ChainBatch`, float64, their shapes checked (their values are not)."""

    matrices: np.ndarray  #: (N, k, 4, 4)
    scales: np.ndarray  #: (N, k, 3)
    rotations: np.ndarray  #: (N, k, 4)
    points: np.ndarray  #: (N, k + 1, 3)
    target: np.ndarray  #: (N, 3)
    toe: tuple  #: the toe's (N, 1, 4, 4) matrices, (N, 1, 3) scales and (N, 1, 4) rotations, or three None
    goals: list  #: the goal orientations of the end bone and the toe: (N, 4) quaternions or (N, 3, 3) matrices


def arrays(batch: ChainBatch) -> Arrays:
    """The arrays of ``batch``, checked for shape; raises :class:`.SolverError` naming the one that is wrong."""
    matrices = np.asarray(batch.matrices, dtype=np.float64)
    if matrices.ndim != 4 or matrices.shape[2:] != (4, 4):
        raise SolverError(f"matrices must be (N, k, 4, 4), not {matrices.shape}")
    n, k = matrices.shape[:2]
    if k not in (2, 3):
        raise SolverError(f"chains must have 2 or 3 bones, not {k}")
    points = np.asarray(batch.points, dtype=np.float64)
    rotations = np.asarray(batch.rotations, dtype=np.float64)
    scales = np.asarray(batch.scales, dtype=np.float64)
    target = np.asarray(batch.target, dtype=np.float64)
    for name, array, dims, shape in (
        ("points", points, "k + 1, 3", (n, k + 1, 3)),
        ("rotations", rotations, "k, 4", (n, k, 4)),
        ("scales", scales, "k, 3", (n, k, 3)),
        ("target", target, "3", (n, 3)),
    ):
        if array.shape != shape:
            raise SolverError(f"{name} must be (N, {dims}) = {shape}, not {array.shape}")
    if batch.toe_matrices is not None and k != 3:
        raise SolverError("only three-bone chains carry a toe")
    if k == 3 and batch.end_rotation is None:
        raise SolverError("three-bone chains need an end rotation")
    toe = (None, None, None)
    if batch.toe_matrices is not None:  # a fourth bone of the write-back, which takes a goal rotation
        toe = tuple(
            np.asarray(value, dtype=np.float64) for value in (batch.toe_matrices, batch.toe_scales, batch.toe_rotations)
        )
        for name, array, shape in zip(("toe matrices", "toe scales", "toe rotations"), toe, ((4, 4), (3,), (4,))):
            if array.shape != (n, *shape):
                raise SolverError(f"{name} must be {(n, *shape)}, not {array.shape}")
        toe = tuple(array[:, None] for array in toe)
    goals = [
        np.asarray(value, dtype=np.float64)
        for value in (batch.end_rotation, batch.toe_goal)[: k - 2 + (toe[0] is not None)]
    ]
    for name, goal in zip(GOALS, goals):
        if goal.shape not in ((n, 4), (n, 3, 3)):
            raise SolverError(f"{name} must be (N, 4) quaternions or (N, 3, 3) matrices, not {goal.shape}")
    return Arrays(matrices, scales, rotations, points, target, toe, goals)


class Solved(NamedTuple):
    points: np.ndarray  #: (N, k + 1, 3) solved joints, armature space
    reached: np.ndarray  #: (N,) the solver's own verdict: the target is within the chain's range
    rotations: np.ndarray  #: (N, k, 4) the new local rotations, influence applied (k + 1 with a toe)
    y_scale: np.ndarray  #: (N, k) their Y scale factors, influence applied (k + 1 with a toe)
    posed: np.ndarray  #: (N, k + 1, 3) the joints as the write-back at full influence poses them
    drift: np.ndarray  #: (N,) the farthest a posed joint lies from its solved point
    miss: np.ndarray  #: (N,) how far the effector of the pose written (influence applied) lies from the target


class Chains:
    """The checked inputs of :func:`solve_chains`, solved for given bone lengths in their rigid space.

    The solve runs a block of rows at a time on component arrays (:mod:`.vectors`), each input transposed
    once; the refinement's few rows also see the rigid space as (N, 3, 3) matrices.
    """

    #: The first bone rolls to carry the knee's hinge (:class:`.local_rotation.Knee`); not in the refinement's
    #: solves, whose lengths are found for the first bone's smallest turn under its uneven scale.
    rolls_knee = True

    def __init__(self, batch: ChainBatch):
        self.batch = batch
        matrices, scales, rotations, points, target, toe, goals = arrays(batch)
        n, k = matrices.shape[:2]
        for name, value in (
            ("matrices", matrices),
            ("scales", scales),
            ("rotations", rotations),
            ("points", points),
            *zip(GOALS, goals),
            ("matrices", toe[0]),
            ("scales", toe[1]),
            ("rotations", toe[2]),
        ):
            if value is not None and not vectors.finite(value):
                raise SolverError(f"{name} must be finite")
        if not all((np.abs(s) > 1e-12).all() for s in (scales, toe[1]) if s is not None):
            raise SolverError("bones must not have zero scale")
        self.n, self.k = n, k
        self.matrices, self.scales, self.rotations, self.points, self.target = (
            matrices,
            scales,
            rotations,
            points,
            target,
        )
        self.goals = goals  #: the goal orientations, of the end bone and the toe: (N, 4) or (N, 3, 3) each
        if toe[0] is not None:  # the chain's bones and the toe, for the write-back
            matrices, scales, rotations = (
                np.concatenate(pair, axis=1) for pair in zip((matrices, scales, rotations), toe)
            )
        self.bones = matrices, scales, rotations
        self.unscaled = unscaled_bones(scales)
        squares = points[:, 1:] - points[:, :-1]
        squares *= squares
        lengths = np.sqrt(squares[..., 0] + squares[..., 1] + squares[..., 2])
        self.size = sum(lengths[:, i] for i in range(k))  #: the chain's length
        self._hold_in_planes(batch.plane)

    def _hold_in_planes(self, normals) -> None:
        """The chains given a plane (``flat``) and their normals (``normal``, armature space); their targets
        projected into their planes, and how far off they lay (``off_plane``)."""
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
        self.normal = normals
        projected, offset = plane.project(self.target[rows], self.points[rows, 0], normals[rows])
        self.target = self.target.copy()
        self.target[rows] = projected
        self.off_plane[rows] = np.abs(offset)

    noise = LENGTH_NOISE

    def subset(self, rows: np.ndarray) -> "Chains":
        return type(self)(take(self.batch, rows))

    @functools.cached_property
    def to_rigid(self) -> np.ndarray:
        """(N, 3, 3) from armature space to the rigid space, for the refinement."""
        frame = vectors.split_matrices(self.matrices[:, 0, :3, :3] / self.scales[:, 0, None, :])
        return vectors.join_matrices(_rigid_space(frame, vectors.quat_unit(vectors.split(self.rotations[:, 0])), 0)[1])

    def segment(self, i: int) -> np.ndarray:
        """(N, 3) the segment from joint ``i`` to the next, in the rigid space."""
        return np.einsum("nij,nj->ni", self.to_rigid, self.points[:, i + 1] - self.points[:, i])

    def frames_below(self) -> np.ndarray:
        """(N, 3, 3) the second bone's rotation frame without its own rotation, seen from the rigid space:
        it carries the scale of the bone above."""
        frame = self.matrices[:, 1, :3, :3] / self.scales[:, 1, None, :]
        turn = vectors.join_matrices(vectors.quat_to_mat(vectors.quat_unit(vectors.split(self.rotations[:, 1]))))
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

    def solve(self, length_points: np.ndarray) -> Solved:
        """Solve with the bones' lengths taken from ``length_points``, write back from the actual joints,
        pose the result and blend it by influence, a block of rows at a time."""
        batch, n, k = self.batch, self.n, self.k
        pole = None if batch.pole is None else np.asarray(batch.pole, dtype=np.float64)
        limbs = limb_inputs(n, pole, batch.pole_mask if pole is not None else None, batch.hinge, None, **batch.options)
        per_row = {
            "stretch": limbs.settings["mode"] == Reach.STRETCH,
            "use_hinge": per_limb(batch.use_hinge, n, bool),
            "end_plane": per_limb(batch.end_plane, n, bool),
            "influence": per_limb(batch.influence, n),
        }
        per_row = {name: np.broadcast_to(value, (n,)) for name, value in per_row.items()}
        bones = len(self.unscaled)
        out = Solved(
            np.empty((n, k + 1, 3)),
            np.empty(n, bool),
            np.empty((n, bones, 4)),
            np.ones((n, bones)),
            np.empty((n, k + 1, 3)),
            np.empty(n),
            np.empty(n),
        )
        if k == 3:
            self.end_direction = np.empty((n, 3))
        for rows in vectors.blocks(n, BLOCK):
            self._solve_block(
                rows,
                None if length_points is self.points else length_points[rows],
                limbs,
                {name: value[rows] for name, value in per_row.items()},
                out,
            )
        return out

    def _solve_block(self, rows: slice, length_points, limbs, per_row: dict, out: Solved) -> None:
        """:meth:`solve` for the rows ``rows`` (``length_points`` None: the joints as they are), into ``out``."""
        k, first = self.k, rows.start
        bones = block_bones(*(array[rows] for array in self.bones), self.unscaled)
        rotations = [vectors.quat_unit(bone.rotation) for bone in bones]  # as the bones are turned now, at unit length
        rigid, to_rigid, unit = _rigid_space(bones[0].frame, rotations[0], first)
        points = [tuple(p) for p in vectors.components(self.points[rows])]
        length_from = points if length_points is None else [tuple(p) for p in vectors.components(length_points)]
        origin = points[0]
        zero = np.zeros(len(origin[0]))  # the first joint is the origin of the rigid space
        joints = [(zero, zero, zero)] + [vectors.mat_vec(to_rigid, vectors.sub(p, origin)) for p in length_from[1:]]
        target = vectors.mat_vec(to_rigid, vectors.sub(tuple(vectors.components(self.target[rows])), origin))
        pole, use_pole, given_hinge, _, settings = limbs.block(rows)
        if pole is not None:
            pole = vectors.mat_vec(to_rigid, vectors.sub(pole, origin)) if use_pole.any() else None
        names = ("root", "knee", "end") if k == 2 else ("root", "knee", "ankle", "tip")
        for name, point in (*zip(names, joints), ("target", target), ("pole", pole)):
            if point is not None:
                check_range(name, point, first)
        if "softness" in self.batch.options:  # a distance: into the rigid space's units
            settings["softness"] = settings["softness"] / unit()
        hinge = self._hinge(rows, given_hinge, bones[0].frame, to_rigid, joints, per_row["use_hinge"])
        goals = [_orientations(goal[rows], name) for goal, name in zip(self.goals, GOALS)]
        flat = np.flatnonzero(self.flat[rows])  # the block's chains held in a plane: solved by .plane
        if len(flat):
            normal = tuple(vectors.components(self.normal[rows]))
            planar = _Planar(
                flat, vectors.mat_vec(vectors.mat_transpose(rigid), normal), settings, pole, use_pole, hinge
            )
        if k == 2:
            knee, end, reached, _, _, side = solve_block(*joints, target, pole, use_pole, hinge, None, settings, first)
            new_local = [joints[0], knee, end]
            if len(flat):
                new_local[1:], reached, side = planar.solve(
                    plane.solve_two_bone_plane, [*joints, target], new_local[1:], reached, side
                )
        else:
            if len(flat):  # the end bone's goal turned to lay its tail in the plane
                goals[0] = _into_planes(goals[0], flat, normal, vectors.sub(points[3], points[2]))
            # The end bone's tail runs along its Y axis, or against it when its own Y scale is negative.
            w, x, y, z = goals[0]
            sign = np.sign(self.scales[rows, 2, 1])
            along = (2.0 * (x * y - w * z) * sign, (1.0 - 2.0 * (x * x + z * z)) * sign, 2.0 * (y * z + w * x) * sign)
            direction = vectors.mat_vec(to_rigid, along)
            check_range("end direction", direction, first)
            *new_local, reached, _, _, side = three_bone_block(
                *joints, target, direction, pole, use_pole, hinge, per_row["end_plane"], settings, first
            )
            if len(flat):
                new_local, reached, side = planar.solve(
                    plane.solve_three_bone_plane, [*joints, target, direction], new_local, reached, side
                )
            new_local.insert(0, joints[0])
            vectors.join(vectors.scale(direction, 1.0 / vectors.norm(direction)), self.end_direction[rows])
        new_points = [origin] + [vectors.add(origin, vectors.mat_vec(rigid, p)) for p in new_local[1:]]
        if len(goals) == 2 and len(flat):  # the toe's too, along the foot as solved where it stands on the normal
            goals[1] = _into_planes(goals[1], flat, normal, vectors.sub(new_points[3], new_points[2]))

        # Write back from the actual joints, then pose the chain's bones with the rotations written.
        stretch = per_row["stretch"] if per_row["stretch"].any() else None
        first_goal = len(bones) - len(goals)
        if given_hinge is not None and not per_row["use_hinge"].all():
            given_hinge = vectors.where(per_row["use_hinge"], given_hinge, (0.0, 0.0, 0.0))
        knee = None
        if self.rolls_knee:
            knee = Knee(vectors.mat_vec(rigid, side), given_hinge, rolls(bones[0].frame, self.scales[rows, 0]))
        new_joints = new_points[1 : first_goal + 1]
        turned = list(turn_bones(bones, points[1 : first_goal + 1], new_joints, goals, stretch, knee))
        factors = None if stretch is None else [np.ones(len(stretch)) if f is None else f for _, f in turned[:k]]
        posed = posed_block(
            [b.frame for b in bones[:k]],
            [b.inverse for b in bones[:k]],
            [b.head for b in bones[:k]],
            rotations[:k],
            [q for q, _ in turned[:k]],
            factors,
            points,
        )
        out.drift[rows] = functools.reduce(
            np.maximum, (vectors.norm(vectors.sub(p, q)) for p, q in zip(posed, new_points))
        )
        target = tuple(vectors.components(self.target[rows]))
        out.miss[rows] = vectors.norm(vectors.sub(posed[-1], target))

        # Influence blends each bone from its animated rotation to the solved one, and its Y scale likewise.
        influence = per_row["influence"]
        blended = []
        for i, (before, (rotation, factor)) in enumerate(zip(rotations, turned)):
            blended.append(vectors.slerp(before, rotation, influence))
            vectors.join(blended[-1], out.rotations[rows, i])
            if factor is not None:
                out.y_scale[rows, i] = 1.0 + influence * (factor - 1.0)
        partial = influence < 1.0
        if partial.any():  # the tip stops short of the goal: the miss reported is the pose written's
            written = posed_block(
                [b.frame for b in bones[:k]],
                [b.inverse for b in bones[:k]],
                [b.head for b in bones[:k]],
                rotations[:k],
                [vectors.quat_unit(q) for q in blended[:k]],
                None if factors is None else [1.0 + influence * (f - 1.0) for f in factors],
                points,
            )
            out.miss[rows] = np.where(partial, vectors.norm(vectors.sub(written[-1], target)), out.miss[rows])
        for i in range(k + 1):
            vectors.join(new_points[i], out.points[rows, i])
            vectors.join(posed[i], out.posed[rows, i])
        out.reached[rows] = reached

    def _hinge(self, rows: slice, given, frame: vectors.Mat, to_rigid: vectors.Mat, joints: list[vectors.Vec], use):
        """Hinge axis in the rigid space: the given local axis carried by the first bone's current ``frame``,
        else the normal of the current bend, else none (zero); zero where hinges are off, and None where no
        row has one. The bend's normal is taken from the joints in the rigid space: under a parent's uneven
        scale a normal does not map like a direction, and mapped it could point backwards."""
        if not use.any():
            return None
        upper, lower = vectors.sub(joints[1], joints[0]), vectors.sub(joints[2], joints[1])
        bend = vectors.cross(upper, lower)
        straight = vectors.norm(bend) <= STRAIGHT * vectors.norm(upper) * vectors.norm(lower)
        axis = vectors.where(straight, (0.0, 0.0, 0.0), bend)
        if given is not None:
            has_axis = vectors.norm(given) > 0.0
            if has_axis.any():
                axis = vectors.where(has_axis, vectors.mat_vec(vectors.mat_mul(to_rigid, frame), given), axis)
        return axis if use.all() else vectors.where(use, axis, (0.0, 0.0, 0.0))


class _Planar(NamedTuple):
    """The chains of a block held in a plane (``rows``, indices into the block), their planes' normals in the
    rigid space (where a plane's normal maps by the transpose), and the block's options, for :mod:`.plane`."""

    rows: np.ndarray
    normal: vectors.Vec
    settings: dict
    pole: vectors.Vec | None
    use_pole: np.ndarray | None
    hinge: vectors.Vec | None

    def solve(
        self, solver, arrays: list[vectors.Vec], solved: list[vectors.Vec], reached: np.ndarray, side: vectors.Vec
    ):
        """``solved`` joints, ``reached`` and knee ``side`` (swivel) of the block with those of its chains in a
        plane replaced by what ``solver`` (:func:`.plane.solve_two_bone_plane` or its three-bone form) gives."""
        rows = self.rows

        def picked(vector):
            return None if vector is None else vectors.join(np.broadcast_arrays(*vector))[rows]

        settings = {key: value if np.ndim(value) == 0 else value[rows] for key, value in self.settings.items()}
        use_pole = self.use_pole if np.ndim(self.use_pole) == 0 else self.use_pole[rows]
        in_planes = solver(
            *map(picked, arrays),
            picked(self.normal),
            pole=picked(self.pole),
            pole_mask=use_pole,
            hinge=picked(self.hinge),
            **settings,
        )
        reached = reached.copy()
        reached[rows] = in_planes.reached
        joints = [_put(vector, rows, new) for vector, new in zip(solved, in_planes[: len(solved)])]
        return joints, reached, _put(side, rows, in_planes.side)


def _put(vector: vectors.Vec, rows: np.ndarray, values: np.ndarray) -> vectors.Vec:
    """``vector`` with the given rows replaced by ``values`` (M, 3)."""
    out = tuple(np.array(c, dtype=np.float64) for c in vector)
    for i, c in enumerate(out):
        c[rows] = values[:, i]
    return out


def _into_planes(goal: vectors.Quat, rows: np.ndarray, normal: vectors.Vec, fallback: vectors.Vec) -> vectors.Quat:
    """Unit quaternions ``goal`` with those of the given rows turned to lay their Y axis in the planes with
    ``normal`` (armature space), along ``fallback`` where it points along the normal
    (:func:`.plane.turned_into_plane`)."""
    turned = plane.turned_into_plane(vectors.join(goal)[rows], vectors.join(normal)[rows], vectors.join(fallback)[rows])
    out = tuple(np.array(c, dtype=np.float64) for c in goal)
    for i, c in enumerate(out):
        c[rows] = turned[:, i]
    return out


def _rigid_space(frame: vectors.Mat, rotation: vectors.Quat, first_row: int):
    """The rigid space of chains whose first bone has the rotation frame ``frame`` (its matrix without its
    own scale) and the local rotation ``rotation`` (unit quaternions): that frame with the bone's rotation
    taken back out, in which the chain turns rigidly. Returns it, its inverse, and a function giving the
    armature length of one of its units. Raises for a flat frame, naming its row (``first_row``: the
    first row's index)."""
    rigid = vectors.mat_mul(frame, vectors.mat_transpose(vectors.quat_to_mat(rotation)))
    det = vectors.mat_det(rigid)
    # Hadamard's bound: |det| reaches the product of the column lengths for orthogonal columns.
    a, b, c = (vectors.norm(column) for column in vectors.mat_columns(rigid))
    flat = ~(np.abs(det) > 1e-12 * (a * b * c))
    if flat.any():
        row = first_row + int(np.argmax(flat))
        raise SolverError(f"the first bone has a degenerate (flat) pose matrix (row {row})")
    return rigid, vectors.mat_inv(rigid)[0], lambda: np.cbrt(np.abs(det))


def _orientations(array: np.ndarray, name: str) -> vectors.Quat:
    """Unit quaternions from (N, 4) quaternions or from (N, 3, 3) matrices of any scale or shear (a goal seen
    from an armature scaled unevenly): the nearest rotation, turned to put its Y axis exactly along the
    matrix's, which is where the end bone points. A mirrored matrix (seen from an armature scaled by a
    negative factor) stands for its Y and Z axes: its X axis is flipped. ``name`` names the goal in errors."""
    if array.ndim != 3:
        return vectors.quat_unit(vectors.split(array))
    m = vectors.split_matrices(array)
    det = vectors.mat_det(m)
    a, b, c = (vectors.norm(column) for column in vectors.mat_columns(m))
    if not (np.abs(det) > 1e-12 * (a * b * c)).all():  # Hadamard's bound, as for the rigid space
        raise SolverError(f"{name} must not be a flat matrix (a zero scale)")
    mirrored = det < 0.0
    if mirrored.any():
        flip = np.where(mirrored, -1.0, 1.0)
        m = (m[0] * flip, m[1], m[2], m[3] * flip, m[4], m[5], m[6] * flip, m[7], m[8])
    nearest = vectors.nearest_rotation(m)
    aim = vectors.rotation_between((nearest[1], nearest[4], nearest[7]), (m[1], m[4], m[7]))
    return vectors.quat_unit(vectors.quat_mul(aim, vectors.mat_to_quat(nearest)))
