# SPDX-License-Identifier: GPL-3.0-or-later
"""Limb settings to checked bone chains."""

from dataclasses import dataclass

import bpy
import numpy as np

from ...solvers.constants import STRAIGHT
from ..errors import LimbIKError

#: Two heads closer than this (in armature units) make a zero-length segment.
MIN_SEGMENT = 1e-6
#: An end bone the chain does not carry is its foot only within this many upper segments of the lower bone.
REACH = 4.0
#: A pose matrix whose columns differ in length or angle by more than this (relative) is scaled unevenly;
#: single-precision rest and pose matrices are orthonormal to about 3e-5.
EVEN_SCALE = 1e-4


@dataclass(frozen=True)
class Chain:
    """The bones of one limb, root first, as they stand in the armature."""

    limb: str
    bones: tuple[str, ...]  #: upper, lower[, end]
    indices: tuple[int, ...]  #: positions in ``obj.pose.bones``
    tip_length: float  #: rest length of the last bone: the effector is its tail
    hinge: tuple[float, float, float]  #: rest hinge axis in the upper bone's frame; zero if the rest pose is straight
    toe: int | None = None  #: a planted foot's toe, written with the chain (pose bone index)
    target: tuple = ()  #: (object, bone name) the tip reaches for; empty: its own animated tip
    pole: tuple = ()  #: (object, bone name) the knee points toward; empty: none
    #: (position in the chain, Inherit Scale, name and pose bone index of the bone above) of each bone whose
    #: scale inheritance the solve does not model under an uneven scale: a bone below the first not inheriting
    #: the scale of the chain bone above it fully, itself or through a bone in between; the first bone
    #: inheriting its parent's as Aligned, which turns that scale with the bone
    partial_scale: tuple[tuple[int, str, str, int], ...] = ()
    #: the end bone hangs from no bone of the chain (an exported IK foot under the root): the solve poses it where
    #: the lower bone would carry it, by its location and rotation (:func:`..solvers.forward.loose_end`)
    loose_end: bool = False
    #: the toe hangs from no bone of the chain (a digitigrade leg's foot, exported as an IK bone under the root):
    #: the solve poses it where the end bone would carry it, by its location and rotation, as a loose end bone
    loose_toe: bool = False

    @property
    def size(self) -> int:
        return len(self.bones)

    @property
    def written(self) -> tuple[int, ...]:
        """Pose bone indices the solve writes: the chain's, and the toe's."""
        return self.indices if self.toe is None else (*self.indices, self.toe)

    @property
    def located(self) -> tuple[int, ...]:
        """Pose bone indices the solve moves by their location too: its loose end bone and loose toe."""
        return (self.indices[-1],) * self.loose_end + (self.toe,) * self.loose_toe


def check_armature(obj) -> None:
    """Raise :class:`LimbIKError` unless ``obj`` is an armature whose pose can be written."""
    if obj is None:
        raise LimbIKError("No active object; select an armature.")
    if obj.type != "ARMATURE":
        raise LimbIKError(f"'{obj.name}' is a {obj.type.lower()}, not an armature.")
    if obj.library is not None:
        raise LimbIKError(
            f"Armature '{obj.name}' is linked from a library and cannot be posed; make a library override first."
        )


def check_scale(name: str, world) -> None:
    """Raise :class:`LimbIKError` when the world matrix ``world`` of the armature ``name`` is scaled to zero on an
    axis: its bones then have no size or direction in the world to solve, measure or detect limbs by."""
    world = np.asarray(world, dtype=np.float64)[:3, :3]
    if not abs(np.linalg.det(world)) > 1e-12 * np.prod(np.linalg.norm(world, axis=0)):
        raise LimbIKError(
            f"Armature '{name}' is scaled to zero on an axis (its object or a parent), so its bones have no size; "
            "give it a scale on every axis."
        )


#: Per property group type: each enum setting's identifier, name, and its items' names and numbers.
_CHOICES: dict[str, list[tuple[str, str, list[str], set[int]]]] = {}


