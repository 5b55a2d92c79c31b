# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a limb's target and pole are, in its armature's space, whether Blender evaluates them, and how
its end bone turns with the target."""

import numpy as np

from ...solvers.constants import IDENTITY
from ...solvers.rotation_modes import matrix_to_quat, nearest_rotation, quat_to_matrix
from ..errors import LimbIKError
from .chain import check_scale


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


def check_evaluated(obj, limbs, chains, depsgraph) -> None:
    """Raise :class:`LimbIKError` unless ``depsgraph`` evaluates the armature ``obj`` and the targets and poles
    of its ``chains`` (of ``limbs``), and none was deleted: what is read of them would be stale, or fail."""
    try:
        name = obj.name
    except ReferenceError:
        raise LimbIKError("The armature was deleted while it was being solved; nothing was changed.") from None
    why = _not_evaluated(obj, depsgraph)
    if why:
        raise LimbIKError(f"Armature '{name}' {why[0]}, so Blender does not evaluate its pose; {why[1]} to solve it.")
    check_scale(name, obj.evaluated_get(depsgraph).matrix_world)
    for limb, chain in zip(limbs, chains):
        for role, goal in (("target", chain.target), ("pole", chain.pole)):
            if not goal:
                continue
            try:
                goal_name = goal[0].name
            except ReferenceError:
                raise LimbIKError(
                    f"Limb '{limb.name}': its {role} '{getattr(limb, f'{role}_name')}' was deleted while it was "
                    "being solved; nothing was changed."
                ) from None
            why = _not_evaluated(goal[0], depsgraph)
            if why:
                raise LimbIKError(
                    f"Limb '{limb.name}': its {role} '{goal_name}' {why[0]}, so Blender does not move it; "
                    f"{why[1]} first."
                )


def _not_evaluated(obj, depsgraph) -> tuple[str, str] | None:
    """Why ``depsgraph`` does not evaluate ``obj`` and what to do, as parts of a sentence; None when it does.

    Told from the object's and its collections' flags: an object disabled in viewports (in renders, for a
    render's depsgraph) can still have an evaluated copy, pulled in by a pointer to it, that is never
    moved, so the depsgraph's own answer cannot be trusted.
    """
    scene, layer = depsgraph.scene, depsgraph.view_layer
    render = depsgraph.mode == "RENDER"
    if not render and obj.visible_get(view_layer=layer):  # shown, the common case: no need to look further
        return None
    flag, where = ("hide_render", "renders") if render else ("hide_viewport", "viewports")
    if obj.name not in scene.objects:
        return f"is not in the scene '{scene.name}'", "link it to this scene"
    if getattr(obj, flag):
        return f"is disabled in {where}", "enable it"
    if not _shown(layer.layer_collection, obj, flag):
        if obj.name not in layer.objects:
            return f"is only in collections excluded from the view layer '{layer.name}'", "include one"
        return f"is only in collections disabled in {where}", "enable one"
    return None


def _shown(layer_collection, obj, flag: str) -> bool:
    """Whether ``obj`` is in ``layer_collection`` or below it along collections neither excluded nor disabled."""
    if layer_collection.exclude or getattr(layer_collection.collection, flag):
        return False
    if obj.name in layer_collection.collection.objects:
        return True
    return any(_shown(child, obj, flag) for child in layer_collection.children)


def end_rotations(goals: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(n, 3, 3) goal rotations of end bones that turn with their targets: each target's
    armature-space matrix ``goals`` (n, 4, 4) turned by the limb's ``offsets`` (n, 4), quaternions.

    An identity offset gives the target's matrix unchanged (bit for bit), as files saved before
    offsets existed expect. A mirrored goal (seen from an armature scaled by -1) is turned as the
    rotation with its Y and Z axes, as the offset was taken."""
    offsets = np.asarray(offsets, dtype=np.float64)
    turned = ~np.all(offsets == IDENTITY, axis=1)
    out = goals[:, :3, :3].copy()
    if turned.any():
        turns = quat_to_matrix(offsets[turned] / np.linalg.norm(offsets[turned], axis=1, keepdims=True))
        out[turned] = _unmirrored(out[turned]) @ turns
    return out


def take_offset(limb, depsgraph=None) -> None:
    """Store in ``limb.target_offset`` the end bone's rotation relative to the limb's target as they
    are shown now, so the end bone keeps its turn when the target is set and turns with it after.
    Read from ``depsgraph`` when given (getting it updates it): a target a script has just placed,
    or parented, has a stale ``matrix_world`` until then.

    Nothing to keep (no target, no end bone, a bone that does not exist): the identity, under which
    the end bone copies the target's rotation."""
    offset = _offset(limb, depsgraph)
    if tuple(limb.target_offset) != offset:  # written only on change: every write is an update
        limb.target_offset = offset


def _offset(limb, depsgraph) -> tuple[float, float, float, float]:
    obj, target = limb.id_data, limb.target
    if target is None or not limb.end_bone or obj.pose is None or limb.end_bone not in obj.pose.bones:
        return IDENTITY
    if depsgraph is not None:
        obj, target = obj.evaluated_get(depsgraph), target.evaluated_get(depsgraph)
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
    goal_turn, end_turn = nearest_rotation(_unmirrored(np.stack([goal[:3, :3], end[:3, :3]])))
    return tuple(float(v) for v in matrix_to_quat((goal_turn.T @ end_turn)[None])[0])


def _unmirrored(matrices: np.ndarray) -> np.ndarray:
    """(n, 3, 3) ``matrices`` with the X axis of the mirrored ones flipped: a mirrored goal or bone stands for
    its Y and Z axes, as the solvers read it."""
    out = np.array(matrices, dtype=np.float64)
    out[np.linalg.det(out) < 0.0, :, 0] *= -1.0
    return out
