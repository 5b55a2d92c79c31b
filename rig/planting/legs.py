# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting in the rig: which legs, what the take shows of them, and the goals planting gives.

The maths is in :mod:`..solvers.planting`, over the whole take at once. This module finds the
planted legs and their pelvis (:func:`plant_plan`), reads the animated legs over the take
(:func:`leg_sample`), runs the planting over the take (:func:`analyse`) and puts one frame's
result into the gathered chains' goals (:func:`set_goals`). The bake and live solving share it: both
analyse the same take, so they show the same pose.
"""

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import bpy
import numpy as np

from ...solvers import SolverError, rotation_modes
from ...solvers.planting import Legs, Planted, PlantSettings, heel_points, plant
from ..errors import LimbIKError
from ..keys import actions
from ..limbs import soles
from ..pose import Pose
from . import causes, contacts
from .causes import frames_text
from .ground import Ground


@dataclass(frozen=True)
class Foot:
    """One planted leg's bones (pose bone indices) and sizes (armature units)."""

    limb: str
    upper: int
    lower: int
    foot: int
    toe: int | None  #: the toe below the foot, kept along the ground while the foot rolls
    thigh: float  #: hip to knee, at rest
    shin: float  #: knee to ankle, at rest
    foot_length: float  #: the chain's tip is the foot's tail
    toe_length: float
    sole: soles.Sole | None = None  #: heel, ball and tip on the skinned mesh; None: the bones'

    @property
    def toe_or_foot(self) -> int:
        return self.foot if self.toe is None else self.toe


@dataclass(frozen=True)
class PlantPlan:
    obj: bpy.types.Object
    feet: list[Foot]
    pelvis: int
    pelvis_mode: str  #: the pelvis bone's rotation mode
    under_pelvis: frozenset[str]  #: limbs whose chains move with the pelvis
    local_location: bool  #: the pelvis' location channel is in its own rest frame (else the armature's)
    ground: bpy.types.Collection  #: what the legs stand on (the rig's Ground setting), read once
    #: limb -> a sentence: its foot's skin hangs from bones planting does not move (:func:`..limbs.soles.outside`)
    outside: dict[str, str] = field(default_factory=dict)
    authored: bpy.types.Collection | None = None  #: what the take was made on (Authored Ground); None: read from it


def plant_plan(obj: bpy.types.Object, limbs, chains) -> PlantPlan | None:
    """The planting set-up of the planned limbs; None when no limb is planted.

    Raises :class:`LimbIKError` for a planted limb without a foot, a missing ground or pelvis.
    """
    planted = [(limb, chain) for limb, chain in zip(limbs, chains) if limb.plant]
    if not planted:
        return None
    if obj.limb_ik.ground is None:
        raise LimbIKError(f"Armature '{obj.name}' has planted limbs but no ground collection to plant them on.")
    bones = obj.data.bones
    skin = soles.read_skin(obj, rigid=True)
    feet, outside = [], {}
    for limb, chain in planted:
        if chain.size != 3:
            hung = soles.hung_foot(obj, skin, limb.name, chain.bones)
            raise LimbIKError(
                f"Limb '{limb.name}' is planted but has no end bone; planting needs thigh, shin and foot"
                + (f" ({hung})." if hung else ".")
            )
        if limb.toe_bone and limb.toe_bone not in bones:
            raise LimbIKError(f"Limb '{limb.name}': toe bone '{limb.toe_bone}' does not exist in '{obj.name}'.")
        hung = soles.hung_foot(obj, skin, limb.name, chain.bones, limb.toe_bone or None)
        if hung:
            outside[limb.name] = (
                f"{hung[0].upper()}{hung[1:]}: planting plants the chain's end bone '{chain.bones[2]}' by its own "
                "skin or its tail, and that foot stays where the animation has it."
            )
        feet.append(_foot(obj, limb, chain, skin))
    pelvis = _pelvis(obj, limbs, chains, [chain for _, chain in planted])
    pelvis_bone = bones[pelvis]
    if any(obj.pose.bones[pelvis].lock_location):
        raise LimbIKError(f"Pelvis bone '{pelvis}' has locked location; unlock it so planting can lower the hips.")
    for limb, chain in zip(limbs, chains):
        for index in chain.located:
            name = obj.pose.bones[index].name
            if pelvis_bone in bones[name].parent_recursive:
                role = "end bone" if index == chain.indices[-1] else "toe bone"
                raise LimbIKError(
                    f"Limb '{limb.name}': its {role} '{name}' hangs from the pelvis bone '{pelvis}' but not "
                    "from its chain, so moving the body would move it off where the chain puts it; parent it to the "
                    f"{'lower bone' if role == 'end bone' else 'end bone'}, or to a bone above the pelvis."
                )
    under = frozenset(
        limb.name for limb, chain in zip(limbs, chains) if pelvis_bone in bones[chain.bones[0]].parent_recursive
    )
    for limb, _ in planted:
        if limb.name not in under:
            raise LimbIKError(
                f"Limb '{limb.name}' does not hang below the pelvis bone '{pelvis}'; set the Pelvis Bone to a bone "
                "that carries every planted leg."
            )
    pose_bone = obj.pose.bones[pelvis]
    return PlantPlan(
        obj,
        feet,
        obj.pose.bones.find(pelvis),
        pose_bone.rotation_mode,
        under,
        pelvis_bone.use_local_location,
        obj.limb_ik.ground,
        outside,
        obj.limb_ik.authored_ground,
    )


