# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain solve of :mod:`.chains` for a character's few limbs, in plain Python floats.

:func:`.chains.solve_chains` works through blocks of thousands of chains with numpy and pays for that
with about a thousand numpy calls per solve, a millisecond whatever the number of chains. A rig with
two to four limbs, solved on every frame, needs a few tens of microseconds per limb instead: this is
the same solve, step for step and formula for formula, on Python floats, with the same input (a
:class:`.ChainBatch`) and the same result (a :class:`.ChainResult`). The positions come from the
scalar solvers the batch solvers are tested against (:mod:`.two_bone`, :mod:`.three_bone`, and
:mod:`.scalar_plane` for a chain held in a plane). A chain whose bones change length as they turn (below
a bone scaled unevenly across its axis) needs the refinement of :mod:`.refine`, which solves it tens of
times over: each of those solves is this kernel's too (:class:`_RefinedChains`).

:func:`solve_by_count` is the one entry: this kernel for up to :data:`SCALAR_LIMIT` chains, the batch kernel above.
"""

import math
from typing import NamedTuple

import numpy as np

from . import scalar_plane, vectors
from .chains import (
    GOALS,
    LENGTH_NOISE,
    ChainBatch,
    ChainResult,
    Chains,
    Solved,
    arrays,
    result_of,
    solve_chains,
    take,
)
from .constants import COORDINATE_LIMIT, REACHED, STRAIGHT
from .errors import SolverError
from .forward import posed_block
from .local_rotation import SHEAR_NOISE, rolls, shear, turn_matrix
from .options import Reach, ReachOptions, reach_settings
from .rotation import quat_multiply, quat_rotate, rotation_between
from .three_bone import solve_three_bone
from .two_bone import solve_two_bone
from .vectors import (
    add,
    cross,
    dot,
    mat_columns,
    mat_det,
    mat_inv,
    mat_mul,
    mat_to_quat,
    mat_transpose,
    mat_vec,
    nearest_rotation,
    norm,
    quat_conjugate,
    quat_to_mat,
    quat_unit,
    slerp,
    sub,
)

#: Up to this many chains :func:`solve_by_count` takes the scalar kernel: measured, the two kernels cost the same
#: at 16 to 20 chains of two or three bones (benchmarks/solvers.py prints both).
SCALAR_LIMIT = 16


def solve_by_count(batch: ChainBatch) -> ChainResult:
    """Solve every chain of ``batch`` with the kernel that is faster for their number."""
    return solve_scalar(batch) if len(batch.matrices) <= SCALAR_LIMIT else solve_chains(batch)


def solve_scalar(batch: ChainBatch) -> ChainResult:
    """:func:`.chains.solve_chains`, chain by chain in Python floats; raises :class:`.SolverError` on bad input."""
    matrices, scales, rotations, points, target, toe, goals = arrays(batch)
    n, k = matrices.shape[:2]
    if toe[0] is not None:  # the toe is a last bone of the write-back
        matrices, scales, rotations = (np.concatenate(pair, axis=1) for pair in zip((matrices, scales, rotations), toe))
    if n == 0:
        return solve_chains(batch)
    checked = (
        ("matrices", matrices),
        ("scales", scales),
        ("rotations", rotations),
        ("points", points),
        *zip(("end rotation", "toe goal"), goals),
    )
    if not math.isfinite(sum(value.sum() for _, value in checked)):  # one sum, then each for the message
        for name, value in checked:
            if not vectors.finite(value):
                raise SolverError(f"{name} must be finite")
    inputs, goal_rows = _row_inputs(matrices, scales, rotations, points, target, goals)
    settings = _Settings(batch, n)
    solved = []
    for row in range(n):
        chain = _solve_chain(k, row, inputs[row], goal_rows[row], settings)
        tolerance = REACHED * chain.size
        solved.append(
            None  # the pose it writes misses the solved joints: the refinement solves it again
            if chain.drift > LENGTH_NOISE * chain.size
            else (
                chain.rotations,
                chain.y_scale,
                [list(p) for p in chain.points],
                chain.reached and chain.miss <= tolerance,
                chain.off_plane if chain.off_plane > tolerance else 0.0,
            )
        )
    handed = [row for row, chain in enumerate(solved) if chain is None]
    if handed:
        again = result_of(_RefinedChains(take(batch, np.array(handed))))
        for i, row in enumerate(handed):
            solved[row] = (
                again.rotations[i].tolist(),
                again.y_scale[i].tolist(),
                again.points[i].tolist(),
                bool(again.reached[i]),
                float(again.off_plane[i]),
            )
    return ChainResult(*(np.array([chain[i] for chain in solved]) for i in range(5)))


def _row_inputs(matrices, scales, rotations, points, target, goals) -> tuple[list[dict], list[list]]:
    """Each chain's arrays as Python lists, as :func:`_solve_chain` takes them, and its goal orientations."""
    columns = {
        "matrices": matrices[:, :, :3].tolist(),
        "scales": scales.tolist(),
        "rotations": rotations.tolist(),
        "points": points.tolist(),
        "target": target.tolist(),
    }
    goal_columns = [g.tolist() for g in goals]
    n = len(columns["points"])
    return (
        [{name: values[row] for name, values in columns.items()} for row in range(n)],
        [[g[row] for g in goal_columns] for row in range(n)],
    )