def check_choices(limb) -> None:
    """Raise :class:`LimbIKError` for a setting of ``limb`` holding a choice this version does not offer: saved by a
    newer version, Blender keeps the stored number, shows an empty field and reads it as no choice at all."""
    rna = limb.bl_rna
    if rna.identifier not in _CHOICES:  # once: going through the properties took 9 times the check (4 limbs)
        _CHOICES[rna.identifier] = [
            (p.identifier, p.name, [i.name for i in p.enum_items], {i.value for i in p.enum_items})
            for p in rna.properties
            if p.type == "ENUM" and not p.is_enum_flag
        ]
    for identifier, name, names, numbers in _CHOICES[rna.identifier]:
        stored = limb.get(identifier)  # the item's number, or None while the default is kept
        if stored is not None and stored not in numbers:
            raise LimbIKError(
                f"Limb '{limb.name}': its {name} is set to a choice this version of Limb IK does not know "
                f"({stored}), perhaps saved by a newer version; choose one of {', '.join(names[:-1])} or {names[-1]}."
            )


def chain_of(obj: bpy.types.Object, limb, planted: bool = False) -> Chain:
    """The checked chain of ``limb`` on armature ``obj``; raises :class:`LimbIKError` naming what is wrong.
    ``planted``: checked as a planted leg, its toe too, whether or not the limb is marked planted yet."""
    check_armature(obj)
    names = [limb.upper_bone, limb.lower_bone] + ([limb.end_bone] if limb.end_bone else [])
    for role, name in zip(("upper", "lower"), names):
        if not name:
            raise LimbIKError(f"Limb '{limb.name}' has no {role} bone.")
    bones = obj.data.bones
    for name in names:
        if name not in bones:
            raise LimbIKError(f"Limb '{limb.name}': bone '{name}' does not exist in armature '{obj.name}'.")
    if len(set(names)) != len(names):
        raise LimbIKError(f"Limb '{limb.name}' uses the same bone twice.")
    loose = len(names) == 3 and _loose(obj, limb, names)
    for parent, child in zip(names, names[1 : 3 - loose]):
        if bones[parent] not in bones[child].parent_recursive:
            raise LimbIKError(
                f"Limb '{limb.name}': '{child}' is not a child of '{parent}', so they do not form a chain."
            )
        if not _inherits_rotation(bones[child], bones[parent]):
            raise LimbIKError(
                f"Limb '{limb.name}': '{child}' does not inherit rotation from '{parent}'; "
                "enable Inherit Rotation so the chain moves together."
            )
    pose_bones = obj.pose.bones
    for name in names:
        if _locked(pose_bones[name]):
            raise LimbIKError(
                f"Limb '{limb.name}': bone '{name}' has locked rotation; unlock it so Limb IK can rotate it."
            )

    if getattr(limb, "plane", "NONE") == "CUSTOM" and not any(limb.plane_normal):
        raise LimbIKError(f"Limb '{limb.name}': its Custom plane has no normal; give Plane Normal a direction.")

    heads = [np.array(bones[n].head_local, dtype=np.float64) for n in names]
    last = bones[names[-1]]
    points = heads + [np.array(last.tail_local, dtype=np.float64)]
    for a, b, name in zip(points, points[1:], names):
        if np.linalg.norm(b - a) < MIN_SEGMENT:
            raise LimbIKError(f"Limb '{limb.name}': bone '{name}' has zero length between its joints.")

    for role in ("target", "pole"):
        goal = getattr(limb, role)
        remembered = getattr(limb, f"{role}_name", "")
        if goal is None and remembered:
            raise LimbIKError(
                f"Limb '{limb.name}': its {role} '{remembered}' no longer exists; pick a new one or clear it."
            )
        _check_goal(obj, limb, names, role, goal, getattr(limb, f"{role}_bone"))
    aim = limb.target
    if aim is not None and limb.pole == aim and (aim.type != "ARMATURE" or limb.pole_bone == limb.target_bone):
        raise LimbIKError(
            f"Limb '{limb.name}': its pole '{limb.pole_bone or aim.name}' is also its target, so it cannot "
            "show which way the limb bends; pick another pole or clear it."
        )

    upper_rest = np.array(bones[names[0]].matrix_local, dtype=np.float64)[:3, :3]
    bend = np.cross(points[1] - points[0], points[2] - points[1])
    lengths = np.linalg.norm(points[1] - points[0]) * np.linalg.norm(points[2] - points[1])
    straight = np.linalg.norm(bend) <= STRAIGHT * lengths
    hinge = (0.0, 0.0, 0.0) if straight else tuple(upper_rest.T @ (bend / np.linalg.norm(bend)))
    toe, loose_toe = _toe(obj, limb, names, planted or getattr(limb, "plant", False))
    target = (limb.target, limb.target_bone) if limb.target is not None else ()
    pole = (limb.pole, limb.pole_bone) if limb.pole is not None else ()
    indices = tuple(pose_bones.find(n) for n in names)
    above = [bones[names[0]].parent.name if bones[names[0]].parent else "", *names[:-1]]
    partial = tuple(
        (i, mode, above[i], pose_bones.find(above[i]))
        for i, mode in enumerate(_scale_inheritance(bones, names[: 3 - loose]))
        if mode != "FULL"
    )
    return Chain(limb.name, tuple(names), indices, last.length, hinge, toe, target, pole, partial, loose, loose_toe)


