# SPDX-License-Identifier: GPL-3.0-or-later
"""The animator's pose under the last live write, composed in the add-on.

Between frames the bones a live solve wrote hold its values. Putting the animator's values back before
the frame change (:func:`.animator.restore`) has Blender evaluate the armature for them, and once more
after the new solve is written. Instead, the live solve reads the frame as Blender evaluated it, takes
the animator's values wherever the channels still hold the write's, and composes the bones below them
from their parents' evaluated matrices (:func:`compose`): one evaluation of the armature per frame.

That holds where Blender composes those bones the plain way: no constraint on the bones the solve reads or
above them, full inheritance (:func:`may_compose`, before the frame change), and on the frame itself
(:func:`compose`) the bones composed from the values Blender evaluated match its matrices; and for goals
that do not hang from the rig (:func:`goals_apart`).
Elsewhere, and on armatures of fewer than :data:`COMPOSE_FROM` bones, the channels are restored and
evaluated as before.
"""

from dataclasses import dataclass

import numpy as np

from ...solvers import posing
from ..animator import CHANNELS, POSE_FIELDS, Written
from ..pose import AXIS_ANGLE, QUATERNION, Pose

#: Composing here pays from about this many bones in the armature: with fewer, putting the animator's values
#: back and having Blender evaluate the armature once more costs less (measured on the benchmark's rigs:
#: 7 bones, 0.15 ms slower composed; 70 bones, even; 350 bones, 1 ms faster).
COMPOSE_FROM = 64
#: Composed from the values Blender evaluated, a bone matches its matrix to this, relative to the rig's
#: size: single-precision evaluation differs from float64 composition by about 1e-7.
MATCH = 1e-5


class Uncomposed(Exception):
    """The animator's pose under a live write cannot be composed here: restore it and evaluate."""


@dataclass
class Tree:
    """An armature's bones as :func:`compose` walks them, for one plan."""

    parents: np.ndarray  #: (B,) each pose bone's parent's index, -1 for none
    levels: list[np.ndarray]  #: bone indices by depth, roots first
    offsets: np.ndarray  #: (B, 4, 4) each bone's rest relative to its parent's (a root's: its rest)
    connected: np.ndarray  #: (B,) bool
    local_location: np.ndarray  #: (B,) bool
    read: np.ndarray  #: (B,) bool: the bones the plan reads (its chains' and toes') and every bone above them
    read_bones: list  #: those pose bones
    modes: np.ndarray  #: (B,) each bone's rotation mode, as its position in ``mode_names``
    mode_names: list[str]
    #: Whether Blender poses each read bone from its parent as :func:`compose` does: inheriting rotation and
    #: scale fully, no IK constraint of another bone reaching it (constraints of their own: :func:`may_compose`)
    plain: bool


def _tree(planned) -> Tree:
    obj = planned.obj
    pose_bones = obj.pose.bones
    parents = np.array([pose_bones.find(b.parent.name) if b.parent else -1 for b in pose_bones], int)
    depth = np.zeros(len(parents), int)
    for index in range(len(parents)):
        walk = parents[index]
        while walk >= 0:
            depth[index] += 1
            walk = parents[walk]
    rest = np.array([b.bone.matrix_local for b in pose_bones], dtype=np.float64).reshape(-1, 4, 4)
    offsets = rest.copy()
    child = parents >= 0
    offsets[child] = np.linalg.solve(rest[parents[child]], rest[child])
    names = sorted(set(planned.modes))
    read = np.zeros(len(parents), bool)
    for chain in planned.chains:
        for index in chain.written:
            while index >= 0 and not read[index]:
                read[index] = True
                index = parents[index]
    plain = all(
        b.parent is None or (b.bone.use_inherit_rotation and b.bone.inherit_scale == "FULL")
        for b, on in zip(pose_bones, read)
        if on
    )
    for pose_bone in pose_bones:  # an IK constraint moves the bones above its own, as far as its chain reaches
        for constraint in pose_bone.constraints:
            if not constraint.mute and constraint.type in ("IK", "SPLINE_IK"):
                reach = [pose_bone, *pose_bone.parent_recursive][: constraint.chain_count or None]
                plain = plain and not any(read[pose_bones.find(b.name)] for b in reach)
    return Tree(
        parents,
        [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=0)) + 1)],
        offsets,
        np.array([b.bone.use_connect for b in pose_bones], bool),
        np.array([b.bone.use_local_location for b in pose_bones], bool),
        read,
        [pose_bones[int(i)] for i in np.flatnonzero(read)],
        np.array([names.index(mode) for mode in planned.modes], int),
        names,
        plain,
    )


_trees: dict[int, tuple] = {}  # by Object.session_uid: (the plan, its Tree)


def tree(planned) -> Tree:
    """The plan's :class:`Tree`, made on first use."""
    cached = _trees.get(planned.obj.session_uid)
    if cached is None or cached[0] is not planned:
        cached = _trees[planned.obj.session_uid] = (planned, _tree(planned))
    return cached[1]


def forget_all() -> None:
    _trees.clear()