class _RefinedChains(Chains):
    """Chains the refinement (:mod:`.refine`) solves, each of its solves in this kernel, row by row: a few
    chains solved tens of times, where the batch kernel's numpy calls would cost a millisecond a solve."""

    def __init__(self, batch: ChainBatch):
        super().__init__(batch)
        matrices, scales, rotations, points, target, toe, goals = arrays(batch)
        if toe[0] is not None:
            matrices, scales, rotations = (
                np.concatenate(pair, axis=1) for pair in zip((matrices, scales, rotations), toe)
            )
        self.inputs, self.goal_rows = _row_inputs(matrices, scales, rotations, points, target, goals)
        self.settings = _Settings(batch, self.n)

    def solve(self, length_points: np.ndarray) -> Solved:
        given = None if length_points is self.points else np.asarray(length_points).tolist()
        solved = [
            _solve_chain(
                self.k, row, self.inputs[row], self.goal_rows[row], self.settings, given and given[row], self.rolls_knee
            )
            for row in range(self.n)
        ]
        if self.k == 3:
            self.end_direction = np.array([chain.direction for chain in solved])
        return Solved(
            np.array([chain.points for chain in solved]),
            np.array([chain.reached for chain in solved]),
            np.array([chain.rotations for chain in solved]),
            np.array([chain.y_scale for chain in solved]),
            np.array([chain.posed for chain in solved]),
            np.array([chain.drift for chain in solved]),
            np.array([chain.miss for chain in solved]),
        )


def _planes(normals, n: int) -> list:
    """Each chain's plane normal, None where it has none (a zero normal), checked as the batch kernel does."""
    if normals is None:
        return [None] * n
    normals = np.asarray(normals, dtype=np.float64)
    if normals.shape != (n, 3) or not np.isfinite(normals).all():
        raise SolverError(f"plane normals must be finite and (N, 3) = {(n, 3)}, not {normals.shape}")
    return [tuple(normal) if normal[0] or normal[1] or normal[2] else None for normal in normals.tolist()]


class _Settings:
    """The per-chain settings of a batch as Python values, one list each, and the reach options they make."""

    def __init__(self, batch: ChainBatch, n: int):
        def rows(value, kind=float) -> list:
            if isinstance(value, bool | int | float):  # a setting shared by all chains, as most are
                return [kind(value)] * n
            if isinstance(value, np.ndarray) and value.shape == (n,) and value.dtype == np.dtype(kind):
                return value.tolist()  # one per chain, as the rig layer gives them
            try:
                return np.broadcast_to(np.asarray(value, dtype=kind), (n,)).tolist()
            except ValueError:
                raise SolverError(
                    f"per-limb settings must be scalars or have {n} rows, not shape {np.shape(value)}"
                ) from None

        options = reach_settings(batch.options)
        self.mode = rows(options["mode"], int)
        self.softness = rows(options["softness"])
        self.limits = list(
            zip(*(rows(options[name]) for name in ("max_stretch", "stretch_start", "min_bend", "max_bend")))
        )
        self.influence = rows(batch.influence)
        self.plane = _planes(batch.plane, n)
        self.use_hinge = rows(batch.use_hinge, bool)
        self.end_plane = rows(batch.end_plane, bool)
        self.hinge = None if batch.hinge is None else _points("hinge", batch.hinge, n)
        self.pole = None
        if batch.pole is not None:
            self.pole = _points("pole", batch.pole, n)
            self.use_pole = rows(True if batch.pole_mask is None else batch.pole_mask, bool)
        self._options = {}

    def options(self, row: int, unit: float) -> ReachOptions:
        """Row ``row``'s reach options, its softness in rigid-space units of ``unit`` armature units."""
        key = (self.mode[row], self.softness[row] / unit if self.softness[row] else 0.0, *self.limits[row])
        if key not in self._options:
            self._options[key] = ReachOptions(*key)
        return self._options[key]