def apart(bones, name: str, chain) -> bool:
    """Whether the bone ``name`` hangs from no bone of ``chain`` (names), nor carries one (of the armature's
    ``bones``): a limb's end bone or toe that the chain does not carry."""
    bone = bones[name]
    return not any(bones[n] in bone.parent_recursive or bone in bones[n].parent_recursive for n in chain)


def _loose(obj, limb, names) -> bool:
    """Whether the end bone of a three-bone chain hangs from no bone of it, above or below (an exported IK foot
    under the root, which its leg reaches for): the solve then moves it by its location too. Raises
    :class:`LimbIKError` for one whose location cannot be written that way."""
    bones = obj.data.bones
    if not apart(bones, names[2], names[:2]):
        return False
    upper, lower, end = (np.array(bones[name].head_local, dtype=np.float64) for name in names)
    if np.linalg.norm(end - lower) > REACH * np.linalg.norm(lower - upper):
        raise LimbIKError(
            f"Limb '{limb.name}': '{names[2]}' is not a child of '{names[1]}', and stands too far from it to be the "
            "foot it reaches for, so they do not form a chain."
        )
    _check_located(obj, limb, names[2], "end bone", "an end bone below the lower bone")
    return True


def _check_located(obj, limb, name: str, role: str, instead: str) -> None:
    """Raise :class:`LimbIKError` unless the bone ``name``, which hangs from no bone of the chain, can be moved
    by its location channel: the solve poses it where the chain would carry it."""
    bone = obj.data.bones[name]
    for wrong, what, fix in (
        (bone.use_connect, "connected to its parent", "disconnect it"),
        (not bone.use_local_location, "not local", "enable its Local Location"),
        (any(obj.pose.bones[name].lock_location), "locked", "unlock its location"),
    ):
        if wrong:
            raise LimbIKError(
                f"Limb '{limb.name}': its {role} '{name}' hangs from no bone of the chain, so the chain moves "
                f"it by its location, which is {what}; {fix}, or pick {instead}."
            )