def may_compose(planned) -> bool:
    """Whether :func:`compose` may compose the bones the plan reads, as far as can be told before the frame
    is evaluated: Blender poses them plainly (:attr:`Tree.plain`), with no constraint of their own, the
    armature in its pose position."""
    bones = tree(planned)
    return (
        bones.plain
        and planned.obj.data.pose_position == "POSE"
        and not any(len(pose_bone.constraints) for pose_bone in bones.read_bones)
    )


def goals_apart(planned) -> bool:
    """Whether the plan's targets and poles are objects that do not hang from its armature, nor follow
    anything through constraints or drivers: Blender's evaluation of them does not depend on the rig's
    pose at the start of the frame."""
    try:
        for goal, bone in planned.refs:
            if bone and goal.type == "ARMATURE":
                return False
            while goal is not None:
                data = goal.animation_data
                if goal == planned.obj or len(goal.constraints) or (data is not None and len(data.drivers)):
                    return False
                goal = goal.parent
    except ReferenceError:  # a goal was deleted: the solve reports it
        return False
    return True


def compose(planned, pose: Pose, written: Written) -> bool:
    """Put into ``pose`` (over one frame), read at this frame with the channels as they are, the animator's pose under
    ``written``, the last live write: the animator's values where the channels still hold the write's,
    and the bones below them composed from those values. False, with ``pose`` unchanged, where that
    cannot be done here: Blender's matrices are not what the values it evaluated compose to (an IK
    constraint set since the plan was made, say). Call where :func:`may_compose`."""
    rows = written.indices
    values, held = {}, np.zeros(len(rows), bool)
    for name, _ in CHANNELS:
        current = getattr(pose, POSE_FIELDS[name])[0, rows].astype(np.float32)
        same = current == written.after[name]
        values[name] = np.where(same, written.before[name], current)
        held |= (same & (written.before[name] != written.after[name])).any(axis=1)
    if not held.any():
        return True  # keys, drivers or the animator replaced every value written: Blender evaluated these
    bones = tree(planned)
    below = np.zeros(len(bones.parents), bool)
    below[rows[held]] = True
    for level in bones.levels[1:]:
        below[level] |= below[bones.parents[level]]
    composed = np.flatnonzero(below & bones.read)
    if len(composed):
        # Composed from the values Blender evaluated (to check that it composes them so) and from the animator's.
        position = np.full(len(bones.parents), -1)
        position[composed] = np.arange(len(composed))
        at = position[rows]
        inside = at >= 0
        channels = {}
        for name, _ in CHANNELS:
            field = POSE_FIELDS[name]
            both = np.repeat(getattr(pose, field)[:, composed], 2, axis=0)
            both[1, at[inside]] = values[name][inside]
            channels[field] = both
        as_evaluated, animated = _matrices(planned, bones, pose.matrices[0], channels, composed)
        size = max(1.0, float(np.abs(pose.matrices[0, composed]).max()))
        if not np.abs(as_evaluated - pose.matrices[0, composed]).max() <= MATCH * size:
            return False
        pose.matrices[0, composed] = animated
    for name, _ in CHANNELS:
        getattr(pose, POSE_FIELDS[name])[0, rows] = values[name]
    return True


def _matrices(planned, bones: Tree, matrices: np.ndarray, channels: dict, composed: np.ndarray) -> np.ndarray:
    """(S, n, 4, 4) armature-space matrices of the bones ``composed`` from S sets of their ``channels``
    (:class:`.pose.Pose` field -> (S, n, width)), down from the ``matrices`` of the bones above them that
    are not composed."""
    count = len(channels["location"])
    rotation = np.empty((count, len(composed), 3, 3))
    codes = bones.modes[composed]
    for code in np.unique(codes):
        mode = bones.mode_names[code]
        rows = np.flatnonzero(codes == code)
        field = {QUATERNION: "quaternion", AXIS_ANGLE: "axis_angle"}.get(mode, "euler")
        rotation[:, rows] = posing.rotation_matrices(channels[field][:, rows], mode)
    location = np.where(bones.connected[composed, None], 0.0, channels["location"])
    offsets = bones.offsets[composed]
    along_parent = ~bones.local_location[composed]
    if along_parent.any():  # moved along the parent's axes: the offset's rotation taken back out
        turn_back = np.linalg.inv(offsets[along_parent, :3, :3])
        location[:, along_parent] = np.einsum("bij,sbj->sbi", turn_back, location[:, along_parent])
    local = offsets @ posing.compose(location, rotation, channels["scale"])
    out = np.repeat(matrices[None], count, axis=0)
    position = np.full(len(matrices), -1)
    position[composed] = np.arange(len(composed))
    for level in bones.levels:
        nodes = level[position[level] >= 0]
        if not len(nodes):
            continue
        parents = bones.parents[nodes]
        rooted = parents >= 0
        out[:, nodes[rooted]] = out[:, parents[rooted]] @ local[:, position[nodes[rooted]]]
        out[:, nodes[~rooted]] = local[:, position[nodes[~rooted]]]
    return out[:, composed]
