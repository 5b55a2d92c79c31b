# SPDX-License-Identifier: GPL-3.0-or-later
"""What every Limb IK operator shares: context checks for poll(), and the error boundary."""

from collections.abc import Callable

import bpy

from ..rig.errors import LimbIKError


def poll_armature(cls, context, pose_mode_only: bool = False, needs_limbs: bool = False) -> bool:
    """True when the active object is an armature in a usable mode; else explain why in the poll message."""
    obj = context.object
    if obj is None or obj.type != "ARMATURE":
        cls.poll_message_set("The active object must be an armature")
        return False
    if pose_mode_only and context.mode != "POSE":
        cls.poll_message_set("Switch the armature to Pose Mode and select its bones")
        return False
    if context.mode == "EDIT_ARMATURE":
        cls.poll_message_set("Leave Edit Mode first: the pose is not up to date while bones are edited")
        return False
    if needs_limbs and not obj.limb_ik.limbs:
        cls.poll_message_set("This armature has no limbs yet; add or detect some first")
        return False
    return True


def run(operator, work: Callable[[], str | None]) -> set[str]:
    """Run ``work``; its return is an info message. A :class:`LimbIKError` becomes an ERROR report and
    cancels the operator, so nothing is pushed to the undo stack."""
    try:
        message = work()
    except LimbIKError as error:
        operator.report({"ERROR"}, str(error))
        return {"CANCELLED"}
    if message:
        operator.report({"INFO"}, message)
    return {"FINISHED"}


def names(items) -> str:
    return ", ".join(items)


def length(scene, value: float) -> str:
    """A world distance in the scene's units, like "3.2 cm"."""
    units = scene.unit_settings
    return bpy.utils.units.to_string(units.system, "LENGTH", value * units.scale_length, precision=3)


def counted(number: int, noun: str) -> str:
    """Like "1 limb" or "4 limbs"."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
