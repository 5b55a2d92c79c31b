# SPDX-License-Identifier: GPL-3.0-or-later
"""Find arms and legs: by the names rigs commonly give their bones, else by their shape.

By name: a name is read as a side (``.L``/``_R``/``Left…``/``r_``…) and a role (thigh, shin,
foot, upper arm, forearm, hand, in any of the usual spellings, joint names included: a bone is
often named after the joint at its head, ``LeftHip`` being the thigh). That covers Rigify
metarigs and their generated FK controls, Mixamo, BVH/CMU motion capture, Unreal, VRM/Unity
humanoids and most hand-made rigs. A limb is only proposed when its bones really form a chain:
each one below the previous, at most a couple of helper bones (twist, offset) apart.

By shape, for the bones no name claims: mirrored pairs of chains of two or more bones that
branch off the same bone and hang downwards, at rest or as animated (IK controls excepted); a chain
goes on past the twist and helper bones beside it. Those that reach down to the lowest part of the
rig, at rest or in most frames of all the rig's actions, are legs (a quadruped's front limbs too),
and so are those whose mesh's foot hangs from an IK bone that does; the others are arms. A short
last bone below a foot is its toe; left is on the left of the way the rig faces. Every action
counts, whichever is active: how the rig was imported and which clip plays do not change what is
found.

Limbs whose bones all lie in one plane, at rest and as animated, belong to a 2D cut-out rig
(:func:`flat_plane`): they are held in that plane.
"""

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import bpy
import numpy as np
from bpy_extras import anim_utils

from .. import animator, timeline
from ..errors import LimbIKError
from . import soles
from .chain import REACH, apart, check_scale

#: Role of each spelling, after lower-casing and dropping separators.
ROLE_NAMES = {
    "upper_leg": ("thigh", "upleg", "upperleg", "legupper", "femur", "thighfk", "hip"),
    "lower_leg": ("shin", "calf", "leg", "lowerleg", "leglower", "knee", "tibia", "shinfk"),
    "foot": ("foot", "ankle", "footfk"),
    "upper_arm": ("upperarm", "arm", "armupper", "humerus", "upperarmfk", "shoulder"),
    "lower_arm": ("forearm", "lowerarm", "armlower", "elbow", "forearmfk"),
    "hand": ("hand", "wrist", "handfk"),
    "toe": ("toe", "toes", "toebase", "ball", "toefk", "hoof", "hoofback"),
}
LIMBS = (("leg", ("upper_leg", "lower_leg", "foot")), ("arm", ("upper_arm", "lower_arm", "hand")))
_ROLE_OF = {spelling: role for role, spellings in ROLE_NAMES.items() for spelling in spellings}

# Rigify's deform, original and mechanism copies, and widget bones, are never what an animator poses.
_HELPER_PREFIX = re.compile(r"^(DEF|ORG|MCH|VIS|WGT)[-_.]", re.IGNORECASE)
_BONE_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]')
_SEPARATORS = re.compile(r"[\s._:\-]+")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+")  # camelCase and digits
_SIDES = {"l": "L", "left": "L", "r": "R", "right": "R"}
MAX_GAP = 2  #: helper bones allowed between two bones of a chain
#: Degrees two bones named as lower legs, one below the other, bend at rest to be a hind leg's two (:func:`_hock`).
HOCK = 15.0
#: Bones lie in one plane when none of their ends is farther from it than this fraction of their extent.
FLAT = 1e-3


@dataclass(frozen=True)
class FoundLimb:
    name: str  #: e.g. "leg.L"
    upper: str
    lower: str
    end: str  #: foot or hand; empty if the rig has none below the lower bone
    toe: str = ""  #: a leg's toe below its foot, if any: the front of the sole for planting
    how: str = "name"  #: "name" or "shape": what found it


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


