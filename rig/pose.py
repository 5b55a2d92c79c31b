# SPDX-License-Identifier: GPL-3.0-or-later
"""Bulk pose I/O: bone matrices as float64, rotations read and written in each bone's own mode."""

from dataclasses import dataclass, fields

import bpy
import numpy as np

from ..solvers import rotation_modes

AXIS_ANGLE = "AXIS_ANGLE"
QUATERNION = "QUATERNION"


@dataclass
class Pose:
    """Every bone of one armature at one moment, or over F frames with a leading axis of F on every
    array. Matrices come from the evaluated armature (what the viewport shows); rotation and scale
    channels from the original, which is what gets written."""

    world: np.ndarray  #: (4, 4) the armature object's evaluated world matrix
    matrices: np.ndarray  #: (B, 4, 4) armature space
    location: np.ndarray  #: (B, 3)
    scale: np.ndarray  #: (B, 3)
    quaternion: np.ndarray  #: (B, 4)
    euler: np.ndarray  #: (B, 3)
    axis_angle: np.ndarray  #: (B, 4)

    def frame(self, index: int) -> "Pose":
        """One frame of a pose over frames, as views."""
        return Pose(*(getattr(self, name)[index] for name in _FIELDS))

    def frames(self, indices) -> "Pose":
        """The frames ``indices`` of a pose over frames."""
        return Pose(*(getattr(self, name)[indices] for name in _FIELDS))


_FIELDS = tuple(f.name for f in fields(Pose))


def joined(poses: list[Pose]) -> Pose:
    """One pose over all the frames of ``poses``, each over frames of its own, in order."""
    return Pose(*(np.concatenate([getattr(p, name) for p in poses]) for name in _FIELDS))


def read_pose(obj: bpy.types.Object, obj_eval: bpy.types.Object) -> Pose:
    """The pose of ``obj`` as the depsgraph of ``obj_eval`` shows it now: a pose over one frame."""
    bones = obj.pose.bones
    count = len(bones)

    def channel(collection, name, width):
        buffer = np.empty(count * width, np.float32)
        collection.foreach_get(name, buffer)
        return buffer.astype(np.float64).reshape(1, count, width)

    # Blender hands matrices over column by column.
    matrices = channel(obj_eval.pose.bones, "matrix", 16).reshape(1, count, 4, 4).transpose(0, 1, 3, 2)
    return Pose(
        np.array(obj_eval.matrix_world, dtype=np.float64)[None],
        np.ascontiguousarray(matrices),
        channel(bones, "location", 3),
        channel(bones, "scale", 3),
        channel(bones, "rotation_quaternion", 4),
        channel(bones, "rotation_euler", 3),
        channel(bones, "rotation_axis_angle", 4),
    )


def by_mode(modes) -> dict[str, np.ndarray]:
    """Row numbers grouped by rotation mode, so each group converts in one vectorised call."""
    groups: dict[str, list[int]] = {}
    for row, mode in enumerate(modes):
        groups.setdefault(mode, []).append(row)
    return {mode: np.array(rows) for mode, rows in groups.items()}


def local_quaternions(pose: Pose, indices, modes) -> np.ndarray:
    """(n, 4) local rotations of the bones ``indices`` whose rotation modes are ``modes``; (F, n, 4) for a
    pose over F frames. A channel that is not a number gives NaN: the solve refuses it, naming the limb."""
    indices = np.asarray(indices)
    out = np.empty((*pose.quaternion.shape[:-2], len(indices), 4))
    for mode, rows in by_mode(modes).items():
        bones = indices[rows]
        out[..., rows, :] = rotation_modes.channels_to_quat(
            mode, pose.quaternion[..., bones, :], pose.euler[..., bones, :], pose.axis_angle[..., bones, :]
        )
    return out


def _axis_angle_near(axis_angle: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """(n, 4) axis-angles, each written the way nearest to ``previous``: angle and axis both negated
    where that is nearer, and the angle moved by whole turns, as the animator's keys may have it."""
    turn = 2.0 * np.pi
    candidates = []
    for candidate in (axis_angle, -axis_angle):
        candidate = candidate.copy()
        candidate[:, 0] += turn * np.round((previous[:, 0] - candidate[:, 0]) / turn)
        candidates.append(candidate)
    nearer = np.abs(candidates[1] - previous).sum(axis=1) < np.abs(candidates[0] - previous).sum(axis=1)
    return np.where(nearer[:, None], candidates[1], candidates[0])


def write_rotations(
    obj: bpy.types.Object, pose: Pose, indices, modes, quaternions, y_scale=None, locations=None, every=False
):
    """Write local rotations (and Y scale factors) to the bones ``indices``, each in its own mode,
    and ``locations`` ({bone index: location}) to other bones.

    Euler and axis-angle values stay nearest to the bone's current ones and quaternions on their
    hemisphere, so nothing flips between frames. ``pose``, over one frame, is updated to what was written.
    Only the channels written are set, or with ``every``, every channel as ``pose`` holds it.
    """
    pose = pose.frame(0)  # views: what is written below updates the caller's pose
    indices = np.asarray(indices)
    quaternions = np.asarray(quaternions, dtype=np.float64)
    channels = {}  # only the kinds of rotation written: the others are as read
    for mode, rows in by_mode(modes).items():
        bones = indices[rows]
        if mode == QUATERNION:
            pose.quaternion[bones] = rotation_modes.same_hemisphere(quaternions[rows], pose.quaternion[bones])
            channels["rotation_quaternion"] = pose.quaternion
        elif mode == AXIS_ANGLE:
            pose.axis_angle[bones] = _axis_angle_near(
                rotation_modes.quat_to_axis_angle(quaternions[rows]), pose.axis_angle[bones]
            )
            channels["rotation_axis_angle"] = pose.axis_angle
        else:
            pose.euler[bones] = rotation_modes.quat_to_euler(quaternions[rows], mode, pose.euler[bones])
            channels["rotation_euler"] = pose.euler
    if every:
        channels.update(
            rotation_quaternion=pose.quaternion, rotation_euler=pose.euler, rotation_axis_angle=pose.axis_angle
        )
    if y_scale is not None:
        pose.scale[indices, 1] *= y_scale
    if y_scale is not None or every:
        channels["scale"] = pose.scale
    if locations:
        for index, location in locations.items():
            pose.location[index] = location
    if locations or every:
        channels["location"] = pose.location
    bones = obj.pose.bones
    for name, values in channels.items():
        bones.foreach_set(name, values.astype(np.float32).ravel())
    obj.update_tag()  # foreach_set alone does not tell the depsgraph
