# SPDX-License-Identifier: GPL-3.0-or-later
"""Find arms and legs by the names rigs commonly give their bones, confirmed by the hierarchy.

A name is read as a side (``.L``/``_R``/``Left…``/``r_``…) and a role (thigh, shin, foot,
upper arm, forearm, hand, in any of the usual spellings). That covers Rigify metarigs and their
generated FK controls, Mixamo, BVH/CMU motion capture, Unreal, VRM/Unity humanoids and most
hand-made rigs. A limb is only proposed when its bones really form a chain: each one below the
previous, at most a couple of helper bones (twist, offset) apart.
"""

import re
from dataclasses import dataclass

import bpy

#: Role of each spelling, after lower-casing and dropping separators.
ROLE_NAMES = {
    "upper_leg": ("thigh", "upleg", "upperleg", "legupper", "femur", "thighfk"),
    "lower_leg": ("shin", "calf", "leg", "lowerleg", "leglower", "knee", "tibia", "shinfk"),
    "foot": ("foot", "ankle", "footfk"),
    "upper_arm": ("upperarm", "arm", "armupper", "humerus", "upperarmfk"),
    "lower_arm": ("forearm", "lowerarm", "armlower", "elbow", "forearmfk"),
    "hand": ("hand", "wrist", "handfk"),
    "toe": ("toe", "toes", "toebase", "ball", "toefk"),
}
LIMBS = (("leg", ("upper_leg", "lower_leg", "foot")), ("arm", ("upper_arm", "lower_arm", "hand")))
_ROLE_OF = {spelling: role for role, spellings in ROLE_NAMES.items() for spelling in spellings}

# Rigify's deform, original and mechanism copies, and widget bones, are never what an animator poses.
_HELPER_PREFIX = re.compile(r"^(DEF|ORG|MCH|VIS|WGT)[-_.]", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s._:\-]+")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+")  # camelCase and digits
_SIDES = {"l": "L", "left": "L", "r": "R", "right": "R"}
MAX_GAP = 2  #: helper bones allowed between two bones of a chain


@dataclass(frozen=True)
class FoundLimb:
    name: str  #: e.g. "leg.L"
    upper: str
    lower: str
    end: str  #: foot or hand; empty if the rig has none below the lower bone
    toe: str = ""  #: a leg's toe below its foot, if any: the front of the sole for planting


def parse(bone_name: str) -> tuple[str, str] | None:
    """``(side, role)`` of a bone name, side "L" or "R"; None if it names no limb bone.

    The name is split into words (separators and camelCase); exactly one word must be a side,
    and the last words must spell a role: "mixamorig:LeftUpLeg", "J_Bip_L_UpperLeg",
    "thigh_fk.L" and "calf_r" all parse, "thigh_ik.L" and "thigh_twist_01_l" do not.
    """
    parsed = _parse(bone_name)
    return parsed[:2] if parsed else None


def _parse(bone_name: str) -> tuple[str, str, tuple[str, ...]] | None:
    """``(side, role, qualifier)``: the qualifier is the words before the role ("front" in "front_thigh.L")."""
    if _HELPER_PREFIX.match(bone_name):
        return None
    name = bone_name.rsplit(":", 1)[-1]  # mixamorig:, Character1: … namespaces
    words = [w for part in _SEPARATORS.split(name) for w in _WORDS.findall(part)]
    sides = [_SIDES[w.lower()] for w in words if w.lower() in _SIDES]
    if len(sides) != 1:
        return None
    rest = [w.lower() for w in words if w.lower() not in _SIDES and not w.isdigit()]
    for start in range(len(rest)):
        role = _ROLE_OF.get("".join(rest[start:]))
        if role:
            return sides[0], role, tuple(rest[:start])
    return None


def find_limbs(armature: bpy.types.Armature) -> list[FoundLimb]:
    """Every arm and leg of ``armature`` that its bone names and hierarchy agree on.

    Several chains on one side (a quadruped's front and hind legs) are told apart by the words
    their names do not share: ``front_leg.L`` and ``leg.L``.
    """
    by_role: dict[tuple[str, str], list[tuple[bpy.types.Bone, tuple[str, ...]]]] = {}
    for bone in armature.bones:
        parsed = _parse(bone.name)
        if parsed:
            by_role.setdefault(parsed[:2], []).append((bone, parsed[2]))
    found = []
    for kind, (upper_role, lower_role, end_role) in LIMBS:
        for side in ("L", "R"):
            candidates = []
            for upper, qualifier in by_role.get((side, upper_role), []):
                for lower, _ in by_role.get((side, lower_role), []):
                    gap = _gap(upper, lower)
                    if gap is None:
                        continue
                    ends = [(e, _gap(lower, e)) for e, _ in by_role.get((side, end_role), [])]
                    ends = [(e, g) for e, g in ends if g is not None]
                    end, end_gap = min(ends, key=lambda item: item[1]) if ends else (None, MAX_GAP + 1)
                    score = (0 if end else 1, gap + end_gap, _fk_preference(upper, lower, end))
                    candidates.append((score, upper, lower, end, qualifier))
            chosen, used = [], set()
            for _, upper, lower, end, qualifier in sorted(candidates, key=lambda c: c[0]):
                bones = {upper.name, lower.name} | ({end.name} if end else set())
                if not bones & used:
                    chosen.append((upper, lower, end, qualifier))
                    used |= bones
            shared = set.intersection(*(set(c[3]) for c in chosen)) if chosen else set()
            for upper, lower, end, qualifier in chosen:
                words = [w for w in qualifier if w not in shared] if len(chosen) > 1 else []
                name = "_".join([*words, kind]) + f".{side}"
                toes = [t for t, _ in by_role.get((side, "toe"), []) if end and _gap(end, t) is not None]
                toe = min(toes, key=lambda t: _gap(end, t)).name if kind == "leg" and toes else ""
                found.append(FoundLimb(name, upper.name, lower.name, end.name if end else "", toe))
    return found


def _gap(ancestor: bpy.types.Bone, bone: bpy.types.Bone) -> int | None:
    """How many bones lie between ``ancestor`` and its descendant ``bone`` (None if not one, or too far)."""
    parent, gap = bone.parent, 0
    while parent is not None and gap <= MAX_GAP:
        if parent == ancestor:
            return gap
        parent, gap = parent.parent, gap + 1
    return None


def _fk_preference(*bones) -> int:
    """Lower for chains of explicit FK controls, as in a generated Rigify rig."""
    return -sum(1 for b in bones if b is not None and "fk" in b.name.lower())


def limb_kind_and_side(bone_names) -> tuple[str, str]:
    """A limb name's parts for a chain picked by hand: ("leg", "L"), or ("limb", "") when unknown."""
    parsed = [p for p in (parse(n) for n in bone_names) if p]
    side = parsed[0][0] if parsed else ""
    roles = {role for _, role in parsed}
    kind = "leg" if roles & {"upper_leg", "lower_leg", "foot"} else "arm" if roles else "limb"
    return kind, side