def _scale_inheritance(bones, names) -> list[str]:
    """How each bone of the chain inherits the scale of the chain bone above it: 'FULL', or the first other
    Inherit Scale on the way up. The first bone's is 'ALIGNED' when it inherits its parent's scale so, else
    'FULL': the solve takes its frame as Blender poses it, however else the parent's scale comes in."""
    first = bones[names[0]]
    modes = ["ALIGNED" if first.parent is not None and first.inherit_scale == "ALIGNED" else "FULL"]
    for parent, child in zip(names, names[1:]):
        bone, mode = bones[child], "FULL"
        while bone is not None and bone.name != parent:
            if mode == "FULL":
                mode = bone.inherit_scale
            bone = bone.parent
        modes.append(mode)
    return modes


def check_scale_inheritance(limbs, chains, matrices) -> None:
    """Raise :class:`LimbIKError` for a chain bone inheriting scale in a way the solve does not model
    (:attr:`Chain.partial_scale`) from a bone whose pose matrix (``matrices``, armature space, all bones; or
    over frames, (F, B, 4, 4)) is scaled unevenly or sheared: Blender then moves it in a way the solve does
    not model. With even scales every way of inheriting scale agrees."""
    for limb, chain in zip(limbs, chains):
        for position, mode, above_name, above_index in chain.partial_scale:
            above = matrices[..., above_index, :3, :3]
            gram = np.swapaxes(above, -1, -2) @ above
            size = np.trace(gram, axis1=-2, axis2=-1)[..., None, None] / 3.0
            if (np.abs(gram - size * np.eye(3)) > EVEN_SCALE * size).any():
                raise LimbIKError(
                    f"Limb '{limb.name}': bone '{chain.bones[position]}' inherits scale as "
                    f"'{mode.replace('_', ' ').title()}', not Full, from '{above_name}', which is "
                    "scaled unevenly; set its Inherit Scale to Full, or scale evenly."
                )


def _toe(obj, limb, names, planted: bool) -> tuple[int | None, bool]:
    """The toe a planted three-bone leg keeps flat while its foot rolls, and whether it hangs from no bone of the
    chain: below the foot, turning with it, or apart from the chain (a digitigrade leg's foot exported as an IK
    bone under the root, which the end bone, the long bone down to it, carries as the solve has it)."""
    name = getattr(limb, "toe_bone", "") if planted and len(names) == 3 else ""
    if not name:
        return None, False
    bones = obj.data.bones
    if name not in bones:
        raise LimbIKError(f"Limb '{limb.name}': toe bone '{name}' does not exist in armature '{obj.name}'.")
    if name in names:
        raise LimbIKError(f"Limb '{limb.name}': the toe bone '{name}' is also a bone of the chain.")
    loose = apart(bones, name, names)
    if loose:
        tail, toe = np.array(bones[names[2]].tail_local), np.array(bones[name].head_local)
        if np.linalg.norm(toe - tail) > bones[names[2]].length:
            raise LimbIKError(
                f"Limb '{limb.name}': toe bone '{name}' is not a child of the foot '{names[2]}', and stands too far "
                "from its tail to be the toe it carries."
            )
        _check_located(obj, limb, name, "toe bone", "a toe below the foot")
    elif bones[names[2]] not in bones[name].parent_recursive or not _inherits_rotation(bones[name], bones[names[2]]):
        raise LimbIKError(f"Limb '{limb.name}': toe bone '{name}' is not a child of the foot '{names[2]}'.")
    if _locked(obj.pose.bones[name]):
        raise LimbIKError(
            f"Limb '{limb.name}': toe bone '{name}' has locked rotation; unlock it so planting can turn it."
        )
    return obj.pose.bones.find(name), loose


def _locked(pose_bone: bpy.types.PoseBone) -> bool:
    """Whether any rotation channel of the bone is locked (W only counts when locked as 4D)."""
    return any(pose_bone.lock_rotation) or (pose_bone.lock_rotations_4d and pose_bone.lock_rotation_w)


def _inherits_rotation(child: bpy.types.Bone, ancestor: bpy.types.Bone) -> bool:
    bone = child
    while bone is not None and bone != ancestor:
        if not bone.use_inherit_rotation:
            return False
        bone = bone.parent
    return True


