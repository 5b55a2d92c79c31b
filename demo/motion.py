# SPDX-License-Identifier: GPL-3.0-or-later
"""Procedural gaits keyed onto Rigify's human metarig, on flat ground: the motions foot planting is tried on.

A gait is authored in the rig's armature space, travelling along -Y (the way the metarig faces)
with the soles on a flat floor. The feet come first: footprints, a roll from the heel onto the
flat foot and from the flat foot onto the ball, and swing arcs between footprints. The pelvis
(``spine``, the root of the metarig) then advances, bobs, sways and turns, at the greatest height
that keeps every foot target in reach, and the legs are posed with an exact two-bone solution.
Every frame is keyed, so a planted foot is planted to float precision: the :class:`Motion` a
function returns is ground truth, not an estimate.

The solver of the extension is deliberately not used: these are the inputs it is tested on.
"""

import math
from dataclasses import dataclass, replace

import bpy
import numpy as np
from mathutils import Matrix

SIDES = ("L", "R")
ROOT = "spine"
#: Longest hip-to-ankle distance, as a fraction of the leg's length: knees never lock straight.
REACH = 0.985
FORWARD = np.array((0.0, -1.0, 0.0))
#: Bones the heel, ball and toe-tip sole points ride on (the toe stays flat while the heel rolls up).
SOLE_BONES = ("foot", "toe", "toe")
_EPS = 1e-9
_LINEAR = bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items["LINEAR"].value


@dataclass(frozen=True)
class Gait:
    """How a gait moves: times as fractions of its cycle, lengths in metres, angles in radians."""

    cycle_frames: int  #: frames per cycle (two steps)
    stride: float  #: distance travelled per cycle
    duty: float  #: part of the cycle a foot touches the ground
    heel_strike: float  #: part of the cycle rolling from the heel onto the flat foot
    heel_off: float  #: part of the cycle rolling from the flat foot onto the ball
    strike_pitch: float  #: toes up when the heel lands
    off_pitch: float  #: heel up when the toes leave
    lift: float  #: height the ankle rises above its straight path in mid-swing
    bob: float  #: pelvis rise at mid-stance (negative: it dips, as in a run)
    sway: float  #: pelvis shift over the standing foot
    yaw: float  #: pelvis turn with the swinging leg
    arm_drop: float  #: arms lowered from the metarig's rest pose towards the body
    arm_swing: float  #: arms swing against the legs
    elbow: float  #: elbow bend


WALK = Gait(
    cycle_frames=30,
    stride=1.3,
    duty=0.62,
    heel_strike=0.06,
    heel_off=0.14,
    strike_pitch=math.radians(15),
    off_pitch=math.radians(35),
    lift=0.1,
    bob=0.02,
    sway=0.02,
    yaw=math.radians(4),
    arm_drop=math.radians(60),
    arm_swing=math.radians(15),
    elbow=math.radians(15),
)
RUN = Gait(
    cycle_frames=18,
    stride=2.0,
    duty=0.3,
    heel_strike=0.0,
    heel_off=0.1,
    strike_pitch=0.0,
    off_pitch=math.radians(30),
    lift=0.2,
    bob=-0.03,
    sway=0.01,
    yaw=math.radians(6),
    arm_drop=math.radians(60),
    arm_swing=math.radians(30),
    elbow=math.radians(80),
)


@dataclass(frozen=True)
class Motion:
    """What a gait function keyed: the ground truth planting is compared against.

    Frame ranges are inclusive ``(first, last)`` pairs per side (``"L"``, ``"R"``). In ``stance``
    frames the foot is flat and fixed: heel, ball and toe tip on the floor (see :func:`sole_points`).
    ``contact`` frames also include the rolls from the heel and onto the ball, when part of the sole
    touches the floor. ``floor`` is a world height.
    """

    name: str
    frame_start: int
    frame_end: int
    floor: float
    stance: dict[str, tuple[tuple[int, int], ...]]
    contact: dict[str, tuple[tuple[int, int], ...]]


def key_walk(
    rig: bpy.types.Object,
    start: int = 1,
    cycles: int = 4,
    stride: float = WALK.stride,
    cycle_frames: int = WALK.cycle_frames,
    floor: float = 0.0,
) -> Motion:
    """Key a walk along -Y onto the human metarig ``rig``: ``cycles`` cycles of ``stride`` metres
    (two steps) in ``cycle_frames`` frames each, from frame ``start``, on a floor at world height ``floor``."""
    return key_gait(rig, replace(WALK, stride=stride, cycle_frames=cycle_frames), "walk", start, cycles, floor)