class _Bone(NamedTuple):
    frame: tuple  #: its rotation frame (the pose matrix without its scale), nine floats, row-major
    inverse: tuple
    head: tuple
    rotation: tuple  #: its local rotation as given
    unit: tuple  #: that rotation at unit length


class _Chain(NamedTuple):
    """One chain solved by :func:`_solve_chain`."""

    rotations: list  #: new local rotations, influence applied (with the toe's)
    y_scale: list  #: their Y scale factors, influence applied
    points: list  #: the solved joints
    reached: bool  #: the solver's own verdict: the target is within the chain's range
    off_plane: float  #: how far the target lay off the chain's plane
    posed: list  #: the joints as the rotations written at full influence pose them
    drift: float  #: the farthest a posed joint lies from its solved point
    miss: float  #: how far the effector of the pose written (influence applied) lies from the target
    direction: tuple | None  #: a three-bone chain's end direction, unit, in the rigid space
    size: float  #: the chain's length


def _solve_chain(
    k: int, row: int, c: dict, goals: list, settings: _Settings, lengths_from=None, rolls_knee: bool = True
) -> _Chain:
    """One chain, its bones' lengths taken from the joints ``lengths_from`` (default: its own, ``c["points"]``;
    the refinement gives others, :meth:`.chains.Chains.solve`); ``rolls_knee``: :attr:`.chains.Chains.rolls_knee`."""
    bones = [_bone(i, m, s, q) for i, (m, s, q) in enumerate(zip(c["matrices"], c["scales"], c["rotations"]))]
    points = [tuple(p) for p in c["points"]]
    origin = points[0]

    # The rigid space: the first bone's frame with its rotation taken back out.
    frame = bones[0].frame
    rigid = mat_mul(frame, mat_transpose(quat_to_mat(bones[0].unit)))
    to_rigid, det = mat_inv(rigid)
    columns = [norm(column) for column in mat_columns(rigid)]
    if not abs(det) > 1e-12 * (columns[0] * columns[1] * columns[2]):
        raise SolverError(f"the first bone has a degenerate (flat) pose matrix (row {row})")
    joints = [(0.0, 0.0, 0.0)] + [mat_vec(to_rigid, sub(tuple(p), origin)) for p in (lengths_from or points)[1:]]
    normal, goal, off_plane = settings.plane[row], tuple(c["target"]), 0.0
    if normal is not None:  # held in a plane: the goal projected into it
        goal, offset = scalar_plane.project(goal, origin, scalar_plane.unit_normal(normal))
        off_plane = abs(offset)
        rigid_normal = mat_vec(mat_transpose(rigid), normal)
    target = mat_vec(to_rigid, sub(goal, origin))
    pole = None
    if settings.pole is not None and settings.use_pole[row]:
        pole = mat_vec(to_rigid, sub(settings.pole[row], origin))
    names = ("root", "knee", "end") if k == 2 else ("root", "knee", "ankle", "tip")
    for name, point in (*zip(names, joints), ("target", target), ("pole", pole)):
        if point is not None and not (
            abs(point[0]) < COORDINATE_LIMIT and abs(point[1]) < COORDINATE_LIMIT and abs(point[2]) < COORDINATE_LIMIT
        ):
            raise SolverError(f"{name} must be finite and within ±{COORDINATE_LIMIT:g} (row {row})")
    options = settings.options(row, math.cbrt(abs(det)) if settings.softness[row] else 1.0)
    hinge = _hinge(row, settings, frame, to_rigid, joints)

    goal_rotations = [_orientation(goal, name) for goal, name in zip(goals, GOALS)]
    direction = None
    if k == 2 and normal is not None:
        *new_local, reached, _, side = scalar_plane.solve_two_bone_plane(
            *joints, target, rigid_normal, pole, hinge, options
        )
    elif k == 2:
        solved = solve_two_bone(*joints, target, pole=pole, hinge=hinge, options=options)
        new_local, reached, side = [solved.knee, solved.end], solved.reached, solved.side
    else:
        if normal is not None:  # the end bone's goal turned to lay its tail in the plane
            goal_rotations[0] = scalar_plane.turned_into_plane(goal_rotations[0], normal, sub(points[3], points[2]))
        # The end bone's tail runs along its Y axis, or against it when its own Y scale is negative.
        w, x, y, z = goal_rotations[0]
        sign = math.copysign(1.0, c["scales"][2][1])
        along = (2.0 * (x * y - w * z) * sign, (1.0 - 2.0 * (x * x + z * z)) * sign, 2.0 * (y * z + w * x) * sign)
        direction = mat_vec(to_rigid, along)
        if normal is not None:
            *new_local, reached, side = scalar_plane.solve_three_bone_plane(
                *joints, target, direction, rigid_normal, pole, hinge, options
            )
        else:
            solved = solve_three_bone(
                *joints, target, direction, pole=pole, hinge=hinge, end_plane=settings.end_plane[row], options=options
            )
            new_local, reached, side = [solved.knee, solved.ankle, solved.tip], solved.reached, solved.side
    new_points = [origin] + [add(origin, mat_vec(rigid, p)) for p in new_local]
    if normal is not None and len(goals) == 2:  # the toe's goal too, along the foot as solved
        goal_rotations[1] = scalar_plane.turned_into_plane(goal_rotations[1], normal, sub(new_points[3], new_points[2]))

    # Write back from the actual joints, then pose the chain's bones with the rotations written.
    stretch = settings.mode[row] == Reach.STRETCH
    first_goal = len(bones) - len(goals)
    given = settings.hinge[row] if settings.hinge is not None and settings.use_hinge[row] else None
    knee = None
    if rolls_knee and rolls(bones[0].frame, c["scales"][0]):
        knee = (mat_vec(rigid, side), given if given is not None and norm(given) > 0.0 else None)
    new_joints = new_points[1 : first_goal + 1]
    turned = _turn_bones(bones, points[1 : first_goal + 1], new_joints, goal_rotations, stretch, knee)
    posed = _posed(bones[:k], [q for q, _ in turned[:k]], [f for _, f in turned[:k]], points)
    size = sum(norm(sub(b, a)) for a, b in zip(points, points[1:]))
    drift = max(norm(sub(p, q)) for p, q in zip(posed, new_points))

    t = settings.influence[row]
    rotations = [slerp(bone.unit, q, t) for bone, (q, _) in zip(bones, turned)]
    y_scale = [1.0 + t * (f - 1.0) for _, f in turned]
    if t < 1.0:  # the tip stops short of the goal: the miss is the pose written's
        posed_written = _posed(bones[:k], [quat_unit(q) for q in rotations[:k]], y_scale[:k], points)
        miss = norm(sub(posed_written[-1], goal))
    else:
        miss = norm(sub(posed[-1], goal))
    if direction is not None:
        length = norm(direction)
        direction = (direction[0] / length, direction[1] / length, direction[2] / length)
    return _Chain(rotations, y_scale, new_points, bool(reached), off_plane, posed, drift, miss, direction, size)