def _check_goal(obj, limb, chain_names, role: str, goal, bone_name: str) -> None:
    """A target or pole must exist and must not move with the chain it drives."""
    if goal is None:
        return
    if goal.type == "ARMATURE" and bone_name:
        if bone_name not in goal.data.bones:
            raise LimbIKError(f"Limb '{limb.name}': {role} bone '{bone_name}' does not exist in '{goal.name}'.")
        if goal == obj:
            bone = obj.data.bones[bone_name]
            if bone_name in chain_names:
                raise LimbIKError(
                    f"Limb '{limb.name}': its {role} '{bone_name}' is a bone of the limb itself; "
                    "use a bone outside the chain."
                )
            for name in reversed(chain_names):  # the nearest chain bone above it names the problem best
                if obj.data.bones[name] in bone.parent_recursive:
                    raise LimbIKError(
                        f"Limb '{limb.name}': its {role} '{bone_name}' moves with the chain bone '{name}'; "
                        "use a bone outside the chain."
                    )
    elif goal == obj:
        raise LimbIKError(f"Limb '{limb.name}': the {role} is the armature itself; choose a {role} bone.")
    followed = _followed_chain_bone(goal, bone_name if goal.type == "ARMATURE" else "", obj, chain_names)
    if followed is not None:
        name, constraint = followed
        if constraint is None:
            raise LimbIKError(f"Limb '{limb.name}': the {role} '{goal.name}' is parented to the limb it drives.")
        raise LimbIKError(
            f"Limb '{limb.name}': the {role} '{goal.name}' follows the chain bone '{name}' through the constraint "
            f"{constraint}, so it would move with the limb it drives; remove that dependency or pick another {role}."
        )


def _followed_chain_bone(goal, bone_name: str, obj, chain_names) -> tuple[str, str | None] | None:
    """The chain bone of ``obj`` that ``goal`` (its bone ``bone_name``) moves with, through parents and
    constraints on any object, and the first constraint on the way (None for parents only); None if none."""
    chain = [obj.data.bones[n] for n in chain_names]
    seen, pending = set(), [(goal, bone_name, None)]
    while pending:
        owner, bone, constraint = pending.pop()
        if (owner.as_pointer(), bone) in seen:
            continue
        seen.add((owner.as_pointer(), bone))
        if owner == obj and bone in obj.data.bones:
            moved = obj.data.bones[bone]
            for link in reversed(chain):  # the nearest chain bone above it names the problem best
                if moved == link or link in moved.parent_recursive:
                    return link.name, constraint
        pending.extend(_dependencies(owner, bone, constraint))
    return None


def _dependencies(owner, bone: str, constraint: str | None) -> list[tuple]:
    """What ``owner`` (its bone ``bone``) moves with, as (object, bone name, first constraint on the way):
    its parent, its constraints' targets, and those of the bone and the bones above it."""
    out = []
    if owner.parent is not None:
        out.append((owner.parent, owner.parent_bone if owner.parent_type == "BONE" else "", constraint))
    holders = [(owner.constraints, f"'{owner.name}'")]
    if bone and owner.type == "ARMATURE" and bone in owner.pose.bones:
        pose_bone = owner.pose.bones[bone]
        holders += [
            (b.constraints, f"'{owner.name}' bone '{b.name}'") for b in (pose_bone, *pose_bone.parent_recursive)
        ]
    for constraints, place in holders:
        for c in constraints:
            if c.mute:
                continue
            targets = [
                (getattr(c, "target", None), getattr(c, "subtarget", "")),
                (getattr(c, "pole_target", None), getattr(c, "pole_subtarget", "")),
            ]
            targets += [(t.target, t.subtarget) for t in getattr(c, "targets", ())]  # the Armature constraint's
            out += [
                (t, s if isinstance(s, str) else "", constraint or f"'{c.name}' on {place}")
                for t, s in targets
                if isinstance(t, bpy.types.Object)
            ]
    return out