def key_run(
    rig: bpy.types.Object,
    start: int = 1,
    cycles: int = 3,
    stride: float = RUN.stride,
    cycle_frames: int = RUN.cycle_frames,
    floor: float = 0.0,
) -> Motion:
    """Key a run along -Y, with a flight phase in every step; arguments as for :func:`key_walk`."""
    return key_gait(rig, replace(RUN, stride=stride, cycle_frames=cycle_frames), "run", start, cycles, floor)


def key_gait(rig: bpy.types.Object, gait: Gait, name: str, start: int, cycles: int, floor: float) -> Motion:
    """Key ``gait`` onto the human metarig ``rig`` as a new action, replacing the one it plays.

    The left foot is at mid-stance, where it stands at rest, on frame ``start``. Lengths are in the
    armature's space, so they scale with the rig; ``floor`` is a world height. Raises
    ``ValueError`` if the rig does not stand upright or the stride is beyond the legs' reach.
    """
    frames = np.arange(start, start + cycles * gait.cycle_frames + 1)
    times = (frames - start).astype(float)
    rest = {bone.name: np.array(bone.matrix_local, dtype=float) for bone in rig.data.bones}
    legs = {side: _Leg.at_rest(rig, side) for side in SIDES}
    floor_height = _armature_height(rig, floor)
    speed = gait.stride / gait.cycle_frames
    contact_starts = {"L": -gait.duty * gait.cycle_frames / 2, "R": (0.5 - gait.duty / 2) * gait.cycle_frames}
    feet = {s: [_foot_at(gait, legs[s], t, contact_starts[s], speed, floor_height) for t in times] for s in SIDES}
    pelvis = [_pelvis_at(gait, t, speed) for t in times]
    rise = _pelvis_rise(rest[ROOT], legs, pelvis, feet)
    channels: dict[tuple[str, str], list] = {}
    for i, (offset, yaw) in enumerate(pelvis):
        move = _pelvis_move(rest[ROOT], offset + (0.0, 0.0, rise), yaw)
        for key, value in _frame_channels(gait, rest, legs, move, yaw, {s: feet[s][i] for s in SIDES}, times[i]):
            channels.setdefault(key, []).append(value)
    _write_action(rig, f"{rig.name}_{name}", frames, channels)
    kinds = {side: np.array([foot.kind for foot in feet[side]]) for side in SIDES}
    return Motion(
        name=name,
        frame_start=int(frames[0]),
        frame_end=int(frames[-1]),
        floor=floor,
        stance={side: _ranges(frames, kinds[side] == "flat") for side in SIDES},
        contact={side: _ranges(frames, kinds[side] != "swing") for side in SIDES},
    )


def sole_points(rig: bpy.types.Object, side: str) -> np.ndarray:
    """World positions (3 × 3) of the heel, ball and toe tip on the sole of foot ``side``, as evaluated now.

    At rest the three lie on the metarig's ground (the height of ``heel.02``); they ride on the
    foot (heel) and the toe (ball, tip) bones.
    """
    evaluated = rig.evaluated_get(bpy.context.evaluated_depsgraph_get())
    world = np.array(evaluated.matrix_world)
    points = []
    for point, part in zip(_rest_sole(rig, side), SOLE_BONES):
        bone = f"{part}.{side}"
        local = np.linalg.solve(np.array(rig.data.bones[bone].matrix_local), np.append(point, 1.0))
        points.append((world @ np.array(evaluated.pose.bones[bone].matrix) @ local)[:3])
    return np.array(points)


@dataclass(frozen=True)
class _Leg:
    """One leg of the metarig at rest, in armature space."""

    side: str
    hip: np.ndarray  #: thigh head
    knee: np.ndarray
    ankle: np.ndarray  #: foot head
    heel: np.ndarray  #: sole point under the heel: the foot rolls on it after landing
    ball: np.ndarray  #: toe joint (foot tail): the foot rolls on it before lifting
    sole: float  #: height of the sole

    @classmethod
    def at_rest(cls, rig: bpy.types.Object, side: str) -> "_Leg":
        bones = rig.data.bones
        heel, _, _ = _rest_sole(rig, side)
        return cls(
            side=side,
            hip=np.array(bones[f"thigh.{side}"].head_local),
            knee=np.array(bones[f"shin.{side}"].head_local),
            ankle=np.array(bones[f"foot.{side}"].head_local),
            heel=heel,
            ball=np.array(bones[f"foot.{side}"].tail_local),
            sole=float(heel[2]),
        )

    @property
    def lengths(self) -> tuple[float, float]:
        return float(np.linalg.norm(self.knee - self.hip)), float(np.linalg.norm(self.ankle - self.knee))