def _bone(i: int, m: list, s: list, q: list) -> _Bone:
    """Bone ``i`` from the first three rows of its pose matrix, its scale and its local rotation."""
    if not (abs(s[0]) > 1e-12 and abs(s[1]) > 1e-12 and abs(s[2]) > 1e-12):
        raise SolverError("bones must not have zero scale")
    (m00, m01, m02, _), (m10, m11, m12, _), (m20, m21, m22, _) = m
    if s[0] == s[1] == s[2] == 1.0:
        frame = (m00, m01, m02, m10, m11, m12, m20, m21, m22)
    else:
        a, b, c = s
        frame = (m00 / a, m01 / b, m02 / c, m10 / a, m11 / b, m12 / c, m20 / a, m21 / b, m22 / c)
    inverse, det = mat_inv(frame)
    if not abs(det) > 1e-300:
        raise SolverError(f"bone {i} has a degenerate (flat) pose matrix")
    rotation = tuple(q)
    return _Bone(frame, inverse, (m[0][3], m[1][3], m[2][3]), rotation, quat_unit(rotation))


def _hinge(row: int, settings: _Settings, frame: tuple, to_rigid: tuple, joints: list):
    """The hinge axis in the rigid space, or None (see :meth:`.chains.Chains._hinge`)."""
    if not settings.use_hinge[row]:
        return None
    given = None if settings.hinge is None else settings.hinge[row]
    if given is not None and norm(given) > 0.0:
        return mat_vec(mat_mul(to_rigid, frame), given)
    upper, lower = sub(joints[1], joints[0]), sub(joints[2], joints[1])
    bend = cross(upper, lower)
    return None if norm(bend) <= STRAIGHT * norm(upper) * norm(lower) else bend