def find_limbs(obj: bpy.types.Object, shape: "Shape") -> list[FoundLimb]:
    """Every arm and leg of the armature ``obj``: by name, then by shape among the bones left.

    An arm found by name that reaches the ground is a front leg (a horse's foreleg); a leg found by name
    that never does, neither its bones in any pose read nor its skin at rest, is an arm (a T-rex's). Several
    chains on one side are told apart by the words their names do not share, ``front_leg.L`` and
    ``leg.L``, or by which hangs further along the body. ``shape``: the rig's bones as :class:`Shape` read
    them (at rest, and at a few frames of each of its actions given a depsgraph).
    """
    skin = functools.cache(lambda: soles.read_skin(obj))  # read once, and only if a limb's mesh is asked about
    found = []
    for limb in _by_name(obj.data):
        last = limb.toe or limb.end or limb.lower
        if limb.name.startswith("arm") and shape.reaches_ground([last]):
            limb = FoundLimb(f"front_leg{limb.name[3:]}", limb.upper, limb.lower, limb.end, limb.toe, limb.how)
        elif (
            "leg" in limb.name
            and not shape.ever_near_ground([last])
            and shape.skin_above_ground(obj, skin(), [limb.upper, limb.lower])
        ):
            limb = FoundLimb(limb.name.replace("leg", "arm"), limb.upper, limb.lower, limb.end, limb.toe, limb.how)
        found.append(limb)
    used = {b for limb in found for b in (limb.upper, limb.lower, limb.end, limb.toe) if b}
    taken = {limb.name for limb in found}
    legs = [limb for limb in found if "leg" in limb.name]

    def hung(chain):  # the bones outside ``chain`` its mesh's foot hangs from (an exported IK foot)
        return soles.outside(obj, skin(), chain, None, as_low=True)

    for limb in shape.limbs(used, np.mean([shape.length(limb) for limb in legs]) if legs else 0.0, hung):
        name, number = limb.name, 2
        while name in taken:
            kind, side = limb.name.rsplit(".", 1)
            name, number = f"{kind}_{number}.{side}", number + 1
        taken.add(name)
        found.append(FoundLimb(name, limb.upper, limb.lower, limb.end, limb.toe, "shape"))
    footless = [limb for limb in found if "leg" in limb.name and not limb.end]
    used |= {b for limb in found for b in (limb.upper, limb.lower, limb.end, limb.toe) if b}
    return [_hung_foot(obj, limb, skin(), shape, used) if limb in footless else limb for limb in found]


def _hung_foot(obj: bpy.types.Object, limb: FoundLimb, skin, shape: "Shape", used: set[str]) -> FoundLimb:
    """A leg without a foot bone, given the foot its mesh (``skin``) hangs from outside the chain
    (:func:`.soles.outside`: an exported IK foot under the root, the hoof below it its toe), else, for a leg found by
    name, the bone named as its side's foot nearest its shin's end, within the reach of a foot the chain does not
    carry (:data:`.chain.REACH` thighs: a robot's feet, rigid parts on IK bones under the root that no skin joins
    to the leg); the chain then reaches for it. A leg of three segments (a digitigrade leg: thigh, shin and the long
    bone down to the ground, ``UpperLeg`` > ``MidLeg`` > ``LowerLeg``) ends at that third bone, its only child still
    free, where it hangs on down; its toe is then the foot outside the chain (an exported IK foot under the root)
    that its mesh hangs from, as low as the third bone's own skin to within a tenth of that bone's length, else the
    bone named as this side's foot or toe whose head is as near that bone's far end."""
    bones = obj.data.bones
    below = [child for child in bones[limb.lower].children if child.name not in used]
    if len(below) == 1 and shape.hangs([below[0].name]):
        end = below[0]
        chain = [limb.upper, limb.lower, end.name]
        near = 0.1 * end.length
        hung = soles.outside(obj, skin, chain, None, as_low=True, within=near)
        toe = next((name for name in hung if not bones[name].parent or bones[name].parent.name not in hung), "")
        return FoundLimb(limb.name, limb.upper, limb.lower, end.name, toe or _named_foot(obj, chain, near), limb.how)
    chain = [limb.upper, limb.lower]
    hung = soles.outside(obj, skin, chain, None, as_low=True)
    if hung:
        toe = hung[1] if len(hung) > 1 and bones[hung[1]].parent == bones[hung[0]] else ""
        return FoundLimb(limb.name, limb.upper, limb.lower, hung[0], toe, limb.how)
    thigh = np.linalg.norm(np.array(bones[limb.lower].head_local) - np.array(bones[limb.upper].head_local))
    end = _named_foot(obj, chain, REACH * float(thigh)) if limb.how == "name" else ""
    return FoundLimb(limb.name, limb.upper, limb.lower, end, toe_of(obj, end), limb.how) if end else limb


