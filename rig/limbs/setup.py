# SPDX-License-Identifier: GPL-3.0-or-later
"""Adding, detecting, removing and choosing limbs: the edits to ``object.limb_ik.limbs``, and which of
them an operator, a script or the command line works on."""

from dataclasses import dataclass

import bpy
import numpy as np
from mathutils import Matrix

from ...solvers.constants import IDENTITY
from .. import choices
from ..errors import LimbIKError
from . import detect, soles, switch
from .chain import chain_of, check_armature


@dataclass
class LimbSpec:
    """A limb about to be added, checked with the same rules as a stored one."""

    name: str
    upper_bone: str
    lower_bone: str
    end_bone: str = ""
    target: bpy.types.Object | None = None
    target_bone: str = ""
    pole: bpy.types.Object | None = None
    pole_bone: str = ""


def unique_name(obj: bpy.types.Object, base: str) -> str:
    existing = {limb.name for limb in obj.limb_ik.limbs}
    if base not in existing:
        return base
    number = 1
    while f"{base}.{number:03d}" in existing:
        number += 1
    return f"{base}.{number:03d}"


def chain_from_selection(obj: bpy.types.Object, active: bpy.types.PoseBone, selected) -> list[str]:
    """Bone names root first, from selected pose bones whose active one ends the chain."""
    if active is None:
        raise LimbIKError("No active bone; select two or three bones of one chain, the end bone last.")
    names = {pb.name for pb in selected} | {active.name}
    if not 2 <= len(names) <= 3:
        raise LimbIKError(f"Select two or three bones of one chain, not {len(names)}.")
    chain = [active.name]
    for ancestor in active.bone.parent_recursive:
        if ancestor.name in names:
            chain.insert(0, ancestor.name)
    missing = names - set(chain)
    if missing:
        raise LimbIKError(f"'{sorted(missing)[0]}' is not above the active bone '{active.name}'; select one chain.")
    return chain


def add_limb(
    obj: bpy.types.Object, bones: list[str], name: str = "", with_target: bool = False, toe: str | None = None
):
    """Add a limb over ``bones`` (root first, 2 or 3) to ``obj`` and return it.

    Checks the chain first, so nothing is added when it is not one. ``with_target`` creates an
    Empty at the limb's tip, turned like its last bone, and makes it the target. A three-bone
    limb's toe is ``toe``, else the one Detect Limbs would find below its end bone. The rig's
    IK/FK switch over these bones, if it has one, is noted on the limb.
    """
    check_armature(obj)
    if len(bones) not in (2, 3):
        raise LimbIKError(f"A limb has two or three bones, not {len(bones)}.")
    if name in obj.limb_ik.limbs:  # a name asked for is kept, or refused
        raise LimbIKError(f"Armature '{obj.name}' already has a limb named '{name}'; choose another name.")
    if not name:
        kind, side = detect.limb_kind_and_side(bones)
        name = unique_name(obj, f"{kind}.{side}" if side else kind)
    taken = {b: limb.name for limb in obj.limb_ik.limbs for b in (limb.upper_bone, limb.lower_bone, limb.end_bone) if b}
    for bone in bones:
        if bone in taken:
            raise LimbIKError(f"Bone '{bone}' already belongs to limb '{taken[bone]}'.")
    spec = LimbSpec(name, *bones)
    chain = chain_of(obj, spec)
    limb = obj.limb_ik.limbs.add()
    limb.name = spec.name
    limb.upper_bone, limb.lower_bone = bones[0], bones[1]
    limb.end_bone = bones[2] if len(bones) == 3 else ""
    limb.toe_bone = (toe if toe is not None else detect.toe_of(obj, bones[2])) if len(bones) == 3 else ""
    limb.switch_bone = switch.find(obj, bones)
    if with_target:
        limb.target = _create_target(obj, spec.name, chain)
        limb.target_offset = IDENTITY  # made for it: the end bone copies its rotation exactly
    obj.limb_ik.active_limb_index = len(obj.limb_ik.limbs) - 1
    return limb


def _create_target(obj: bpy.types.Object, limb_name: str, chain) -> bpy.types.Object:
    last = obj.pose.bones[chain.bones[-1]]
    tip = last.matrix @ Matrix.Translation((0.0, last.length, 0.0))
    empty = bpy.data.objects.new(f"{obj.name}_{limb_name}_target", None)
    empty.empty_display_type = "SPHERE"
    empty.empty_display_size = 0.25 * last.length
    world = obj.matrix_world @ tip
    location, rotation, _ = world.decompose()
    empty.matrix_world = Matrix.LocRotScale(location, rotation, None)
    for collection in obj.users_collection:
        collection.objects.link(empty)
    return empty