@dataclass(frozen=True)
class _Foot:
    """A foot at one instant: which phase it is in, where its ankle is, and how its foot and toe are pitched."""

    kind: str  #: "heel", "flat", "ball" (on the ground) or "swing"
    ankle: np.ndarray
    pitch: float  #: about +X: positive lifts the heel
    toe_pitch: float


def _rest_sole(rig: bpy.types.Object, side: str) -> np.ndarray:
    """Heel, ball and toe-tip points on the rest sole (the height of ``heel.02``), armature space."""
    bones = rig.data.bones
    heel = bones[f"heel.02.{side}"]
    sole = min(heel.head_local.z, heel.tail_local.z)
    ball, tip = bones[f"foot.{side}"].tail_local, bones[f"toe.{side}"].tail_local
    return np.array([(p.x, p.y, sole) for p in ((heel.head_local + heel.tail_local) / 2, ball, tip)])


def _armature_height(rig: bpy.types.Object, height: float) -> float:
    """A world height in the armature space of ``rig``, which may be moved, turned about Z and scaled uniformly."""
    bpy.context.view_layer.update()  # matrix_world lags behind a location or rotation just set
    matrix = np.array(rig.matrix_world)
    axes = matrix[:3, :3]
    scales = np.linalg.norm(axes, axis=0)
    if not (np.allclose(axes[2, :2], 0.0, atol=1e-6) and np.allclose(scales, scales[2], rtol=1e-6)):
        raise ValueError(f"{rig.name} must stand upright (turned about Z only, scaled uniformly) to walk on a floor")
    return (height - matrix[2, 3]) / scales[2]


def _smooth(s: float) -> float:
    return s * s * (3.0 - 2.0 * s)