def _named_foot(obj: bpy.types.Object, chain: list[str], near: float) -> str:
    """The bone named as the side's foot or toe that hangs from no bone of ``chain`` (nor carries it) and whose head
    is within ``near`` of the far end of the chain's last bone (its child's head, else its tail); the nearest, or
    empty."""
    bones = obj.data.bones
    side = parse(chain[0]) or parse(chain[1])
    last = bones[chain[-1]]
    joint = np.array(last.children[0].head_local if last.children else last.tail_local)
    feet = []
    for bone in bones:
        named = parse(bone.name)
        if named is None or side is None or named[0] != side[0] or named[1] not in ("foot", "toe"):
            continue
        distance = float(np.linalg.norm(np.array(bone.head_local) - joint))
        if bone.name not in chain and apart(bones, bone.name, chain) and distance <= near:
            feet.append((distance, bone.name))
    return min(feet)[1] if feet else ""


def _by_name(armature: bpy.types.Armature) -> list[FoundLimb]:
    """Every arm and leg of ``armature`` that its bone names and hierarchy agree on."""
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
                upper, lower = _hock(upper, lower, end, side)
                words = [w for w in qualifier if w not in shared] if len(chosen) > 1 else []
                name = "_".join([*words, kind]) + f".{side}"
                toes = [t for t, _ in by_role.get((side, "toe"), []) if end and _gap(end, t) is not None]
                toe = min(toes, key=lambda t: _gap(end, t)).name if toes else ""  # a foreleg's hoof, too
                found.append(FoundLimb(name, upper.name, lower.name, end.name if end else "", toe))
    return found


def _hock(
    upper: bpy.types.Bone, lower: bpy.types.Bone, end: bpy.types.Bone | None, side: str
) -> tuple[bpy.types.Bone, bpy.types.Bone]:
    """(upper, lower) of a named leg: as found, but for a leg of three long bones named as a thigh and two lower legs
    (``thigh`` > ``leg`` > ``shin`` > ``foot``, a horse's or an elephant's hind leg: femur, tibia and cannon) bent at
    rest between the two lower ones, which then bend as the leg's thigh and shin, at the joints its foreleg bends at."""
    between = end.parent if end is not None else None
    if between is None or between.parent != lower or parse(between.name) != (side, "lower_leg"):
        return upper, lower
    bend = (between.head_local - lower.head_local).angle(end.head_local - between.head_local, 0.0)
    return (lower, between) if math.degrees(bend) >= HOCK else (upper, lower)


def toe_of(obj: bpy.types.Object, end: str) -> str:
    """The toe below the foot ``end`` by the rules Detect Limbs follows: for a foot named as one, a
    bone named as a toe on its side a couple of bones below it; for an unnamed foot that comes down
    to the ground, its only child when that ends the chain and is long enough beside the foot
    (:attr:`Shape.TOE`). Empty if none."""
    bones = obj.data.bones
    foot = bones.get(end)
    if foot is None:
        return ""
    named = parse(end)
    if named is not None:
        toes = [
            bone
            for bone in foot.children_recursive
            if parse(bone.name) == (named[0], "toe") and _gap(foot, bone) is not None
        ]
        return min(toes, key=lambda bone: _gap(foot, bone)).name if toes else ""
    if len(foot.children) == 1 and not foot.children[0].children:
        toe = foot.children[0]
        if foot.length <= Shape.TOE * toe.length and Shape(obj, None).reaches_ground([end]):
            return toe.name
    return ""


