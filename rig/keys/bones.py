# SPDX-License-Identifier: GPL-3.0-or-later
"""Keys on pose bones, written one way for the bake and for Match FK: whole arrays through an
:class:`.keys.actions.ActionEdit`, so every other key stays bit-identical and a failure puts the action
back as it was."""

import bpy
import numpy as np

from ..pose import AXIS_ANGLE, QUATERNION
from .actions import ActionEdit, check_editable

#: The rotation channel of each rotation mode that is not an Euler order.
ROTATION_PATHS = {QUATERNION: "rotation_quaternion", AXIS_ANGLE: "rotation_axis_angle"}


def rotation_path(mode: str) -> str:
    """The data path of the rotation channel a bone in rotation ``mode`` uses."""
    return ROTATION_PATHS.get(mode, "rotation_euler")


def key_bone(obj, edit: ActionEdit, bone_index: int, channel: str, frames, values, start, end, first_index=0) -> int:
    """Key ``values`` (frames, width) of the pose bone's ``channel`` (components from ``first_index``)
    at ``frames``, replacing its keys in [start, end]; returns the number of keys."""
    name = obj.pose.bones[bone_index].name
    path = f'pose.bones["{bpy.utils.escape_identifier(name)}"].{channel}'
    for component in range(values.shape[1]):
        curve = edit.fcurve(path, first_index + component, group=name)
        edit.replace_range(curve, frames, values[:, component], start, end)
    return values.size


def key_rotations(obj: bpy.types.Object, bone_names, frame: float) -> int:
    """Key each bone's rotation as it stands, in its own rotation mode, at ``frame``; returns the
    number of keys. Raises :class:`.errors.LimbIKError`, keying nothing, where the action cannot be changed."""
    check_editable(obj)
    edit = ActionEdit(obj)
    frames = np.array([frame], dtype=np.float64)
    keys = 0
    try:
        for name in bone_names:
            pose_bone = obj.pose.bones[name]
            path = rotation_path(pose_bone.rotation_mode)
            values = np.array(getattr(pose_bone, path), dtype=np.float64)[None]
            keys += key_bone(obj, edit, obj.pose.bones.find(name), path, frames, values, frame, frame)
    except Exception:
        edit.rollback()
        raise
    return keys
