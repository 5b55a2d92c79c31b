# SPDX-License-Identifier: GPL-3.0-or-later
"""From new joint positions to new local bone rotations (article 001, "adjusting the orientations").

A pose bone's armature-space matrix is ``M = P @ T @ R @ S``: whatever its parent and rest pose
contribute (``P``, which may hold the parent's non-uniform scale), then its own location,
rotation and scale. Rotating the bone means replacing ``R`` by ``R @ D``. In the bone's
*rotation frame* ``F = M @ S^-1 = P @ T @ R`` a point attached to the bone sits at
``F^-1 @ p``; ``D`` is the minimal rotation taking that local direction of the child joint's
old position to the local direction of its new one. The minimal rotation adds no twist about
the bone, and working in ``F`` rather than in ``M`` keeps it right for any roll, offset
(unconnected) joints, the bone's own non-uniform scale and its parent's. The child lands on its
new point when that is as far from the bone's head, in the bone's frame, as the old one; below a
bone scaled unevenly across its axis it may not be, and :func:`.chains.solve_chains` then solves
for points that are (:mod:`.refine`).

After each bone, its change ``D = F T Y F^-1`` about its head (``T``: its local turn, ``Y``: a
stretch along its axis) moves the bones below it, exactly as Blender's hierarchy would. Rather
than carrying every frame below forward through ``D``, the new points below are carried back
through ``D^-1``: a bone below then turns in its own, unchanged frame, and a point costs less
to carry than a frame. Only a bone that takes a goal orientation needs its carried frame. This
needs neither the rest matrices nor the inheritance flags: only each bone's current pose
matrix, local scale and local rotation, which is what a rig hands over.

A knee is a hinge. Where the solve swings a limb into a new plane, the minimal rotations would turn the
shin relative to the thigh about an axis that is not the knee's (a twisted knee, or one bent backwards for
a pole turned half a turn); so the solve (:func:`.chains.solve_chains`) has the first bone also roll about
its new direction to carry the knee's hinge into the new plane (:func:`hinge_twist`), as Blender's IK and
Rigify do, and the second bone's minimal rotation is then a bend about that hinge.
"""

import functools
from typing import NamedTuple

import numpy as np

from . import vectors
from .constants import IDENTITY, STRAIGHT
from .errors import SolverError

#: Relative departure from a similarity that single-precision pose matrices show without any shear.
SHEAR_NOISE = 1e-4
BLOCK = 8192  #: chains per block: the component arrays of a block stay in cache


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
    inputs = {
        "matrices": np.asarray(matrices, dtype=np.float64),
        "scales": np.asarray(scales, dtype=np.float64),
        "rotations": np.asarray(rotations, dtype=np.float64),
        "old points": np.asarray(old_points, dtype=np.float64),
        "new points": np.asarray(new_points, dtype=np.float64),
    }
    n, k = inputs["matrices"].shape[:2]
    shapes = {"matrices": (n, k, 4, 4), "scales": (n, k, 3), "rotations": (n, k, 4)}
    if any(inputs[name].shape != shape for name, shape in shapes.items()):
        raise SolverError("matrices, scales and rotations must be (N, k, 4, 4), (N, k, 3) and (N, k, 4)")
    if inputs["old points"].shape != (n, k + 1, 3) or inputs["new points"].shape != (n, k + 1, 3):
        raise SolverError(f"old and new points must be (N, k + 1, 3) = ({n}, {k + 1}, 3)")
    goals = None if end_rotation is None else np.asarray(end_rotation, dtype=np.float64).reshape(n, -1, 4)
    first_goal = k if goals is None else k - goals.shape[1]
    if first_goal < 0:
        raise SolverError(f"{goals.shape[1]} goal rotations for a chain of {k} bones")
    for name, array in inputs.items():
        if not vectors.finite(array):
            raise SolverError(f"{name} must be finite")
    if not (np.abs(inputs["scales"]) > 1e-12).all():
        raise SolverError("bones must not have zero scale")
    if stretch is not None:
        stretch = np.broadcast_to(np.asarray(stretch, bool), (n,))
    unscaled = unscaled_bones(inputs["scales"])

    result = np.empty((n, k, 4))
    y_scale = np.ones((n, k))
    for rows in vectors.blocks(n, BLOCK):
        bones = block_bones(inputs["matrices"][rows], inputs["scales"][rows], inputs["rotations"][rows], unscaled)
        old, new = (
            list(map(tuple, vectors.components(inputs[name][rows, 1 : first_goal + 1])))
            for name in ("old points", "new points")
        )
        stretching = None if stretch is None or not stretch[rows].any() else stretch[rows]
        block_goals = (
            None if goals is None else [vectors.quat_unit(vectors.split(g)) for g in np.moveaxis(goals[rows], 1, 0)]
        )
        for i, (new_rotation, factor) in enumerate(turn_bones(bones, old, new, block_goals, stretching)):
            vectors.join(new_rotation, result[rows, i])
            if factor is not None:
                y_scale[rows, i] = factor
    return LocalRotations(result, y_scale)