def reach_ground(obj: bpy.types.Object, bones, depsgraph=None) -> list[bool]:
    """Whether each of ``bones`` is near the rig's lowest point at rest or usually in the rig's actions, read at a
    few frames of each in the scene ``depsgraph`` evaluates: a foot, not a hand."""
    shape = Shape(obj, depsgraph)  # once for all: it plays every action
    return [shape.reaches_ground([bone]) for bone in bones]


class Shape:
    """The armature's bones at rest, then at a few frames of each of its actions (in the pose shown
    if it has none, or no ``depsgraph``), heights measured along the world's up."""

    #: A limb reaches the ground when its lowest point is within this fraction of the rig's height
    #: of the rig's lowest point.
    GROUND = 0.15
    #: A chain hangs when its end is this fraction of its length below its start.
    HANGS = 0.4
    #: A toe is a last bone whose parent (the foot) is at most this many times as long.
    TOE = 2.5
    #: An arm found by shape is at least this fraction as long as the legs (not an ear, a fin).
    ARM = 0.4
    #: Frames of the animation the shape is read at.
    SAMPLES = 8
    #: A child bone is a helper beside the one a chain goes on through when it starts within this fraction of the
    #: longest child's extent of where its parent starts (a twist bone), or reaches no further than that.
    HELPER = 0.2

    def __init__(self, obj: bpy.types.Object, depsgraph):
        self.bones = obj.data.bones
        if not self.bones:
            raise LimbIKError(f"Armature '{obj.name}' has no bones to find limbs among; add bones first.")
        check_scale(obj.name, obj.matrix_world)
        up = np.linalg.solve(np.array(obj.matrix_world, dtype=np.float64)[:3, :3], [0.0, 0.0, 1.0])
        self.up = up / np.linalg.norm(up)

        def posed(_depsgraph=None):
            return {pb.name: (np.array(pb.head), np.array(pb.tail)) for pb in obj.pose.bones}

        rest = {b.name: (np.array(b.head_local), np.array(b.tail_local)) for b in self.bones}
        animated = _every_action(obj, depsgraph, posed, self.SAMPLES) if depsgraph is not None else []
        # The pose shown depends on the action and frame that happen to be current: read only without animation.
        self.poses = [rest, *(animated or [posed()])]
        # The rig's extent: its joints, and the tails that end a chain (a toe's tip); another bone's tail is a guess
        # where it is not its child's head (an FBX's automatic bone orientation points a root's a metre underground).
        ends = {b.name for b in self.bones if not b.children}
        heights = [
            np.array([h @ self.up for h, _ in pose.values()] + [t @ self.up for n, (_, t) in pose.items() if n in ends])
            for pose in self.poses
        ]
        self.low, self.high = [h.min() for h in heights], [h.max() for h in heights]

    def reaches_ground(self, names) -> bool:
        """Whether the last of ``names`` carries the body: near the rig's lowest point at rest, or in at least half
        of the poses read (a leg, a foreleg), not just once (a boxer's hand in a fall)."""
        near = self._near_ground(names[-1])
        return near[0] or 2 * sum(near[1:]) >= len(near) - 1

    def ever_near_ground(self, names) -> bool:
        """Whether the last of ``names`` comes near the rig's lowest point in any pose read."""
        return any(self._near_ground(names[-1]))

    def _near_ground(self, name: str) -> list[bool]:
        """Per pose read, whether the bone ``name`` is near the rig's lowest point by its lower end: its head where
        its tail points up or aside (an importer guesses tails: glTF's Fortune option points a foot's up)."""
        return [
            min(pose[name][0] @ self.up, pose[name][1] @ self.up) <= low + self.GROUND * (high - low)
            for pose, low, high in zip(self.poses, self.low, self.high)
        ]

    def skin_above_ground(self, obj: bpy.types.Object, skin, bones) -> bool:
        """Whether the mesh the chain ``bones`` carry stays clear of the ground at rest: its lowest vertex
        further than :data:`GROUND` of the mesh's height above the mesh's lowest. False without such a mesh:
        bone tails, which importers make up, alone never overrule a name."""
        heights = soles.lowest_at_rest(obj, skin, bones)
        if heights is None:
            return False
        lowest, low, high = heights
        return lowest > low + self.GROUND * (high - low)

    def hangs(self, chain) -> bool:
        """Whether the chain of bone names hangs downwards, at rest or posed."""
        for pose in self.poses:
            start, end = pose[chain[0]][0], pose[chain[-1]][1]
            if (start - end) @ self.up >= self.HANGS * self.span(chain, pose):
                return True
        return False

    def limbs(self, used: set[str], leg_length: float, hung: Callable[[list[str]], list[str]]) -> list[FoundLimb]:
        """Legs and arms by shape among the bones not in ``used``; ``leg_length``: how long the legs
        found already are (0: none); ``hung``: the bones outside a chain that its mesh's foot hangs from.

        A chain that is a hierarchy of its own beside the body's (a root bone and what hangs from it, where another
        root carries more bones) moves a limb from outside, as an exported IK foot does: it is not one; nor is a
        chain hanging from a bone of a limb in ``used`` (the fingers below an arm found by name)."""
        roots = [b for b in self.bones if b.parent is None]
        body = max(roots, key=lambda b: len(b.children_recursive))
        chains: dict[tuple, list[list[str]]] = {}
        for chain in self._chains():
            bone = self.bones[chain[0]]
            if bone.parent is None and bone != body or _controls(chain) or bone.parent and bone.parent.name in used:
                continue  # a hierarchy of its own, an IK control, or what hangs from a limb (its fingers)
            if len(chain) >= 2 and not used & set(chain) and self.hangs(chain):
                key = (bone.parent.name if bone.parent else "", len(chain))
                chains.setdefault(key, []).append(chain)
        pairs = [
            (self._limb(left, "L", hung), self._limb(right, "R", hung))
            for group in chains.values()
            for left, right in self._pairs(group)
        ]
        found = [limb for pair in self._facing(pairs) for limb in pair]
        legs = [f for f in found if f.name.startswith("leg")]
        leg_length = np.mean([self.length(f) for f in legs]) if legs else leg_length
        found = [f for f in found if f in legs or self.length(f) >= self.ARM * leg_length]
        front = self._front(legs)
        return [
            FoundLimb(f"front_{f.name}", f.upper, f.lower, f.end, f.toe, "shape") if f in front else f for f in found
        ]

    def _front(self, legs: list[FoundLimb]) -> list[FoundLimb]:
        """The front legs among more than two ``legs``: those hanging from deeper in the hierarchy (the chest); none
        where they all hang alike, or there are two."""
        depth = {limb: len(self.bones[limb.upper].parent_recursive) for limb in legs}
        front = [limb for limb in legs if depth[limb] == max(depth.values(), default=0)]
        return front if len(legs) > 2 and len(front) < len(legs) else []

    def _foot_and_toe(self, chain) -> bool:
        """Whether the last two of ``chain``'s bones are a foot and a toe: the foot, joint to joint, at most half as
        long as each of the two bones above it (a short toe under a long foot, as motion capture has)."""
        heads = [self.poses[0][name][0] for name in chain[-4:]]
        thigh, shin, foot = (float(np.linalg.norm(b - a)) for a, b in zip(heads, heads[1:]))
        return foot <= 0.5 * min(thigh, shin)

    def _chains(self) -> list[list[str]]:
        """The chains of bones that carry on one from another, at rest: each from a root or from where the
        hierarchy branches, down through the one child that goes on (:meth:`_next`) to where it ends or branches."""
        following = {bone.name: self._next(bone) for bone in self.bones}  # once each: a flat rig has many children
        chains = []
        for start in self.bones:
            if start.parent is not None and following[start.parent.name] == start:
                continue  # inside a chain
            chain, bone = [start.name], following[start.name]
            while bone is not None:
                chain.append(bone.name)
                bone = following[bone.name]
            chains.append(chain)
        return chains

    def _next(self, bone: bpy.types.Bone) -> bpy.types.Bone | None:
        """The child ``bone``'s chain goes on through: its only child, once the helpers beside it are left out (a
        twist bone starting where ``bone`` starts, a bone a fifth as long as the longest of them or less, a bone that
        ends there beside one that goes on); None where no child, or several alike (two legs, a fan of toes), go
        on."""
        children = list(bone.children)
        if len(children) <= 1:
            return children[0] if children else None
        rest = self.poses[0]
        extent = {child.name: self._extent(child) for child in children}
        least = self.HELPER * max(extent.values())
        children = [child for child in children if extent[child.name] > least]
        away = [child for child in children if np.linalg.norm(rest[child.name][0] - rest[bone.name][0]) > least]
        going_on = away if away else children
        if len(going_on) > 1:  # a bone going on beside ones that end there (a capture's end sites)
            going_on = [child for child in going_on if child.children] or going_on
        return going_on[0] if len(going_on) == 1 else None

    def _extent(self, bone: bpy.types.Bone) -> float:
        """How far the farthest joint or tail of ``bone`` and the bones below it is from ``bone``'s head, at rest."""
        rest = self.poses[0]
        head = rest[bone.name][0]
        points = [p for b in (bone, *bone.children_recursive) for p in rest[b.name]]
        return max(float(np.linalg.norm(p - head)) for p in points)

    def length(self, limb: FoundLimb) -> float:
        return self.span([n for n in (limb.upper, limb.lower, limb.end) if n])

    def span(self, chain, pose=None) -> float:
        """How long the chain of bone names is from joint to joint (at rest unless ``pose``): from each head to
        the next, then along the last bone. Not the sum of the bones' lengths, which an importer makes up
        where the file has joints only (glTF: Blender's bone option leaves them a hair long, apart)."""
        pose = pose or self.poses[0]
        heads = [pose[n][0] for n in chain]
        joints = sum(float(np.linalg.norm(b - a)) for a, b in zip(heads, heads[1:]))
        return joints + float(np.linalg.norm(pose[chain[-1]][1] - pose[chain[-1]][0]))

    def _pairs(self, group: list[list[str]]) -> list[tuple[list[str], list[str]]]:
        """Mirror pairs (left, right) among chains of one branch and length: alike in length, apart sideways."""

        pairs, free = [], list(group)
        while len(free) >= 2:
            first = free.pop(0)
            match = min(free, key=lambda c: abs(self.span(c) - self.span(first)))
            if abs(self.span(match) - self.span(first)) > 0.15 * self.span(first):
                continue
            free.remove(match)
            pairs.append(self._sides(first, match))
        return pairs

    def _facing(self, pairs: list[tuple[FoundLimb, FoundLimb]]) -> list[tuple[FoundLimb, FoundLimb]]:
        """The ``pairs`` (left, right) with each pair whose names give no side told apart by the way the rig faces,
        at rest: from its hind legs to its front legs (the legs hanging from deeper in the hierarchy), else where
        its feet point (from each foot's head to its toe's); left as :meth:`_sides` put them where neither says."""
        rest = self.poses[0]

        def heads(limb):
            return np.mean([rest[name][0] for name in (limb.upper, limb.lower, limb.end) if name], axis=0)

        legs = [limb for pair in pairs for limb in pair if limb.name.startswith("leg")]
        front = self._front(legs)
        if front:
            way = np.mean([heads(limb) for limb in front], axis=0) - np.mean(
                [heads(limb) for limb in legs if limb not in front], axis=0
            )
        else:
            way = sum((rest[limb.toe][0] - rest[limb.end][0] for limb in legs if limb.toe and limb.end), np.zeros(3))
        way = way - (way @ self.up) * self.up
        if np.linalg.norm(way) <= 1e-9:
            return pairs
        left = np.cross(self.up, way)
        sided = []
        for a, b in pairs:
            named = any(_parse_side(name) for limb in (a, b) for name in (limb.upper, limb.lower, limb.end) if name)
            if not named and (heads(a) - heads(b)) @ left < 0.0:
                a, b = replace(b, name=a.name), replace(a, name=b.name)
            sided.append((a, b))
        return sided

    def _sides(self, a: list[str], b: list[str]) -> tuple[list[str], list[str]]:
        """(left, right): as the names say, else the one on the +X (or +Y) side is the left (until
        :meth:`_facing` knows better)."""
        named = [next((p[0] for p in (_parse_side(n) for n in chain) if p), "") for chain in (a, b)]
        if named == ["R", "L"]:
            return b, a
        if named == ["L", "R"]:
            return a, b
        apart = np.array(self.bones[a[0]].head_local) - np.array(self.bones[b[0]].head_local)
        axis = int(np.argmax(np.abs(apart[:2])))
        return (a, b) if apart[axis] > 0 else (b, a)

    def _limb(self, chain: list[str], side: str, hung: Callable[[list[str]], list[str]]) -> FoundLimb:
        kind = "leg" if self.reaches_ground(chain) else "arm"
        leaf, above = self.bones[chain[-1]], self.bones[chain[-2]]
        if kind == "arm":  # a leg whose foot is driven from outside it: its last two bones and that foot
            feet = hung(chain[-2:])
            if feet and self.reaches_ground(feet[:1]):
                toe = feet[1] if len(feet) > 1 and self.bones[feet[1]].parent == self.bones[feet[0]] else ""
                return FoundLimb(f"leg.{side}", chain[-2], chain[-1], feet[0], toe, "shape")
        if len(chain) >= 4 and kind == "leg" and (above.length <= self.TOE * leaf.length or self._foot_and_toe(chain)):
            return FoundLimb(f"{kind}.{side}", chain[-4], chain[-3], chain[-2], chain[-1], "shape")
        if len(chain) >= 3:
            return FoundLimb(f"{kind}.{side}", chain[-3], chain[-2], chain[-1], "", "shape")
        return FoundLimb(f"{kind}.{side}", chain[0], chain[1], "", "", "shape")