def _pelvis(obj, limbs, chains, planted_chains) -> str:
    """The rig's pelvis bone: as set, or the nearest common parent of the planted legs (and of the rig's other
    limbs, where one carries them all) that can move (a bone connected to its parent ignores its location: its
    parent carries it)."""
    name = obj.limb_ik.pelvis_bone
    bones = obj.data.bones
    if name:
        if name not in bones:
            raise LimbIKError(f"Pelvis bone '{name}' does not exist in armature '{obj.name}'.")
        if bones[name].use_connect:
            raise LimbIKError(
                f"Pelvis bone '{name}' is connected to its parent '{bones[name].parent.name}', so it cannot be lowered "
                "on its own; set the Pelvis Bone to the parent, or disconnect it."
            )
        return name
    lines = [list(bones[c.bones[0]].parent_recursive) for c in planted_chains]
    common = [b for b in lines[0] if all(b in line for line in lines[1:])]
    if not common:
        legs = ", ".join(f"'{c.limb}'" for c in planted_chains)
        raise LimbIKError(
            f"The planted legs {legs} of '{obj.name}' share no parent bone to carry them; parent them under one "
            "body bone and set it as the Pelvis Bone."
        )
    # The body is what also carries the rig's other limbs: a Character Creator or Daz rig's hip, above the pelvis
    # bone its thighs hang from, carries the spine and the arms, which lowering the pelvis alone would leave behind.
    others = [bones[limb.upper_bone] for limb in obj.limb_ik.limbs if not limb.plant and limb.upper_bone in bones]
    carrying = [bone for bone in common if all(bone in other.parent_recursive for other in others)]
    pelvis = carrying[0] if carrying else common[0]
    while pelvis.use_connect:
        pelvis = pelvis.parent
    return pelvis.name


def _foot(obj, limb, chain, skin) -> Foot:
    bones = obj.data.bones
    index = obj.pose.bones.find
    heads = [np.array(bones[n].head_local) for n in chain.bones]
    toe = bones[limb.toe_bone] if limb.toe_bone else None
    return Foot(
        limb.name,
        *(index(n) for n in chain.bones),
        index(toe.name) if toe is not None else None,
        float(np.linalg.norm(heads[1] - heads[0])),
        float(np.linalg.norm(heads[2] - heads[1])),
        bones[chain.bones[2]].length,
        toe.length if toe is not None else 0.0,
        soles.sole(obj, skin, chain.bones[2], toe.name if toe is not None else None),
    )