def detect_limbs(obj: bpy.types.Object, depsgraph=None, with_targets: bool = False) -> tuple[list, dict[str, str]]:
    """Add every arm and leg found (by name, else by shape) that is not set up yet.

    Returns the added limbs with what found each (``(limb, "name" or "shape")``), and the limbs
    found but not added with the reason for each. With ``depsgraph``, shapes are also read at a few
    frames of each of the rig's actions (a limb lifted at rest may reach the ground as it moves).
    ``with_targets`` gives each added limb a target Empty at its tip, as Add Limb does. When every limb
    found lies in one plane, at rest and as animated (a 2D cut-out rig), the added ones are held in it
    (:func:`set_plane`).
    """
    check_armature(obj)
    added, skipped = [], {}
    used = {b for limb in obj.limb_ik.limbs for b in (limb.upper_bone, limb.lower_bone, limb.end_bone) if b}
    names = {limb.name for limb in obj.limb_ik.limbs}
    shape = detect.Shape(obj, depsgraph)  # the rest pose and every action, read once for both
    found_limbs = detect.find_limbs(obj, shape)
    plane = detect.flat_plane(found_limbs, shape)
    for found in found_limbs:
        bones = [b for b in (found.upper, found.lower, found.end) if b]
        if found.name in names or used & set(bones):
            skipped[found.name] = "already set up"
            continue
        try:
            limb = add_limb(obj, bones, found.name, with_targets, found.toe)
        except LimbIKError as error:  # named like a limb, but not a usable chain
            skipped[found.name] = str(error)
            continue
        if plane is not None:
            set_plane(limb, plane)
        added.append((limb.name, found.how))
        used |= set(bones)
    # Looked up again at the end: adding to the collection may move the limbs added before it.
    return [(obj.limb_ik.limbs[name], how) for name, how in added], skipped


def loose_feet(obj: bpy.types.Object, limbs) -> str | None:
    """A sentence naming the ``limbs`` whose end bone or toe hangs from no bone of their chain (Detect Limbs finds
    one by the skin or by its name: an exported IK foot under the root), which solving and planting move by
    location too; None for none."""
    loose = []
    for limb in limbs:
        try:
            chain = chain_of(obj, limb, planted=True)
        except LimbIKError:  # not a chain: nothing to say of its foot here
            continue
        if chain.loose_end:
            loose.append(f"'{limb.name}' on '{limb.end_bone}'")
        if chain.loose_toe:
            loose.append(f"'{limb.name}' on '{limb.toe_bone}' (its toe, below '{limb.end_bone}')")
    if not loose:
        return None
    return (
        f"Feet found outside the leg chains: {', '.join(loose)}; the chains reach for them, and "
        "solving and planting move those bones by their location as well as turning them"
    )


def set_plane(limb, normal) -> None:
    """Hold ``limb`` in the plane with the unit ``normal`` (armature space): Side or Front where that is
    the armature's XZ or YZ plane, else Custom."""
    for item, axis in zip(choices.PLANE_ITEMS, choices.PLANE_NORMALS):
        if any(axis) and abs(float(np.dot(normal, axis))) >= 1.0 - 1e-9:
            limb.plane = item[0]
            return
    limb.plane, limb.plane_normal = "CUSTOM", tuple(normal)


def chosen(obj: bpy.types.Object, names=None, which: str = "ENABLED", selected_bones=()) -> list:
    """The limbs of ``obj`` to work on: those ``names`` (a limb's name, or several; each must exist),
    else by ``which``: "ENABLED", every enabled limb; "SELECTED", the enabled ones with a bone among
    ``selected_bones``; "ACTIVE", the active limb; "ALL", every limb."""
    limbs = obj.limb_ik.limbs
    if names is not None:
        names = [names] if isinstance(names, str) else list(names)
        missing = [name for name in names if name not in limbs]
        if missing:
            raise LimbIKError(f"Armature '{obj.name}' has no limb named '{missing[0]}'.")
        return [limbs[name] for name in names]
    if which == "ACTIVE":
        if obj.limb_ik.active_limb is None:
            raise LimbIKError(f"Armature '{obj.name}' has no active limb.")
        return [obj.limb_ik.active_limb]
    if which == "ALL":
        return list(limbs)
    enabled = [limb for limb in limbs if limb.enabled]
    if which == "SELECTED":
        selected = set(selected_bones)
        enabled = [limb for limb in enabled if selected & {limb.upper_bone, limb.lower_bone, limb.end_bone}]
        if not enabled:
            raise LimbIKError("No enabled limb has a selected bone; select bones of the limbs to bake in Pose Mode.")
    return enabled