def _turn_bones(bones: list, old: list, new: list, goals: list, stretch: bool, knee: tuple) -> list:
    """Each bone's new local rotation and Y scale factor, from the top of the chain (see
    :func:`.local_rotation.turn_bones`); ``knee``: the new knee's swivel in armature space and the knee's forward
    hinge axis in the first bone's frame (or None)."""
    k, first_goal = len(bones), len(old)
    new = list(new)
    carried = None
    out = []
    for i, bone in enumerate(bones):
        frame = bone.frame if carried is None else mat_mul(carried, bone.frame)
        factor = 1.0
        if i >= first_goal:
            new_rotation, turn = _goal_turn(frame, bone.rotation, goals[i - first_goal])
        else:
            old_local = mat_vec(bone.inverse, sub(old[i], bone.head))
            new_local = mat_vec(bone.inverse, sub(new[i], bone.head))
            turn = rotation_between(old_local, new_local)
            if i == 0 and first_goal > 1 and knee is not None:
                old_lower = mat_vec(bone.inverse, sub(old[1], old[0]))
                new_lower = mat_vec(bone.inverse, sub(new[1], new[0]))
                side = mat_vec(bone.inverse, knee[0])
                twist = _hinge_twist(turn, old_local, old_lower, new_local, new_lower, side, knee[1])
                turn = quat_multiply(twist, turn)
            new_rotation = quat_unit(quat_multiply(bone.rotation, turn))
            if stretch:
                factor = norm(new_local) / max(norm(old_local), 1e-300)
        out.append((new_rotation, factor))
        for j in range(i + 1, first_goal):  # carried back through this bone's change
            local = mat_vec(bone.inverse, sub(new[j], bone.head))
            local = quat_rotate(quat_conjugate(turn), local)
            new[j] = add(bone.head, mat_vec(bone.frame, (local[0], local[1] / factor, local[2])))
        if goals and i + 1 < k:
            carried = mat_mul(mat_mul(frame, turn_matrix(turn, factor)), bone.inverse)
    return out


def _hinge_twist(turn: tuple, old_upper, old_lower, new_upper, new_lower, side, hinge) -> tuple:
    """The roll about the first bone's new direction carrying the knee's hinge (see
    :func:`.local_rotation.hinge_twist`); ``hinge`` may be None."""
    before = cross(old_upper, old_lower)
    if _crosses(before, old_upper, old_lower):
        if hinge is not None and dot(before, hinge) < 0.0:
            before = (-before[0], -before[1], -before[2])
    elif hinge is not None:
        before = hinge
    else:
        return (1.0, 0.0, 0.0, 0.0)
    after = cross(new_upper, new_lower)
    if not _crosses(after, new_upper, new_lower):
        to_end = add(new_upper, new_lower)  # the swivel across the line to the end, whether extended or folded
        after = cross(side, to_end)
        if not _crosses(after, side, to_end):
            return (1.0, 0.0, 0.0, 0.0)
    carried = quat_rotate(turn, before)
    length = norm(new_upper)
    axis = (new_upper[0] / length, new_upper[1] / length, new_upper[2] / length)
    sine = dot(cross(carried, after), axis)
    cosine = dot(carried, after) - dot(carried, axis) * dot(after, axis)
    size = sine * sine + cosine * cosine
    if not size > STRAIGHT * STRAIGHT * dot(carried, carried) * dot(after, after):
        return (1.0, 0.0, 0.0, 0.0)
    length = math.sqrt(size)
    w, k = (length + cosine, sine) if cosine >= 0.0 else (sine, length - cosine)
    n = math.sqrt(w * w + k * k)
    w, k = w / n, k / n
    return (w, axis[0] * k, axis[1] * k, axis[2] * k)