def plant_settings(obj: bpy.types.Object, scene: bpy.types.Scene) -> PlantSettings:
    """The rig's planting settings, as the solver takes them."""
    rig = obj.limb_ik
    try:
        return PlantSettings(
            fps=scene.render.fps / scene.render.fps_base,
            floor=rig.floor_height,
            contact_height=rig.contact_height,
            contact_speed=rig.contact_speed,
            max_tilt=rig.max_foot_angle,
            smoothing=rig.smoothing_time,
            release=rig.release_time,
            foot_lock=rig.use_foot_lock,
            pelvis_mode=rig.pelvis_mode.lower(),
            max_pelvis_drop=rig.max_pelvis_drop,
        )
    except SolverError as error:
        raise LimbIKError(f"Armature '{obj.name}': {error}.") from error


def take_frames(
    obj: bpy.types.Object, scene: bpy.types.Scene, first: int | None = None, last: int | None = None
) -> range:
    """The frames planting analyses: the scene's range and the rig's keys, and ``first`` to
    ``last`` if they reach beyond. A frame's planted pose depends on the take, not on which of
    its frames are baked."""
    start, end = scene.frame_start, scene.frame_end
    action = obj.animation_data.action if obj.animation_data else None
    curves = actions.fcurves(obj)
    if action is not None and curves is not None and any(len(curve.keyframe_points) for curve in curves):
        action_start, action_end = action.frame_range
        start, end = min(start, math.floor(action_start)), max(end, math.ceil(action_end))
    if first is not None:
        start, end = min(start, first), max(end, last if last is not None else first)
    return range(start, end + 1)


class LegSample(NamedTuple):
    """The animated legs in world space, n legs: at one frame, or over F frames with a leading axis of F."""

    feet: np.ndarray  #: (n, 4, 4) foot bone matrices
    balls: np.ndarray  #: (n, 3) where each foot bends: its toe's head, or a toe-less foot's tail
    tips: np.ndarray  #: (n, 3) the toes' tips (the balls again for toe-less feet)
    toes: np.ndarray  #: (n, 3, 3) toe rotations (the foot's for a toe-less foot)
    heels: np.ndarray  #: (n, 3) the heels of the feet whose sole is a mesh's (their balls for the others)
    hips: np.ndarray  #: (n, 3) upper bones' heads
    knees: np.ndarray  #: (n, 3) lower bones' heads
    pelvis: np.ndarray  #: (3,)
    #: (n, Q, 3) the outlines of the feet whose sole is a mesh's (:attr:`..limbs.soles.Sole.outline`), as many points
    #: each: the last repeated for a shorter one, the ball for a bone sole
    outline: np.ndarray
    #: (n, 2, 3) the upper and lower bones' directions, head to tail (their Y axes): where a rig's bones are not joined
    #: head to tail (a glTF import guesses their tails), a shin turned about its length against the thigh turns them
    #: apart though the joints keep their bend
    directions: np.ndarray
    #: (n, V, 3) every vertex of the feet whose sole is a mesh's (:attr:`..limbs.soles.Sole.skin`), as many each (the
    #: last repeated for fewer, the ball for a bone sole); None unless asked for
    skin: np.ndarray | None = None

    def at(self, rows) -> "LegSample":
        """One frame (``rows`` an index) or some frames (an array of them) of a sample over frames."""
        return LegSample(*(None if values is None else values[rows] for values in self))