def _controls(chain) -> bool:
    """Whether a bone of the chain is named as an IK control ("IKBackLeg.L"): it moves the limb, it is not one."""
    return any(w.lower() == "ik" for n in chain for part in _SEPARATORS.split(n) for w in _WORDS.findall(part))


def _every_action(obj: bpy.types.Object, depsgraph, read, samples: int) -> list:
    """``read()`` at ``samples`` frames over the range of every action of ``obj`` (:func:`_actions`), each
    played in turn as its action: which of them is active, and which frame is current, change nothing.
    The action, its slot, the frame and every bone's channels are put back as they were: a channel the active
    action does not key keeps its value, not the last one another action gave it."""
    data = obj.animation_data
    if data is None:
        return []
    if data.use_tweak_mode:  # the action cannot be swapped while a strip is edited: only what plays
        scene = depsgraph.scene
        return timeline.step(depsgraph, _frames(scene.frame_start, scene.frame_end, samples), read)
    actions = _actions(obj)
    if not actions:
        return []
    action, slot = data.action, data.action_slot
    channels = animator.read_channels(obj, slice(None))
    poses = []
    try:
        for other, other_slot in actions:
            data.action, data.action_slot = other, other_slot
            poses += timeline.step(depsgraph, _frames(*other.frame_range, samples), read)
    finally:
        data.action = action
        if action is not None:
            data.action_slot = slot
        animator.write_channels(obj, channels)
        timeline.step(depsgraph, [], read)  # the current frame evaluated again, with its own action
    return poses