class Bone(NamedTuple):
    """One bone of a block of chains, as component arrays."""

    frame: vectors.Mat  #: its rotation frame, the pose matrix without its own scale
    inverse: vectors.Mat  #: the frame's inverse
    head: vectors.Vec
    rotation: vectors.Quat  #: its local rotation


def unscaled_bones(scales: np.ndarray) -> np.ndarray:
    """(k,) whether all of each bone's (N, k, 3) ``scales`` are 1, as nearly every bone's are."""
    ones = scales == 1.0
    return np.full(ones.shape[1], True) if ones.all() else ones.all(axis=(0, 2))


def block_bones(matrices: np.ndarray, scales: np.ndarray, rotations: np.ndarray, unscaled) -> list[Bone]:
    """The k bones of a block of B chains, from their (B, k, 4, 4) pose matrices, (B, k, 3) scales and
    (B, k, 4) local rotations, each array transposed once. ``unscaled`` (k,) bool: bones whose scales are
    all 1 (nearly every bone), whose frames need no division."""
    bones = []
    for i in range(matrices.shape[1]):
        m = vectors.components(matrices[:, i, :3])  # rows 0-2 of the 4x4 matrices
        frame = tuple(m[row, column] for row in range(3) for column in range(3))
        if not unscaled[i]:
            frame = vectors.mat_scale_columns(frame, tuple(1.0 / vectors.components(scales[:, i])))
        inverse, det = vectors.mat_inv(frame)
        if not (np.abs(det) > 1e-300).all():
            raise SolverError(f"bone {i} has a degenerate (flat) pose matrix")
        bones.append(Bone(frame, inverse, (m[0, 3], m[1, 3], m[2, 3]), tuple(vectors.components(rotations[:, i]))))
    return bones


class Knee(NamedTuple):
    """What the first bone of a chain needs to turn the knee's hinge with it (see :func:`turn_bones`), as
    component arrays; either may be None for none."""

    side: vectors.Vec | None  #: the new knee's swivel in armature space: the side a straight new limb bends to
    hinge: vectors.Vec | None  #: the knee's forward hinge axis in the first bone's rotation frame (zero rows: none)
    #: the rows that roll (None: all): not one whose first bone is scaled unevenly, itself or by a sheared
    #: parent, as a roll there changes the lengths of the bones below (see :func:`rolls`)
    rolls: np.ndarray | None = None


def turn_bones(
    bones: list[Bone],
    old: list[vectors.Vec],
    new: list[vectors.Vec],
    goals: list[vectors.Quat] | None,
    stretch,
    knee: Knee | None = None,
):
    """Yield each bone's new local rotation and its Y scale factor (None for 1), from the top of the chain.

    ``old`` and ``new``: the child joint of each bone above the goal bones, before and after the solve;
    ``goals``: the unit armature-space rotations of the goal bones (None for none); ``stretch``: the rows
    that stretch (None for none). ``new`` holds the new joints still to be reached, each carried back
    through the changes of the bones above it; ``carried`` is the linear part of those changes, kept only
    while a goal bone lies below (it needs its frame as the bones above leave it).

    Each bone takes the minimal rotation onto its new joint, except, with ``knee``, the first bone of a
    chain whose second bone follows a joint too: it also rolls about its new direction to carry the knee's
    hinge (:func:`hinge_twist`), so the second bone turns about that hinge relative to it, as a knee does.
    """
    k, first_goal = len(bones), len(old)
    new = list(new)
    carried: vectors.Mat | None = None
    for i, bone in enumerate(bones):
        frame = bone.frame if carried is None else vectors.mat_mul(carried, bone.frame)  # as the bones above leave it
        factor = None
        if i >= first_goal:
            new_rotation, turn = _goal_turn(frame, bone.rotation, goals[i - first_goal])
        else:
            old_local = vectors.mat_vec(bone.inverse, vectors.sub(old[i], bone.head))
            new_local = vectors.mat_vec(bone.inverse, vectors.sub(new[i], bone.head))
            turn = vectors.rotation_between(old_local, new_local)
            if i == 0 and knee is not None and first_goal > 1:
                twist = hinge_twist(
                    turn,
                    (old_local, vectors.mat_vec(bone.inverse, vectors.sub(old[1], old[0]))),
                    (new_local, vectors.mat_vec(bone.inverse, vectors.sub(new[1], new[0]))),
                    None if knee.side is None else vectors.mat_vec(bone.inverse, knee.side),
                    knee.hinge,
                )
                if knee.rolls is not None:
                    twist = vectors.where(knee.rolls, twist, (1.0, 0.0, 0.0, 0.0))
                turn = vectors.quat_mul(twist, turn)
            new_rotation = vectors.quat_unit(vectors.quat_mul(bone.rotation, turn))
            if stretch is not None:
                factor = np.where(stretch, vectors.norm(new_local) / np.maximum(vectors.norm(old_local), 1e-300), 1.0)
        yield new_rotation, factor
        new[i + 1 : first_goal] = [_carry_back(p, bone, turn, factor) for p in new[i + 1 : first_goal]]
        if goals is not None and i + 1 < k:
            # The linear change of the bones above, now through this one too: C F T Y F^-1.
            carried = vectors.mat_mul(vectors.mat_mul(frame, turn_matrix(turn, factor)), bone.inverse)