def is_leg(obj: bpy.types.Object, limb) -> bool:
    """Whether ``limb`` is a leg with a foot, as Detect Limbs tells legs: named as one (``leg.L``,
    ``front_leg.R``, as it names those it finds, by bone names or by shape), or, where its name says
    neither leg nor arm, over bones named as a leg's (thigh, shin, foot). Detect Limbs names a T-rex's
    forelimbs ``front_arm``: their bones are named as legs, but they never reach the ground."""
    if not limb.end_bone:
        return False
    name = limb.name.lower()
    if "leg" in name or "arm" in name:
        return "leg" in name
    return detect.limb_kind_and_side((limb.upper_bone, limb.lower_bone, limb.end_bone))[0] == "leg"


def legs(obj: bpy.types.Object) -> list:
    """The limbs of ``obj`` taken for legs: those marked planted and those that are legs with a foot
    (:func:`is_leg`), enabled or not."""
    return [limb for limb in obj.limb_ik.limbs if limb.plant or is_leg(obj, limb)]


def to_plant(obj: bpy.types.Object, names=None, depsgraph=None) -> list:
    """The legs to plant: those ``names``, else the enabled limbs marked planted, else every enabled
    leg (:func:`is_leg`). Refuses none at all, a limb without a foot, and one whose foot is not near the
    rig's lowest point at rest or usually in the rig's actions (an arm: :func:`detect.reach_ground`)."""
    if names is not None:
        planted = chosen(obj, names)
    else:
        enabled = [limb for limb in legs(obj) if limb.enabled]
        planted = [limb for limb in enabled if limb.plant] or enabled
        if not planted:
            raise LimbIKError(
                f"Armature '{obj.name}' has no legs with a foot to plant; add or detect them first{_hung_feet(obj)}."
            )
    for limb in planted:
        if not limb.end_bone:
            raise LimbIKError(f"Limb '{limb.name}' has no foot to plant; planting needs thigh, shin and foot.")
        chain_of(obj, limb, planted=True)  # its bones, toe included, exist before they are measured
    lowest = [limb.toe_bone or limb.end_bone for limb in planted]
    for limb, bone, on_ground in zip(planted, lowest, detect.reach_ground(obj, lowest, depsgraph)):
        if not on_ground:
            raise LimbIKError(
                f"Limb '{limb.name}' has no foot on the ground side: its {'toe' if limb.toe_bone else 'end'} bone "
                f"'{bone}' never comes near the rig's lowest point; plant legs only."
            )
    return planted


def _hung_feet(obj: bpy.types.Object) -> str:
    """Why legs found without a foot have none, where their mesh's feet hang from bones outside their chains: the
    bones Detect Limbs would make their feet (:func:`.soles.outside`, as low as the shin's skin); else which legs
    have no end bone, and what to set."""
    footless = [limb for limb in obj.limb_ik.limbs if limb.enabled and not limb.end_bone and "leg" in limb.name.lower()]
    skin = soles.read_skin(obj) if footless else None
    hung = [
        (limb.name, soles.outside(obj, skin, [limb.upper_bone, limb.lower_bone], None, as_low=True))
        for limb in footless
    ]
    hung = [f"'{name}' to {', '.join(repr(b) for b in bones)}" for name, bones in hung if bones]
    if not hung:
        if not footless:
            return ""
        names = ", ".join(f"'{limb.name}'" for limb in footless)
        return (
            f" ({names} {'has' if len(footless) == 1 else 'have'} no end bone, and no skin joins a foot to "
            f"{'it' if len(footless) == 1 else 'them'}: set each one's End Bone to the bone its foot follows, and "
            "planting moves that bone with the leg)"
        )
    return (
        f" (their feet are skinned to bones outside their chains: {'; '.join(hung)}; make the first of each a leg's "
        "end bone, as Detect Limbs does, and planting moves it with the leg)"
    )


def remove_limb(obj: bpy.types.Object, index: int) -> None:
    limbs = obj.limb_ik.limbs
    if not 0 <= index < len(limbs):
        raise LimbIKError(f"Armature '{obj.name}' has no limb number {index + 1}.")
    limbs.remove(index)
    obj.limb_ik.active_limb_index = min(index, max(len(limbs) - 1, 0))