def _crosses(normal, a, b) -> bool:
    """Whether ``normal = a x b`` shows a plane, ``a`` and ``b`` not parallel (see :func:`.local_rotation._normal`)."""
    return dot(normal, normal) > STRAIGHT * STRAIGHT * dot(a, a) * dot(b, b)


def _goal_turn(frame: tuple, rotation: tuple, goal: tuple) -> tuple:
    """The new local rotation giving a bone whose carried frame is ``frame`` the orientation ``goal``, and its
    turn (see :func:`.local_rotation._goal_turn`)."""
    before = mat_mul(frame, mat_transpose(quat_to_mat(rotation)))
    mirrored = mat_det(before) < 0.0
    if mirrored:
        before = (-before[0], before[1], before[2], -before[3], before[4], before[5], -before[6], before[7], before[8])
    g = quat_to_mat(goal)
    local = mat_mul(mat_transpose(nearest_rotation(before)), g)
    new_rotation = mat_to_quat(local)
    if shear(before) > SHEAR_NOISE:
        wanted = mat_vec(mat_inv(before)[0], (g[1], g[4], g[7]))
        new_rotation = quat_multiply(rotation_between((local[1], local[4], local[7]), wanted), new_rotation)
    if mirrored:
        new_rotation = (new_rotation[0], new_rotation[1], -new_rotation[2], -new_rotation[3])
    new_rotation = quat_unit(new_rotation)
    return new_rotation, quat_multiply(quat_conjugate(quat_unit(rotation)), new_rotation)


def _posed(bones: list, new_rotations: list, y_scale: list, points: list) -> list:
    """The joints as the new rotations and Y scales pose the chain: :func:`.forward.posed_block` in floats."""
    frames, inverses, heads, _, units = zip(*bones)
    return posed_block(frames, inverses, heads, units, new_rotations, y_scale, points)


def _orientation(goal: list, name: str) -> tuple:
    """A unit quaternion from a quaternion or from a 3x3 matrix of any scale or shear (see
    :func:`.chains._orientations`)."""
    if not isinstance(goal[0], list):
        return quat_unit(tuple(goal))
    m = tuple(e for row in goal for e in row)
    lengths = [norm(column) for column in mat_columns(m)]
    if not abs(mat_det(m)) > 1e-12 * (lengths[0] * lengths[1] * lengths[2]):
        raise SolverError(f"{name} must not be a flat matrix (a zero scale)")
    if mat_det(m) < 0.0:  # mirrored: it stands for its Y and Z axes
        m = (-m[0], m[1], m[2], -m[3], m[4], m[5], -m[6], m[7], m[8])
    near = nearest_rotation(m)
    aim = rotation_between((near[1], near[4], near[7]), (m[1], m[4], m[7]))
    return quat_unit(quat_multiply(aim, mat_to_quat(near)))


def _points(name: str, value, n: int) -> list:
    """``value`` as n points (one point is shared by all), checked finite and in range like the batch solvers'."""
    try:
        array = np.broadcast_to(np.asarray(value, dtype=np.float64), (n, 3))
    except ValueError:
        raise SolverError(f"{name} must be an ({n}, 3) array or one 3-vector, not shape {np.shape(value)}") from None
    if not np.abs(array).max(initial=0.0) < COORDINATE_LIMIT:
        row = int(np.argmax(~(np.abs(array) < COORDINATE_LIMIT).all(axis=1)))
        raise SolverError(f"{name} must be finite and within ±{COORDINATE_LIMIT:g} (row {row})")
    return array.tolist()