def rolls(frame: vectors.Mat, scale) -> np.ndarray | bool:
    """Whether a chain's first bone may roll to carry the knee's hinge: its rotation ``frame`` is a rotation
    times a uniform scale, and so is its own ``scale`` (3,) or (N, 3). Under an uneven scale the bones below
    change length as it rolls, and the solve keeps the smallest turn there (the refinement finds their lengths
    for it). One bone in floats, or many."""
    size = np.abs(np.asarray(scale, dtype=np.float64))
    uniform = np.ptp(size, axis=-1) <= SHEAR_NOISE * size.max(axis=-1)
    return (shear(frame) <= SHEAR_NOISE) & uniform


def hinge_twist(
    turn: vectors.Quat, old: tuple[vectors.Vec, vectors.Vec], new: tuple[vectors.Vec, vectors.Vec], side, hinge
) -> vectors.Quat:
    """The roll about the first bone's new direction that, after its minimal ``turn``, carries the knee's hinge
    onto the new bend's; the identity where either is undefined. All in the bone's rotation frame.

    ``old`` and ``new``: the upper and lower segments (the bone's own and the next bone's) before and after the
    solve. A hinge is the normal of its bend, ``upper x lower``; the old one turned to agree with the forward
    ``hinge`` axis where given (a knee bent backwards in the animated pose still bends forward about it), and
    that axis itself where the old limb is straight; the new one, where the new limb is straight (extended or
    folded), the normal of the plane holding the knee's swivel ``side`` and the line to the end, as the solved
    knee would bend. With no change of plane the roll is nothing (to rounding): the minimal rotation stays.
    """
    before = _normal(*old)
    if hinge is not None:
        flip = np.where(vectors.dot(before[0], hinge) < 0.0, -1.0, 1.0)
        before = (
            vectors.where(before[1], vectors.scale(before[0], flip), hinge),
            before[1] | (vectors.dot(hinge, hinge) > 0.0),
        )
    after = _normal(*new)
    if side is not None and not after[1].all():
        across = _normal(side, vectors.add(*new))  # the swivel across the line to the end, whether extended or folded
        after = vectors.where(after[1], after[0], across[0]), after[1] | across[1]
    carried = vectors.quat_rotate(turn, before[0])
    axis = vectors.scale(new[0], 1.0 / vectors.norm(new[0]))
    # The angle from the carried hinge to the new one about the axis, from their parts across it.
    sine = vectors.dot(vectors.cross(carried, after[0]), axis)
    cosine = vectors.dot(carried, after[0]) - vectors.dot(carried, axis) * vectors.dot(after[0], axis)
    # Undefined: no hinge, or a hinge axis given along the bone.
    size = sine * sine + cosine * cosine
    defined = (
        before[1]
        & after[1]
        & (size > STRAIGHT * STRAIGHT * vectors.dot(carried, carried) * vectors.dot(after[0], after[0]))
    )
    sine, cosine = np.where(defined, sine, 0.0), np.where(defined, cosine, 1.0)
    # The half-angle quaternion without trigonometry: (1 + cos, sin axis) for an acute angle, else its multiple
    # (sin, (1 - cos) axis), each where it keeps its digits; then normalised.
    length = np.sqrt(np.where(defined, size, 1.0))
    acute = cosine >= 0.0
    w = np.where(acute, length + cosine, sine)
    k = np.where(acute, sine, length - cosine)
    norm = np.sqrt(w * w + k * k)
    w, k = w / norm, k / norm
    return (w, axis[0] * k, axis[1] * k, axis[2] * k)


