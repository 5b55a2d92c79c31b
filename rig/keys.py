# SPDX-License-Identifier: GPL-3.0-or-later
"""Keyframes on pose channels."""

import bpy

ROTATION_PATHS = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}


def rotation_path(pose_bone: bpy.types.PoseBone) -> str:
    """The data path of the rotation channel a bone actually uses."""
    return ROTATION_PATHS.get(pose_bone.rotation_mode, "rotation_euler")


def key_rotations(obj: bpy.types.Object, bone_names, frame: float) -> None:
    """Key each bone's rotation, in its own rotation mode, at ``frame``."""
    for name in bone_names:
        pose_bone = obj.pose.bones[name]
        pose_bone.keyframe_insert(rotation_path(pose_bone), frame=frame, group=name)