def leg_sample(plan: PlantPlan, pose: Pose, skin: bool = False) -> LegSample:
    """The planted legs of ``pose`` in world space: at one frame, or over frames (``pose`` with a leading axis of
    F). Bone by bone, so that a long take costs a few arrays of its frames, not one per frame. ``skin``: with every
    vertex of the feet on a mesh too."""

    def world(bone: int) -> np.ndarray:
        return pose.world @ pose.matrices[..., bone, :, :]

    feet, toes, hips, knees, directions = [], [], [], [], []
    for f in plan.feet:
        feet.append(world(f.foot))
        toes.append(world(f.toe_or_foot))
        upper, lower = world(f.upper), world(f.lower)
        hips.append(upper[..., :3, 3])
        knees.append(lower[..., :3, 3])
        directions.append(np.stack([upper[..., :3, 1], lower[..., :3, 1]], axis=-2))
    feet, toes = np.stack(feet, axis=-3), np.stack(toes, axis=-3)
    has_toe = np.array([f.toe is not None for f in plan.feet])[:, None]
    foot_length = np.array([f.foot_length for f in plan.feet])[:, None]
    toe_length = np.array([f.toe_length for f in plan.feet])[:, None]
    foot_tips = feet[..., :3, 3] + feet[..., :3, 1] * foot_length  # a toe-less foot bends at its tip
    balls = np.where(has_toe, toes[..., :3, 3], foot_tips)
    tips = np.where(has_toe, toes[..., :3, 3] + toes[..., :3, 1] * toe_length, foot_tips)
    heels = balls.copy()  # a bone sole's heel is found in the motion (:func:`sole_points`)
    for n, f in enumerate(plan.feet):
        if f.sole is not None:  # on the mesh
            carrier = (toes if f.sole.on_toe else feet)[..., n, :, :]
            heels[..., n, :] = (carrier @ f.sole.heel)[..., :3]
            balls[..., n, :] = (carrier @ f.sole.ball)[..., :3]
            tips[..., n, :] = (toes[..., n, :, :] @ f.sole.tip)[..., :3]
    outline = _vertices(plan, pose, balls, "outline")
    pelvis = world(plan.pelvis)[..., :3, 3].copy()
    hips, knees, directions = np.stack(hips, -2), np.stack(knees, -2), np.stack(directions, -3)
    return LegSample(
        feet,
        balls,
        tips,
        toes[..., :3, :3].copy(),
        heels,
        hips,
        knees,
        pelvis,
        outline,
        directions,
        _vertices(plan, pose, balls, "skin") if skin else None,
    )


def outline_size(plan: PlantPlan, part: str = "outline") -> int:
    """How many outline points (or, ``part`` "skin", vertices) each foot of ``plan`` has in a :class:`LegSample`: the
    most a mesh sole has."""
    return max((len(getattr(f.sole, part)) for f in plan.feet if f.sole is not None), default=0)


def _vertices(plan: PlantPlan, pose: Pose, balls: np.ndarray, part: str) -> np.ndarray:
    """(..., n, Q, 3) the vertices of a ``part`` of each sole (:attr:`..limbs.soles.Sole.outline` or ``skin``) in
    ``pose``, as many for every foot: the last repeated for a shorter one, the ball (``balls`` (..., n, 3)) for a
    bone sole."""
    count = outline_size(plan, part)
    out = np.repeat(balls[..., None, :], count, axis=-2)
    for n, f in enumerate(plan.feet):
        if f.sole is not None and getattr(f.sole, part):
            points = _skinned(pose, getattr(f.sole, part))
            out[..., n, :, :] = np.concatenate(
                [points, np.repeat(points[..., -1:, :], count - points.shape[-2], axis=-2)], axis=-2
            )
    return out


def _skinned(pose: Pose, outline: tuple[soles.Skinned, ...]) -> np.ndarray:
    """(..., Q, 3) world positions of the skinned vertices of an ``outline`` in ``pose``, as their bones carry them."""
    bones, weights, local = _weighted(outline)
    carried = np.einsum("...qkij,qkj->...qki", pose.matrices[..., bones, :, :], local)
    return np.einsum("...ij,...qj->...qi", pose.world, np.einsum("qk,...qki->...qi", weights, carried))[..., :3]