def _rx(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array(((1.0, 0.0, 0.0), (0.0, c, -s), (0.0, s, c)))


def _ry(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array(((c, 0.0, s), (0.0, 1.0, 0.0), (-s, 0.0, c)))


def _rz(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array(((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0)))


def _rolled(leg: _Leg, pivot: np.ndarray, shift: np.ndarray, pitch: float) -> np.ndarray:
    """The ankle of the rest foot moved by ``shift`` and pitched about ``pivot`` (a rest point)."""
    return pivot + shift + _rx(pitch) @ (leg.ankle - pivot)


def _foot_at(gait: Gait, leg: _Leg, time: float, contact_start: float, speed: float, floor: float) -> _Foot:
    """Foot ``leg`` at ``time`` (frames) when its contacts begin at ``contact_start`` plus whole cycles.

    Each footprint is the rest foot on the floor, under where the pelvis is at mid-contact.
    """

    def footprint(cycle: int) -> np.ndarray:
        mid_contact = contact_start + (cycle + gait.duty / 2) * gait.cycle_frames
        return np.array((0.0, -speed * mid_contact, floor - leg.sole))

    cycles = (time - contact_start) / gait.cycle_frames
    cycle = math.floor(cycles + _EPS)
    phase = max(cycles - cycle, 0.0)
    flat_from, flat_to = gait.heel_strike, gait.duty - gait.heel_off
    if phase < flat_from - _EPS:
        pitch = -gait.strike_pitch * (1.0 - _smooth(phase / flat_from))
        return _Foot("heel", _rolled(leg, leg.heel, footprint(cycle), pitch), pitch, pitch)
    if phase <= flat_to + _EPS:
        return _Foot("flat", leg.ankle + footprint(cycle), 0.0, 0.0)
    if phase <= gait.duty + _EPS:
        pitch = gait.off_pitch * _smooth(min((phase - flat_to) / gait.heel_off, 1.0))
        return _Foot("ball", _rolled(leg, leg.ball, footprint(cycle), pitch), pitch, 0.0)
    s = (phase - gait.duty) / (1.0 - gait.duty)
    lift_off = _rolled(leg, leg.ball, footprint(cycle), gait.off_pitch)
    landing = _rolled(leg, leg.heel, footprint(cycle + 1), -gait.strike_pitch)
    ankle = lift_off + (landing - lift_off) * _smooth(s)
    ankle[2] = lift_off[2] + (landing[2] - lift_off[2]) * s + gait.lift * math.sin(math.pi * s)
    pitch = gait.off_pitch + (-gait.strike_pitch - gait.off_pitch) * _smooth(s)
    toe_bend = gait.off_pitch * (1.0 - _smooth(min(2.0 * s, 1.0)))  # the toe lifts off flat, then follows the foot
    return _Foot("swing", ankle, pitch, pitch - toe_bend)


def _pelvis_at(gait: Gait, time: float, speed: float) -> tuple[np.ndarray, float]:
    """Pelvis offset from rest (before it is lowered into reach) and turn about Z, at ``time`` (frames)."""
    angle = 2.0 * math.pi * time / gait.cycle_frames  # zero at the left foot's mid-stance
    offset = np.array((gait.sway * math.cos(angle), -speed * time, gait.bob * math.cos(2.0 * angle)))
    return offset, gait.yaw * math.sin(angle)


def _pelvis_move(rest_root: np.ndarray, offset: np.ndarray, yaw: float) -> np.ndarray:
    """Armature-space transform carrying the rest pelvis to its pose: turned about its head, then moved."""
    head = rest_root[:3, 3]
    move = np.eye(4)
    move[:3, :3] = _rz(yaw)
    move[:3, 3] = head + offset - _rz(yaw) @ head
    return move


def _pelvis_rise(
    rest_root: np.ndarray, legs: dict[str, _Leg], pelvis: list[tuple[np.ndarray, float]], feet: dict[str, list[_Foot]]
) -> float:
    """The greatest pelvis height change that keeps every ankle target within reach on every frame."""
    rises = []
    for i, (offset, yaw) in enumerate(pelvis):
        move = _pelvis_move(rest_root, offset, yaw)
        for side, leg in legs.items():
            hip = (move @ np.append(leg.hip, 1.0))[:3]
            ankle = feet[side][i].ankle
            reach = REACH * sum(leg.lengths)
            across = float(np.linalg.norm((ankle - hip)[:2]))
            if across >= reach:
                raise ValueError(f"the stride puts foot.{side} {across:.2f} m from the hip, beyond the leg's reach")
            rises.append(ankle[2] + math.sqrt(reach**2 - across**2) - hip[2])
    return min(rises)


def _two_bone(
    hip: np.ndarray, ankle: np.ndarray, lengths: tuple[float, float], pole: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thigh and shin directions reaching from ``hip`` to ``ankle`` with the knee towards ``pole``, and
    the knee's hinge axis."""
    upper, lower = lengths
    reach = ankle - hip
    distance = float(np.linalg.norm(reach))
    along = reach / distance
    bend = pole - (pole @ along) * along
    bend /= np.linalg.norm(bend)
    cos_hip = np.clip((upper**2 + distance**2 - lower**2) / (2.0 * upper * distance), -1.0, 1.0)
    thigh = cos_hip * along + math.sqrt(1.0 - cos_hip**2) * bend
    shin = ankle - (hip + upper * thigh)
    return thigh, shin / np.linalg.norm(shin), np.cross(bend, along)


def _frame(hinge: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Orthonormal axes with Y along ``direction`` and X along ``hinge`` (made perpendicular to it)."""
    y = direction / np.linalg.norm(direction)
    x = hinge - (hinge @ y) * y
    x /= np.linalg.norm(x)
    return np.column_stack((x, y, np.cross(x, y)))


def _leg_pose(
    rest: dict[str, np.ndarray], leg: _Leg, move: np.ndarray, yaw: float, foot: _Foot
) -> dict[str, np.ndarray]:
    """Armature-space rotations (3 × 3) of the thigh, shin, foot and toe of ``leg`` placing its foot as ``foot``."""
    side = leg.side
    hip = (move @ np.append(leg.hip, 1.0))[:3]
    thigh, shin, hinge = _two_bone(hip, foot.ankle, leg.lengths, _rz(yaw) @ FORWARD)
    _, _, rest_hinge = _two_bone(leg.hip, leg.ankle, leg.lengths, FORWARD)
    thigh_turn = _frame(hinge, thigh) @ _frame(rest_hinge, leg.knee - leg.hip).T
    shin_turn = _frame(hinge, shin) @ _frame(rest_hinge, leg.ankle - leg.knee).T
    return {
        f"thigh.{side}": thigh_turn @ rest[f"thigh.{side}"][:3, :3],
        f"shin.{side}": shin_turn @ rest[f"shin.{side}"][:3, :3],
        f"foot.{side}": _rx(foot.pitch) @ rest[f"foot.{side}"][:3, :3],
        f"toe.{side}": _rx(foot.toe_pitch) @ rest[f"toe.{side}"][:3, :3],
    }


def _frame_channels(
    gait: Gait,
    rest: dict[str, np.ndarray],
    legs: dict[str, _Leg],
    move: np.ndarray,
    yaw: float,
    feet: dict[str, _Foot],
    time: float,
):
    """``((bone, "location" | "rotation"), value)`` pairs of one frame: pelvis location and rotation
    matrix, leg and arm rotation matrices, all in each bone's own (channel) space."""
    root_basis = np.linalg.inv(rest[ROOT]) @ move @ rest[ROOT]
    yield (ROOT, "location"), root_basis[:3, 3]
    yield (ROOT, "rotation"), root_basis[:3, :3]
    pose = {ROOT: move[:3, :3] @ rest[ROOT][:3, :3]}
    for side in SIDES:
        pose.update(_leg_pose(rest, legs[side], move, yaw, feet[side]))
        chain = (ROOT, f"thigh.{side}", f"shin.{side}", f"foot.{side}", f"toe.{side}")
        for parent, bone in zip(chain, chain[1:]):
            # rotation channel = rotation relative to where the parent's pose alone would put the bone
            yield (bone, "rotation"), rest[bone][:3, :3].T @ rest[parent][:3, :3] @ pose[parent].T @ pose[bone]
    angle = 2.0 * math.pi * time / gait.cycle_frames
    for side, sign in zip(SIDES, (1.0, -1.0)):
        # arm swing and elbow bend in the torso's axes: conjugated into each bone's rest axes
        arm = _rx(-sign * gait.arm_swing * math.sin(angle)) @ _ry(sign * gait.arm_drop)
        upper, fore = rest[f"upper_arm.{side}"][:3, :3], rest[f"forearm.{side}"][:3, :3]
        yield (f"upper_arm.{side}", "rotation"), upper.T @ arm @ upper
        yield (f"forearm.{side}", "rotation"), fore.T @ arm.T @ _rx(-gait.elbow) @ arm @ fore


def _rotation_channel(pose_bone: bpy.types.PoseBone, matrices: list[np.ndarray]) -> tuple[str, np.ndarray]:
    """Data path and per-frame values (frames × components) of rotations in the bone's own rotation mode,
    continuous from frame to frame."""
    mode = pose_bone.rotation_mode
    quaternions = []
    for matrix in matrices:
        q = Matrix(matrix).to_quaternion()
        if quaternions and q.dot(quaternions[-1]) < 0.0:
            q.negate()
        quaternions.append(q)
    if mode == "QUATERNION":
        return "rotation_quaternion", np.array(quaternions)
    if mode == "AXIS_ANGLE":
        return "rotation_axis_angle", np.array([(a, *axis) for axis, a in (q.to_axis_angle() for q in quaternions)])
    eulers = [quaternions[0].to_euler(mode)]
    for q in quaternions[1:]:
        eulers.append(q.to_euler(mode, eulers[-1]))
    return "rotation_euler", np.array(eulers)


def _new_fcurves(rig: bpy.types.Object, name: str):
    """A new action named ``name`` played by ``rig``, and a function creating F-curves in it (slot-aware)."""
    data = rig.animation_data or rig.animation_data_create()
    action = bpy.data.actions.new(name)
    data.action = action
    if bpy.app.version < (4, 4, 0):
        return lambda path, index, group: action.fcurves.new(path, index=index, action_group=group)
    data.action_slot = action.slots.new(id_type="OBJECT", name=rig.name)
    bag = action.layers.new("Layer").strips.new(type="KEYFRAME").channelbag(data.action_slot, ensure=True)

    def new_fcurve(path, index, group):
        curve = bag.fcurves.new(path, index=index)  # 4.4 and 4.5 take no group here
        curve.group = bag.groups.get(group) or bag.groups.new(group)
        return curve

    return new_fcurve


def _write_action(
    rig: bpy.types.Object, name: str, frames: np.ndarray, channels: dict[tuple[str, str], list[np.ndarray]]
) -> None:
    """Key every channel on every frame, linearly interpolated, in a new action for ``rig``."""
    new_fcurve = _new_fcurves(rig, name)
    for (bone, kind), values in channels.items():
        if kind == "location":
            path, table = "location", np.array(values)
        else:
            path, table = _rotation_channel(rig.pose.bones[bone], values)
        for index, column in enumerate(table.T):
            fcurve = new_fcurve(f'pose.bones["{bone}"].{path}', index, bone)
            points = fcurve.keyframe_points
            points.add(len(frames))
            points.foreach_set("co", np.column_stack((frames, column)).astype(np.float32).ravel())
            points.foreach_set("interpolation", np.full(len(frames), _LINEAR, np.int32))
            fcurve.update()


def _ranges(frames: np.ndarray, mask: np.ndarray) -> tuple[tuple[int, int], ...]:
    """Inclusive ``(first, last)`` runs of consecutive ``frames`` where ``mask`` holds."""
    edges = np.diff(np.concatenate(([0], mask.astype(int), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return tuple((int(frames[a]), int(frames[b - 1])) for a, b in zip(starts, ends))
