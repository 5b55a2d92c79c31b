# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a limb's target and pole are, in its armature's space, and how its end bone turns with the target."""

import numpy as np

from ..solvers.rotation_modes import matrix_to_quat, nearest_rotation, quat_to_matrix

IDENTITY = (1.0, 0.0, 0.0, 0.0)


def world_matrices(goals, depsgraph) -> np.ndarray:
    """(n, 4, 4) evaluated world matrices of ``goals``: (object, bone name) pairs, the bone's when an
    armature and a bone are named, else the object's."""
    out = np.empty((len(goals), 4, 4))
    for row, (goal, bone_name) in enumerate(goals):
        evaluated = goal.evaluated_get(depsgraph)
        out[row] = evaluated.matrix_world
        if goal.type == "ARMATURE" and bone_name:
            out[row] = out[row] @ np.array(evaluated.pose.bones[bone_name].matrix)
    return out


def end_rotations(goals: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(n, 3, 3) goal rotations of end bones that turn with their targets: each target's
    armature-space matrix ``goals`` (n, 4, 4) turned by the limb's ``offsets`` (n, 4), quaternions.

    An identity offset gives the target's matrix unchanged (bit for bit), as files saved before
    offsets existed expect."""
    offsets = np.asarray(offsets, dtype=np.float64)
    return goals[:, :3, :3] @ quat_to_matrix(offsets / np.linalg.norm(offsets, axis=1, keepdims=True))


def take_offset(limb) -> None:
    """Store in ``limb.target_offset`` the end bone's rotation relative to the limb's target as they
    are shown now, so the end bone keeps its turn when the target is set and turns with it after.

    Nothing to keep (no target, no end bone, a bone that does not exist): the identity, under which
    the end bone copies the target's rotation."""
    offset = _offset(limb)
    if tuple(limb.target_offset) != offset:  # written only on change: every write is an update
        limb.target_offset = offset


def _offset(limb) -> tuple[float, float, float, float]:
    obj, target = limb.id_data, limb.target
    if target is None or not limb.end_bone or obj.pose is None or limb.end_bone not in obj.pose.bones:
        return IDENTITY
    goal = np.array(target.matrix_world, dtype=np.float64)
    if target.type == "ARMATURE" and limb.target_bone:
        bone = target.pose.bones.get(limb.target_bone) if target.pose else None
        if bone is None:
            return IDENTITY
        goal = goal @ np.array(bone.matrix, dtype=np.float64)
    # In the armature's space, as the solve reads the goal.
    goal = np.linalg.solve(np.array(obj.matrix_world, dtype=np.float64), goal)
    end = np.array(obj.pose.bones[limb.end_bone].matrix, dtype=np.float64)
    if not (np.isfinite(goal).all() and abs(np.linalg.det(goal[:3, :3])) > 1e-12):
        return IDENTITY
    goal_turn, end_turn = nearest_rotation(np.stack([goal[:3, :3], end[:3, :3]]))
    return tuple(float(v) for v in matrix_to_quat((goal_turn.T @ end_turn)[None])[0])