def _frames(start: float, end: float, samples: int) -> list[int]:
    return sorted(set(np.linspace(start, end, samples).round().astype(int).tolist()))


def _actions(obj: bpy.types.Object) -> list:
    """``(action, slot)`` of every action of ``obj``: the active one, those of its NLA strips, and every other
    action that only moves bones this armature has (the clips an importer left beside the rig)."""
    data = obj.animation_data
    found = {data.action: data.action_slot} if data.action is not None and data.action_slot is not None else {}
    for strip in (strip for track in data.nla_tracks for strip in track.strips):
        if strip.action is not None and strip.action_slot is not None:
            found.setdefault(strip.action, strip.action_slot)
    for action in bpy.data.actions:
        for slot in () if action in found else action.slots:
            bag = anim_utils.action_get_channelbag_for_slot(action, slot)
            if slot.target_id_type in {"OBJECT", "UNSPECIFIED"} and bag is not None:
                bones = {m.group(1) for m in (_BONE_PATH.match(c.data_path) for c in bag.fcurves) if m}
                if bones and all(name in obj.data.bones for name in bones):
                    found[action] = slot
                    break
    return list(found.items())


def flat_plane(limbs: list[FoundLimb], shape: "Shape"):
    """The unit normal (armature space) of the one plane that the bones of two or more ``limbs`` lie in, in
    every pose ``shape`` read (at rest and at a few frames of each of the rig's actions): a 2D cut-out rig.
    The armature's XZ or YZ plane where they lie in that, else the plane that fits them best, its largest
    component positive.
    None where they do not lie in one plane, or a limb is straight in every pose read (on a line, it says
    nothing about a plane: two straight legs always lie in one)."""
    if len(limbs) < 2:
        return None
    poses = shape.poses
    chains = [[n for n in (limb.upper, limb.lower, limb.end) if n] for limb in limbs]
    points = [np.array([end for pose in poses for name in chain for end in pose[name]]) for chain in chains]
    if not all(_spread(p, _main_axes(p))[1] > FLAT * _extent(p) for p in points):
        return None
    every = np.concatenate(points)
    for normal in ((0.0, 1.0, 0.0), (1.0, 0.0, 0.0), _main_axes(every)[2]):
        if _spread(every, np.array([normal]))[0] <= FLAT * _extent(every):
            return np.asarray(normal) * np.sign(normal[int(np.argmax(np.abs(normal)))])
    return None


def _main_axes(points: np.ndarray) -> np.ndarray:
    """(3, 3) the directions the points spread along, most first: the last is their best plane's normal."""
    return np.linalg.svd(points - points.mean(axis=0), full_matrices=False)[2]


def _spread(points: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """How far the points reach from their centre along each of ``axes`` (unit rows)."""
    return np.abs((points - points.mean(axis=0)) @ axes.T).max(axis=0)


def _extent(points: np.ndarray) -> float:
    return float(np.linalg.norm(points - points.mean(axis=0), axis=1).max())


def _parse_side(bone_name: str) -> tuple[str] | None:
    """``(side,)`` when exactly one word of the name is a side."""
    name = bone_name.rsplit(":", 1)[-1]
    words = [w for part in _SEPARATORS.split(name) for w in _WORDS.findall(part)]
    sides = [_SIDES[w.lower()] for w in words if w.lower() in _SIDES]
    return (sides[0],) if len(sides) == 1 else None


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