@functools.cache
def _weighted(outline: tuple[soles.Skinned, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An ``outline``'s bones (Q, K), weights (Q, K) and rest-space points (Q, K, 4), K the most bones a vertex
    has: a vertex with fewer has weight 0 on its first bone for the rest."""
    most = max(len(vertex.bones) for vertex in outline)
    bones, weights, local = (
        np.zeros((len(outline), most), int),
        np.zeros((len(outline), most)),
        np.zeros((len(outline), most, 4)),
    )
    for q, vertex in enumerate(outline):
        k = len(vertex.bones)
        bones[q, :k], weights[q, :k], local[q, :k] = vertex.bones, vertex.weights, vertex.local
        bones[q, k:] = vertex.bones[0]
    return bones, weights, local


def sole_points(plan: PlantPlan, track: LegSample) -> np.ndarray:
    """(F, n, 3, 3) heel, ball and tip of each planted foot over a take (``track``: the frames' samples stacked):
    on the skinned mesh where one follows the foot; else the bones', the heel found in the motion
    (:func:`..solvers.planting.heel_points`)."""
    heel = heel_points(track.feet, track.balls)
    on_mesh = np.array([foot.sole is not None for foot in plan.feet])
    heel[:, on_mesh] = track.heels[:, on_mesh]
    return np.stack([heel, track.balls, track.tips], axis=2)


@dataclass(frozen=True)
class Analysis:
    """Planting worked out over a take."""

    frames: range
    planted: Planted
    lift: np.ndarray  #: (F,) how far planting raises the pelvis at each frame (world units; negative: lowers it)
    reach: float  #: the longest planted leg, hip to ankle (world units)
    ground: str  #: the ground collection's name
    stances: dict[str, list]  #: per planted limb, its stances and forced ranges (:func:`.contacts.stances`)
    least_lift: float  #: the lift at the frame where planting moves the body least (world units; negative: down)
    #: a sentence when planting moves the body further than the take explains (:func:`.causes.body_moved`)
    moved: str | None
    #: per planted limb whose leg is of a size no body has, in metres, why that matters (:func:`.causes.unsized`)
    unsized: dict[str, str] = field(default_factory=dict)
    #: per planted limb whose knee planting turns faster than it is held to, each such frame, the turn and why
    #: (:func:`.causes.knee_causes`): said where the keys turn it so
    knee_causes: dict[str, list[causes.KneeCause]] = field(default_factory=dict)

    @property
    def problems(self) -> dict[str, str]:
        """What makes the planting wrong though it is solved, per planted limb: a body moved further than the take
        explains (every leg), a leg of a size no body has."""
        moved = {limb: self.moved for limb in self.stances} if self.moved else {}
        return {
            limb: " ".join(filter(None, (moved.get(limb), self.unsized.get(limb))))
            for limb in {**moved, **self.unsized}
        }

    @cached_property
    def pitches(self) -> bool:
        """Whether the body turns anywhere in the take (a quadruped on a slope), not only rises and falls."""
        return not np.allclose(self.planted.body[:, :3, :3], np.eye(3), rtol=0.0, atol=1e-12)


def analyse(
    plan: PlantPlan,
    frames: range,
    track: LegSample,
    ground: Ground,
    scene: bpy.types.Scene,
    asked: range | None = None,
    authored: Ground | None = None,
) -> Analysis:
    """Plant the legs of ``plan`` over ``frames``, whose animated legs ``track`` holds (:func:`leg_sample` over
    them), on ``ground``, the take made on ``authored`` (else read from its stances). Raises :class:`LimbIKError`
    where a foot has no ground under it, counting the frames of ``asked`` (default: all) that have none, or
    stands far under its floor, on nothing the take shows."""
    legs = Legs(
        heel=sole_points(plan, track)[:, :, 0],
        foot=track.feet,
        ball=track.balls,
        tip=track.tips,
        toe=track.toes,
        hip=track.hips,
        pelvis=track.pelvis,
        thigh=np.linalg.norm(track.knees - track.hips, axis=2),
        shin=np.linalg.norm(track.feet[..., :3, 3] - track.knees, axis=2),
        girdle=girdles(plan),
        solid=np.array([foot.sole is not None for foot in plan.feet]),
        outline=track.outline if track.outline.shape[-2] else None,
    )
    forced = contacts.forced(plan.obj, plan.feet, frames)
    try:
        planted = plant(
            legs, ground.cast_down, plant_settings(plan.obj, scene), forced, authored and authored.cast_down
        )
    except SolverError as error:
        raise LimbIKError(f"Armature '{plan.obj.name}' could not be planted: {error}.") from error
    problems = {
        foot.limb: f"Limb '{foot.limb}' has no ground under its foot at "
        f"{_missing_text(frames, planted.no_ground[:, n], asked or frames)}; extend the ground collection "
        f"'{ground.name}' under the whole walk."
        for n, foot in enumerate(plan.feet)
        if planted.no_ground[:, n].any()
    }
    floor = f"the authored ground '{authored.name}'" if authored else "its floor"
    if planted.under_floor.any():
        # The lowest any sole stands in the take: the floor, or above it, where the take stands on something.
        soles = np.minimum(np.minimum(legs.heel[..., 2], legs.ball[..., 2]), legs.tip[..., 2])
        lowest = float(soles[planted.contacts.stance.any(axis=2)].min())
    for n, foot in enumerate(plan.feet):
        under = np.flatnonzero(planted.under_floor[:, n])
        if len(under) and foot.limb not in problems:
            problems[foot.limb] = (
                f"Limb '{foot.limb}' stands far under {floor} at {frames_text(frames, under)}, "
                "on nothing the take shows, so it is not planted; set the Authored Floor to the floor the take "
                f"stands on (the lowest it stands a sole is {lowest:.3f} m), or give the Authored Ground it was "
                "made on."
            )
    if problems:
        raise LimbIKError(next(iter(problems.values())), problems)
    pelvis = track.pelvis
    lift = np.einsum("fij,fj->fi", planted.body[:, :3, :3], pelvis)[:, 2] + planted.body[:, 2, 3] - pelvis[:, 2]
    stances = contacts.stances(plan.feet, frames, planted.contacts.stance.any(axis=2), forced)
    reach = float((legs.thigh + legs.shin).max())
    least = float(lift[np.argmin(np.abs(lift))])
    moved = causes.body_moved(plan.obj.name, frames, least, reach, ground.name)
    names = [f.limb for f in plan.feet]
    why = causes.knee_causes(names, frames, legs, planted)
    unsized = causes.unsized(names, np.median(legs.thigh + legs.shin, axis=0))
    analysis = Analysis(frames, planted, lift, reach, ground.name, stances, least, moved, unsized, why)
    _last[plan.obj.session_uid] = (plan, analysis)
    return analysis


def girdles(plan: PlantPlan) -> np.ndarray | None:
    """(n,) 0 for hind legs, 1 for front ones, from where their hips sit at rest: with three legs or
    more, split at the widest gap along the line the hips spread over most, if that gap is at
    least half a leg long (a quadruped). None for one girdle (a biped)."""
    if len(plan.feet) < 3:
        return None
    bones = plan.obj.data.bones
    hips = np.array([bones[plan.obj.pose.bones[f.upper].name].head_local for f in plan.feet], dtype=np.float64)
    centred = hips - hips.mean(axis=0)
    along = centred @ np.linalg.svd(centred, full_matrices=False)[2][0]
    order = np.argsort(along)
    gaps = np.diff(along[order])
    widest = int(np.argmax(gaps))
    if gaps[widest] < 0.25 * np.mean([f.thigh + f.shin for f in plan.feet]):
        return None
    girdle = np.zeros(len(plan.feet), int)
    girdle[order[widest + 1 :]] = 1
    return girdle


def _missing_text(frames: range, missing: np.ndarray, asked: range) -> str:
    """Where ``missing`` (over the take ``frames``) is true: counted over the frames ``asked``, and the
    rest of the take, which planting reads too, after them."""
    inside = np.isin(np.asarray(frames), np.asarray(asked))
    here, around = np.flatnonzero(missing & inside), int((missing & ~inside).sum())
    if not len(here):
        everywhere = frames_text(frames, np.flatnonzero(missing))
        return f"{everywhere} of the take around the frames asked, read to plant them"
    text = frames_text(frames, here)
    return text + (f" (and {around} more of the take around them, read to plant them)" if around else "")


@dataclass(frozen=True)
class _Cached:
    key: tuple  #: settings, legs, ground and take the analysis was made for
    frames: range
    track: LegSample  #: the animated legs over the frames, as analysed
    result: Analysis | LimbIKError  #: the analysis, or why there is none


_cache: dict[int, _Cached] = {}  # by Object.session_uid
_last: dict[int, tuple[PlantPlan, Analysis]] = {}  # by Object.session_uid: the take last planted (live or baked)


def last_planted(obj: bpy.types.Object) -> tuple[PlantPlan, Analysis] | None:
    """The legs and the analysis of the take last planted for ``obj`` (live, a bake or a check), or None:
    what the viewport overlay draws."""
    return _last.get(obj.session_uid)


def stances_found(obj: bpy.types.Object) -> dict[str, list]:
    """The stances of the take last planted for ``obj`` (:func:`last_planted`), per leg, for the sidebar and
    the Dope Sheet; empty before one."""
    last = _last.get(obj.session_uid)
    return last[1].stances if last is not None else {}


def analysed(plan: PlantPlan, depsgraph, pose: Pose, read: Callable[[range], Pose]) -> Analysis:
    """The planting analysis of the take around the current frame, for solving one frame (live, the
    Solve operator): kept while the take, the ground, the settings, the forced contacts and the animated
    legs at this frame (``pose``, over one frame) are as they were analysed; else made anew from
    ``read(frames)``, the rig's animated pose over the take (:func:`.frames.sampling.take`). Raises
    :class:`LimbIKError` when the take cannot be planted (kept too, until something changes)."""
    obj, scene = plan.obj, depsgraph.scene
    ground = Ground(plan.ground, depsgraph)
    authored = Ground(plan.authored, depsgraph) if plan.authored is not None else None
    frame = scene.frame_current_final
    span = take_frames(obj, scene, math.floor(frame), math.ceil(frame))
    forced = contacts.key(obj, plan.feet)
    key = (
        plant_settings(obj, scene),
        tuple(plan.feet),
        plan.pelvis,
        ground.fingerprint,
        authored and authored.fingerprint,
        span,
        forced,
    )
    cached = _cache.get(obj.session_uid)
    if cached is None or cached.key != key or not _unchanged(cached, leg_sample(plan, pose), frame):
        track = leg_sample(plan, read(span))
        try:
            result = analyse(plan, span, track, ground, scene, authored=authored)
        except LimbIKError as error:
            result = error
        cached = _cache[obj.session_uid] = _Cached(key, span, track, result)
    if isinstance(cached.result, LimbIKError):
        raise cached.result
    return cached.result


def _unchanged(cached: _Cached, sample: tuple, frame: float) -> bool:
    """Whether the animated legs at ``frame`` are as analysed: the animation was not edited here
    (an edit elsewhere shows when the animator gets there). Subframes are not analysed: trusted."""
    if frame != round(frame):
        return True
    analysed = cached.track.at(int(round(frame)) - cached.frames.start)
    # NaN: changed; np.allclose: 8x slower; initial: a rig without mesh soles has no outline; the skin is not sampled
    return all(np.abs(a - b).max(initial=0.0) <= 1e-6 for a, b in zip(analysed, sample) if a is not None)


def forget_all() -> None:
    _cache.clear()
    _last.clear()


class Carried(NamedTuple):
    """The pelvis' new channels: it carries the body, so the solve writes it with the legs. Over F frames
    (from :func:`set_goals`) the arrays have a leading axis of F."""

    index: int  #: pose bone index
    location: np.ndarray  #: (3,) location channel
    rotation: np.ndarray | None  #: (4,) local rotation quaternion; None when the body does not pitch


def set_goals(plan: PlantPlan, groups, pose: Pose, analysis: Analysis, frames) -> list[Carried]:
    """Put the planting of ``frames`` into chains gathered over them (:func:`.solve.assemble`, ``pose``
    with a leading axis of F): feet goals, and every chain below the pelvis carried by the body's motion.
    Returns the pelvis' new channels at each frame."""
    planted, at = analysis.planted, _between(analysis, frames)
    count = len(frames)
    to_armature = np.linalg.inv(pose.world)
    motion = to_armature @ at(planted.body) @ pose.world  # armature space
    turn, move = motion[:, :3, :3], motion[:, :3, 3]
    feet, toes = at(planted.foot), at(planted.toe)
    feet_at = {f.limb: n for n, f in enumerate(plan.feet)}
    for group in groups:
        batch = group.batch

        def rows(values):  # (F, limbs, ...) views
            return None if values is None else values.reshape(count, -1, *values.shape[1:])

        matrices, points, target = rows(batch.matrices), rows(batch.points), rows(batch.target)
        end_rotation, toe_matrices, toe_goal = rows(batch.end_rotation), rows(batch.toe_matrices), rows(batch.toe_goal)
        for column, limb in enumerate(group.layout.limbs):
            if limb.name in plan.under_pelvis:
                matrices[:, column] = motion[:, None] @ matrices[:, column]
                points[:, column] = points[:, column] @ np.swapaxes(turn, 1, 2) + move[:, None]
                if toe_matrices is not None:
                    toe_matrices[:, column] = motion @ toe_matrices[:, column]
                if limb.target is None:  # its own animated tip and turn, carried with the body
                    target[:, column] = np.einsum("fij,fj->fi", turn, target[:, column]) + move
                    if end_rotation is not None:
                        end_rotation[:, column] = turn @ end_rotation[:, column]
            if limb.name in feet_at:
                n, foot = feet_at[limb.name], plan.feet[feet_at[limb.name]]
                goal = to_armature @ feet[:, n]
                target[:, column] = goal[:, :3, 3] + goal[:, :3, 1] * foot.foot_length
                end_rotation[:, column] = goal[:, :3, :3]
                if toe_goal is not None:
                    toe_goal[:, column] = to_armature[:, :3, :3] @ toes[:, n]
    return _carried(plan, pose, motion, analysis.pitches)


def _carried(plan: PlantPlan, pose: Pose, motion: np.ndarray, pitches: bool) -> list[Carried]:
    """The pelvis' channels at each frame that move it (and all it carries) by ``motion`` (F, 4, 4; armature
    space); its rotation only when the body ``pitches`` somewhere in the take."""
    index = plan.pelvis
    head = pose.matrices[:, index, :3, 3]
    location = _pelvis_location(plan, pose, np.einsum("fij,fj->fi", motion[:, :3, :3], head) + motion[:, :3, 3] - head)
    if not pitches:
        return [Carried(index, at, None) for at in location]
    frame, local = _pelvis_frame(plan, pose)  # the turn, seen from that frame
    turned = np.linalg.solve(frame, motion[:, :3, :3] @ frame) @ local
    rotation = rotation_modes.matrix_to_quat(rotation_modes.nearest_rotation(turned))
    return [Carried(index, at, turn) for at, turn in zip(location, rotation)]


def _between(analysis: Analysis, frames):
    """A reader of per-frame arrays at ``frames``, which may fall between two analysed frames (motion
    blur, subframe playback): linearly between them (matrices then go to their nearest rotations in
    the solve)."""
    offset = np.clip(np.asarray(frames, dtype=np.float64) - analysis.frames.start, 0.0, len(analysis.frames) - 1.0)
    below = np.floor(offset).astype(int)
    above = np.minimum(below + 1, len(analysis.frames) - 1)
    t = offset - below

    def read(values):
        weight = t.reshape(-1, *[1] * (values.ndim - 1))
        return np.where(weight == 0.0, values[below], (1.0 - weight) * values[below] + weight * values[above])

    return read


def _pelvis_location(plan: PlantPlan, pose: Pose, shift: np.ndarray) -> np.ndarray:
    """(F, 3) the pelvis' location channel that moves it by ``shift`` (F, 3; armature space), ``pose`` over F
    frames."""
    location = pose.location[:, plan.pelvis]
    if not plan.local_location:
        return location + shift
    return location + np.linalg.solve(_pelvis_frame(plan, pose)[0], shift[..., None])[..., 0]  # applied in that frame


def _pelvis_frame(plan: PlantPlan, pose: Pose) -> tuple[np.ndarray, np.ndarray]:
    """(F, 3, 3) the frame the pelvis' own rotation and location sit in (its armature-space matrix without
    its own scale and rotation; see solvers.local_rotation for the model), and that rotation."""
    index = plan.pelvis
    rotation = rotation_modes.channels_to_quat(
        plan.pelvis_mode, pose.quaternion[:, index], pose.euler[:, index], pose.axis_angle[:, index]
    )
    local = rotation_modes.quat_to_matrix(rotation)
    return pose.matrices[:, index, :3, :3] / pose.scale[:, index, None, :] @ np.swapaxes(local, 1, 2), local
