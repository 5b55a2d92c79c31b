# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigify's IK/FK switch: a generated rig's deform bones follow the FK controls Limb IK poses only
when the limb's switch says FK.

Rigify keeps the switch as a custom property ``IK_FK`` on the limb's parent control
(``thigh_parent.L``, ``upper_arm_parent.L``): 0 is IK, the default, and 1 is FK. It does not
name the controls it switches; its drivers do. Each original bone (``ORG-thigh.L``) copies its
FK control and then its IK chain, the second copy's influence driven by the switch. So the
switch of a limb is found by following those drivers from the limb's own bones.
"""

import re

import bpy

from ..errors import LimbIKError
from ..keys import actions

PROPERTY = "IK_FK"
FK = 1.0  #: Rigify's value for FK: the deform bones follow the FK controls alone

_INFLUENCE = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)+)"\]\.constraints\["((?:[^"\\]|\\.)+)"\]\.influence$')
_SWITCH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)+)"\]\["' + PROPERTY + r'"\]$')
_COPIES = {"COPY_TRANSFORMS", "COPY_ROTATION", "COPY_LOCATION", "CHILD_OF"}


def find(obj: bpy.types.Object, bones) -> str:
    """The bone holding the IK/FK switch that decides whether ``obj``'s deform bones follow the
    control bones ``bones``; empty when none does (not a generated Rigify rig)."""
    drivers = obj.animation_data.drivers if obj.animation_data else ()
    if not drivers:
        return ""
    bones = set(bones)
    copies: dict[str, int] = {}  # bone copying one of ``bones`` -> position of that copy in its stack
    for pose_bone in obj.pose.bones:
        for position, constraint in enumerate(pose_bone.constraints):
            if (
                constraint.type in _COPIES
                and getattr(constraint, "target", None) == obj
                and constraint.subtarget in bones
            ):
                copies.setdefault(pose_bone.name, position)
    for curve in drivers:
        driven = _INFLUENCE.match(curve.data_path)
        if not driven or _unescape(driven[1]) not in copies:
            continue
        owner = obj.pose.bones[_unescape(driven[1])]
        constraint = owner.constraints.get(_unescape(driven[2]))
        if constraint is None or list(owner.constraints).index(constraint) <= copies[owner.name]:
            continue  # only a copy after ours can take the bone away from our controls
        for variable in curve.driver.variables:
            for target in variable.targets:
                switch = _SWITCH.match(target.data_path or "")
                if switch and target.id == obj and _unescape(switch[1]) in obj.pose.bones:
                    return _unescape(switch[1])
    return ""


def _unescape(name: str) -> str:
    return name.replace('\\"', '"').replace("\\\\", "\\")


def value(obj: bpy.types.Object, limb) -> float | None:
    """The switch of ``limb`` as it stands (1 is FK), or None when the limb has none."""
    bone = obj.pose.bones.get(limb.switch_bone) if limb.switch_bone else None
    if bone is None or PROPERTY not in bone:
        return None
    return float(bone[PROPERTY])


def held_by_ik(obj: bpy.types.Object, limbs=None) -> list:
    """The limbs (default: all) whose deform bones do not follow them, or only partly: their switch is not at FK."""
    limbs = obj.limb_ik.limbs if limbs is None else limbs
    return [limb for limb in limbs if (switch := value(obj, limb)) is not None and switch < FK]


def describe(obj: bpy.types.Object, limbs) -> str:
    """One sentence naming the limbs held by IK and their switches."""
    held = ", ".join(f"{limb.name} ({limb.switch_bone} {PROPERTY} = {value(obj, limb):g})" for limb in limbs)
    return (
        f"The rig's IK/FK switch keeps the deform bones on the IK chain for {held}: the mesh does not follow "
        "these limbs until they are switched to FK (Switch to FK in the Limb IK panel)."
    )


def switch_to_fk(obj: bpy.types.Object, limbs) -> list:
    """Set the switches of ``limbs`` to FK; returns the limbs switched. Refuses, changing nothing, when
    a switch is animated (its keys would take it back on the next frame)."""
    held = held_by_ik(obj, limbs)
    animated = {curve.data_path for curve in actions.fcurves(obj) or ()}
    drivers = {curve.data_path for curve in (obj.animation_data.drivers if obj.animation_data else ())}
    for limb in held:
        path = f'pose.bones["{bpy.utils.escape_identifier(limb.switch_bone)}"]["{PROPERTY}"]'
        if path in animated or path in drivers:
            how = "keyed" if path in animated else "driven"
            raise LimbIKError(
                f"Limb '{limb.name}': the IK/FK switch {PROPERTY} of '{limb.switch_bone}' is {how}; "
                f"{'key it to 1 (FK)' if how == 'keyed' else 'set its driver to 1 (FK)'} where Limb IK drives the limb."
            )
    for limb in held:
        obj.pose.bones[limb.switch_bone][PROPERTY] = FK
    if held:
        obj.update_tag()
    return held
