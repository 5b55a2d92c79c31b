# SPDX-License-Identifier: GPL-3.0-or-later
"""What sets a rig's channels besides the F-curves of the action it plays: drivers, constraints and the NLA.

One detection for two uses: the bake reads the animation in bulk only where none of these moves what the
limbs read (:mod:`.frames.bulk`), and a limb whose written bones one of them overrides cannot be solved as set up
(:func:`written_over`): its solved rotations would not be what plays.
"""

import re

import bpy

from ..keys.bones import rotation_path
from .curves import evaluated

#: A pose bone's path, its name in either quotes: the bone's name, and what follows.
_BONE_PATH = re.compile(
    r"""pose\.bones\[(?P<quote>["'])(?P<name>(?:(?!(?P=quote))[^\\]|\\.)*)(?P=quote)\]\.?(?P<rest>.*)"""
)


def bone_path(path: str) -> tuple[str, str] | None:
    """The bone's name and what follows it in a pose bone's data path (``pose.bones["thigh.L"].scale``:
    ``("thigh.L", "scale")``); None for any other path."""
    match = _BONE_PATH.fullmatch(path)
    return None if match is None else (bpy.utils.unescape_identifier(match["name"]), match["rest"])


def drivers(obj: bpy.types.Object) -> list[bpy.types.FCurve]:
    """The drivers of ``obj`` Blender evaluates."""
    data = obj.animation_data
    return [driver for driver in data.drivers if evaluated(driver)] if data is not None else []


def constraint(owner) -> bpy.types.Constraint | None:
    """The first constraint of ``owner`` (an object or a pose bone) Blender evaluates."""
    return next((c for c in owner.constraints if not c.mute), None)


def nla(obj: bpy.types.Object) -> str | None:
    """Why the NLA plays ``obj`` otherwise than its action alone, as a phrase; None when it does not."""
    data = obj.animation_data
    if data is None:
        return None
    if data.use_tweak_mode:
        return f"'{obj.name}' is in NLA tweak mode"
    if data.use_nla and len(data.nla_tracks):
        return f"'{obj.name}' has NLA tracks"
    return None


def keys_overridden(obj: bpy.types.Object) -> str | None:
    """A sentence when keys baked into the action ``obj`` plays would not play as baked because of the NLA:
    in tweak mode (the strip's action plays at the strip's timing, under the tracks above it), or over NLA
    tracks the action does not replace outright (blended, or at partial influence). None otherwise: the
    action replacing the tracks below at full influence plays its keys as they are."""
    data = obj.animation_data
    if data is None or not data.use_nla:
        return None
    if data.use_tweak_mode:
        return (
            f"Armature '{obj.name}' is in NLA tweak mode: keys baked into the strip's action would play at the "
            "strip's timing, under the tracks above it; leave tweak mode to bake."
        )
    if not any(len(track.strips) and not track.mute for track in data.nla_tracks):
        return None
    if data.action_blend_type != "REPLACE" or data.action_influence < 1.0:
        return (
            f"Armature '{obj.name}' blends its action over its NLA tracks ({data.action_blend_type.title()} at "
            f"influence {data.action_influence:g}), so keys baked into it would not play as solved; set the "
            "action's blending to Replace at influence 1 to bake."
        )
    return None


def written_over(obj: bpy.types.Object, limb, bones, driven: list[bpy.types.FCurve]) -> str | None:
    """A sentence naming what overrides the channels the solve writes to ``bones`` (pose bone indices) of
    ``limb``: a constraint on one of them, or one of the ``driven`` (:func:`drivers`) on its rotation channel,
    or on its scale where the limb stretches; None when nothing does."""
    pose_bones = obj.pose.bones
    names = {pose_bones[index].name for index in bones}
    for name in sorted(names):
        found = constraint(pose_bones[name])
        if found is not None:
            return (
                f"Limb '{limb.name}': bone '{name}' has the constraint '{found.name}', which changes the pose Limb IK "
                "writes; mute or remove it, or leave the bone out of the limb."
            )
    for driver in driven:
        where = bone_path(driver.data_path)
        if where is None or where[0] not in names:
            continue
        rotation = rotation_path(pose_bones[where[0]].rotation_mode)
        if where[1] == rotation or (where[1] == "scale" and limb.reach == "STRETCH"):
            return (
                f"Limb '{limb.name}': bone '{where[0]}' has a driver on {where[1]}[{driver.array_index}], which "
                "overrides what Limb IK writes there; mute or remove the driver, or leave the bone out of the limb."
            )
    return None