def _normal(a: vectors.Vec, b: vectors.Vec) -> tuple[vectors.Vec, np.ndarray]:
    """``a x b``, the normal of the plane holding both, and where they are not parallel (or zero): the bend's
    normal where the limb is not straight."""
    normal = vectors.cross(a, b)
    return normal, vectors.dot(normal, normal) > STRAIGHT * STRAIGHT * vectors.dot(a, a) * vectors.dot(b, b)


def _goal_turn(frame: vectors.Mat, rotation: vectors.Quat, goal: vectors.Quat) -> tuple[vectors.Quat, vectors.Quat]:
    """The new local rotation of a bone whose carried rotation frame is ``frame`` that gives it the
    armature-space orientation ``goal``, and its turn ``R^-1 R'``."""
    # The frame before this bone's own rotation is F @ R^-1; its rotation part times the new local
    # rotation must equal the goal.
    before = vectors.mat_mul(frame, vectors.mat_transpose(vectors.quat_to_mat(rotation)))
    # Below a parent scaled by a negative factor that frame is mirrored and no rotation gives it the goal:
    # the bone then takes the goal's Y and Z axes and the mirror of its X axis. Solved for the frame with
    # its X axis flipped (N = diag(-1, 1, 1)), the local rotation is N R N.
    mirrored = vectors.mat_det(before) < 0.0
    if mirrored.any():
        flip = np.where(mirrored, -1.0, 1.0)
        before = (before[0] * flip, *before[1:3], before[3] * flip, *before[4:6], before[6] * flip, *before[7:9])
    goal = vectors.quat_to_mat(goal)
    local = vectors.mat_mul(vectors.mat_transpose(vectors.nearest_rotation(before)), goal)
    new_rotation = vectors.mat_to_quat(local)
    # Where ``before`` shears (a parent scaled unevenly), its rotation part alone would not point the
    # bone along the goal: turn the local Y axis onto the goal's Y as seen through ``before``.
    # Blender's single-precision matrices are never exactly orthogonal; below that noise the rotation
    # part is the better estimate.
    sheared = shear(before) > SHEAR_NOISE
    if sheared.any():
        wanted = vectors.mat_vec(vectors.mat_inv(before)[0], (goal[1], goal[4], goal[7]))
        aim = vectors.where(sheared, vectors.rotation_between((local[1], local[4], local[7]), wanted), IDENTITY)
        new_rotation = vectors.quat_mul(aim, new_rotation)
    if mirrored.any():
        new_rotation = (new_rotation[0], new_rotation[1], new_rotation[2] * flip, new_rotation[3] * flip)
    new_rotation = vectors.quat_unit(new_rotation)
    return new_rotation, vectors.quat_mul(vectors.quat_conjugate(vectors.quat_unit(rotation)), new_rotation)


def _carry_back(point: vectors.Vec, bone: Bone, turn: vectors.Quat, factor) -> vectors.Vec:
    """Where ``point`` was before the bone's change ``D = F T Y F^-1`` about its head moved it:
    ``head + F Y^-1 T^-1 F^-1 (point - head)``."""
    local = vectors.quat_rotate(
        vectors.quat_conjugate(turn), vectors.mat_vec(bone.inverse, vectors.sub(point, bone.head))
    )
    if factor is not None:
        local = (local[0], local[1] / factor, local[2])
    return vectors.add(bone.head, vectors.mat_vec(bone.frame, local))


def turn_matrix(turn: vectors.Quat, factor) -> vectors.Mat:
    """``T Y``: the local turn, after a stretch by ``factor`` (None for 1) along the bone's Y axis."""
    m = vectors.quat_to_mat(turn)
    if factor is None:
        return m
    return (m[0], m[1] * factor, m[2], m[3], m[4] * factor, m[5], m[6], m[7] * factor, m[8])


def shear(m: vectors.Mat) -> np.ndarray:
    """How far each matrix is from a rotation times a uniform scale (0 for none): the largest departure
    of ``m^T m`` from a multiple of the identity, relative to that multiple. One matrix in floats, or many."""
    a, b, c = vectors.mat_columns(m)
    aa, bb, cc = vectors.dot(a, a), vectors.dot(b, b), vectors.dot(c, c)
    size = (aa + bb + cc) / 3.0
    off = [
        abs(aa - size),
        abs(bb - size),
        abs(cc - size),
        abs(vectors.dot(a, b)),
        abs(vectors.dot(a, c)),
        abs(vectors.dot(b, c)),
    ]
    return (max(off) if isinstance(size, float) else functools.reduce(np.maximum, off)) / size
