# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting: feet animated on a flat floor land on the real ground.

For every planted leg (a three-bone limb whose end bone is the foot) and frame:

* the sole (heel, ball, toe tip, taken from the rest pose) keeps its animated height above the
  authored floor as its height above the surface under it, and tips to follow the surface
  normal while near the floor, within a maximum angle; the foot is then raised or lowered as a
  whole so no sole point digs in (the point that would becomes the pivot);
* while the animation has the foot standing (low and slow), it is held where it touched down
  and released smoothly at lift-off (bake only: it needs the whole timeline);
* the pelvis follows the ground under the character (averaged over a disc, and over time in a
  bake), then drops further only by what the lowest foot needs to be within reach.

The legs' IK absorbs the rest. The maths lives in :mod:`..solvers.planting`; this module reads
the rig and the ground and turns results into goals for :mod:`.solve`.
"""

from dataclasses import dataclass

import bpy
import numpy as np

from ..solvers import planting, rotation_modes
from .errors import LimbError
from .ground import Ground
from .pose import local_quaternions

#: Fraction of a leg's full reach the pelvis drop aims for, so knees never lock straight.
REACH_MARGIN = 0.995
#: Heel lift (m, above the sole's lowest point) over which a foot counts as rolling onto its toes.
ROLLING = 0.04
#: Weight of the ground under the pelvis against the feet's footing (a foot down weighs 1).
FLIGHT = 0.05
#: Height scale (m) over which a sole point counts less and less as touching the ground.
TOUCH = 0.002
#: Directions around the pelvis where the ground is sampled when no foot stands.
_DISC = np.array([[0.0, 0.0]] + [[np.cos(a), np.sin(a)] for a in np.linspace(0.0, 2 * np.pi, 8, endpoint=False)])


@dataclass(frozen=True)
class Foot:
    """One planted leg: where its sole is, in its bones' own frames."""

    limb: str
    upper: int  #: pose bone indices
    lower: int
    foot: int
    sole_bones: tuple[int, ...]  #: bone each sole point rides on (heel: the foot; ball and tip: the toe)
    sole_points: np.ndarray  #: (P, 3) sole points in those bones' local frames
    sole_up: np.ndarray  #: the sole's normal in the foot bone's frame
    reach: float  #: upper + lower segment length (rest)
    foot_length: float
    toe: int | None  #: pose bone index of the toe kept flat while the foot rolls


@dataclass(frozen=True)
class PlantPlan:
    obj: bpy.types.Object
    feet: list[Foot]
    pelvis: int
    pelvis_mode: str  #: the pelvis bone's rotation mode
    under_pelvis: frozenset[str]  #: limbs whose chains move with the pelvis
    local_location: bool  #: the pelvis' location channel is in its own rest frame (else the armature's)


def plant_plan(obj: bpy.types.Object, limbs, chains) -> PlantPlan | None:
    """The planting set-up of the planned limbs; None when no limb is planted.

    Raises :class:`LimbError` for a planted limb without a foot, a missing ground or pelvis.
    """
    planted = [(limb, chain) for limb, chain in zip(limbs, chains) if limb.plant]
    if not planted:
        return None
    settings = obj.limb_ik
    if settings.ground is None:
        raise LimbError(f"Armature '{obj.name}' has planted limbs but no ground collection to plant them on.")
    bones = obj.data.bones
    feet = []
    for limb, chain in planted:
        if chain.size != 3:
            raise LimbError(f"Limb '{limb.name}' is planted but has no end bone; planting needs thigh, shin and foot.")
        if limb.toe_bone and limb.toe_bone not in bones:
            raise LimbError(f"Limb '{limb.name}': toe bone '{limb.toe_bone}' does not exist in '{obj.name}'.")
        feet.append(_foot(obj, limb, chain))
    pelvis = _pelvis(obj, [chain for _, chain in planted])
    pelvis_bone = bones[pelvis]
    if any(obj.pose.bones[pelvis].lock_location):
        raise LimbError(f"Pelvis bone '{pelvis}' has locked location; unlock it so planting can lower the hips.")
    under = frozenset(
        limb.name for limb, chain in zip(limbs, chains) if pelvis_bone in bones[chain.bones[0]].parent_recursive
    )
    for limb, _ in planted:
        if limb.name not in under:
            raise LimbError(f"Limb '{limb.name}' does not hang below the pelvis bone '{pelvis}'.")
    pose_bone = obj.pose.bones[pelvis]
    return PlantPlan(
        obj, feet, obj.pose.bones.find(pelvis), pose_bone.rotation_mode, under, pelvis_bone.use_local_location
    )


def _pelvis(obj, chains) -> str:
    """The rig's pelvis bone: as set, or the nearest common ancestor of the planted legs."""
    name = obj.limb_ik.pelvis_bone
    bones = obj.data.bones
    if name:
        if name not in bones:
            raise LimbError(f"Pelvis bone '{name}' does not exist in armature '{obj.name}'.")
        return name
    lines = [list(bones[c.bones[0]].parent_recursive) for c in chains]
    common = [b for b in lines[0] if all(b in line for line in lines[1:])]
    if not common:
        raise LimbError(f"The planted legs of '{obj.name}' share no parent bone; set the pelvis bone.")
    return common[0].name


def _foot(obj, limb, chain) -> Foot:
    """Sole points from the rest pose: the lowest points of the foot, its toe and anything below it,
    projected on the floor under them; heel the rearmost, ball the foot's tail, tip the foremost.

    The ball and tip ride on the toe bone when there is one: a foot rolls onto its ball by pivoting
    at the toe joint, which sits above the sole, while the toe stays flat on the ground."""
    bones = obj.data.bones
    foot = bones[chain.bones[2]]
    toe = bones[limb.toe_bone] if limb.toe_bone else None
    up = _armature_up(obj)
    rest = np.array(foot.matrix_local, dtype=np.float64)
    head, tail = np.array(foot.head_local), np.array(foot.tail_local)
    others = [b for b in foot.children_recursive]
    candidates = np.array([head, tail] + [np.array(p) for b in others for p in (b.head_local, b.tail_local)])
    sole_height = (candidates @ up).min()
    forward = tail - head - ((tail - head) @ up) * up
    forward = forward / np.linalg.norm(forward) if np.linalg.norm(forward) > 1e-9 else np.cross(up, rest[:3, 0])

    def on_floor(p):
        return p - (p @ up - sole_height) * up

    heel = on_floor(candidates[np.argmin(candidates @ forward)])
    tip = on_floor(candidates[np.argmax(candidates @ forward)])
    front = toe if toe is not None else foot
    owners = (foot, front, front)
    points = [_to_local(b, p) for b, p in zip(owners, (heel, on_floor(tail), tip))]
    index = obj.pose.bones.find
    heads = [np.array(bones[n].head_local) for n in chain.bones] + [tail]
    reach = float(np.linalg.norm(heads[1] - heads[0]) + np.linalg.norm(heads[2] - heads[1]))
    return Foot(
        limb.name,
        index(chain.bones[0]),
        index(chain.bones[1]),
        index(foot.name),
        tuple(index(b.name) for b in owners),
        np.array(points),
        rest[:3, :3].T @ up,
        reach,
        foot.length,
        index(toe.name) if toe is not None else None,
    )


def _to_local(bone: bpy.types.Bone, point: np.ndarray) -> np.ndarray:
    inverse = np.linalg.inv(np.array(bone.matrix_local, dtype=np.float64))
    return inverse[:3, :3] @ point + inverse[:3, 3]


def _armature_up(obj) -> np.ndarray:
    """World up (+Z) in the armature's own axes: the floor is level in the world, not in the rig."""
    linear = np.array(obj.matrix_world, dtype=np.float64)[:3, :3]
    up = np.linalg.solve(linear, [0.0, 0.0, 1.0])
    return up / np.linalg.norm(up)


@dataclass
class FrameInputs:
    """What planting reads from one frame's animated pose, in world space."""

    world: np.ndarray  #: (4, 4) armature object matrix
    feet: np.ndarray  #: (n, 4, 4) foot bone matrices
    toes: np.ndarray  #: (n, 4, 4) toe bone matrices (the foot's for a foot without a toe)
    soles: np.ndarray  #: (n, P, 3) sole points
    hips: np.ndarray  #: (n, 3) heads of the upper bones
    pelvis: np.ndarray  #: (4, 4)


def frame_inputs(plan: PlantPlan, pose) -> FrameInputs:
    world = pose.world
    matrices = world @ pose.matrices  # every bone in world space
    feet = matrices[[f.foot for f in plan.feet]]
    toes = matrices[[f.foot if f.toe is None else f.toe for f in plan.feet]]
    soles = np.array(
        [[matrices[b][:3, :3] @ p + matrices[b][:3, 3] for b, p in zip(f.sole_bones, f.sole_points)] for f in plan.feet]
    )
    hips = matrices[[f.upper for f in plan.feet]][:, :3, 3]
    return FrameInputs(world, feet, toes, soles, hips, matrices[plan.pelvis])


@dataclass
class PlantResult:
    feet: np.ndarray  #: (F, n, 4, 4) world matrices the foot bones must take
    toes: np.ndarray  #: (F, n, 3, 3) world rotations the toes must take
    pelvis_offset: np.ndarray  #: (F, 3) world translation added to the pelvis
    contacts: np.ndarray  #: (F, n) bool: the animation has the foot standing


def solve_planting(
    plan: PlantPlan, inputs: list[FrameInputs], ground: Ground, fps: float, timeline: bool
) -> PlantResult:
    """Foot goals and pelvis offsets for the frames of ``inputs``.

    With ``timeline`` (a bake), contacts, foot lock, swing paths and the pelvis' smoothing over
    time use all frames; without it (live solving) each frame stands alone.
    """
    s = plan.obj.limb_ik
    frames, count = len(inputs), len(plan.feet)
    soles = np.stack([i.soles for i in inputs])  # (F, n, P, 3)
    feet = np.stack([i.feet for i in inputs])  # (F, n, 4, 4)
    clearance = soles[..., 2] - s.floor_height  # (F, n, P)
    pelvis = np.stack([i.pelvis[:3, 3] for i in inputs])
    toes = np.stack([i.toes[:, :3, :3] for i in inputs])  # (F, n, 3, 3)
    contacts = np.zeros((frames, count), bool)
    lock = np.zeros((frames, count, 2))
    if timeline:
        for n in range(count):
            contacts[:, n], lock[:, n] = _contacts_and_lock(soles[:, n], clearance[:, n], fps, s)

    def place_feet(carrier):  # every foot on the ground; swinging ones ride on ``carrier``
        goals_world, placed = np.empty_like(feet), np.empty_like(soles)
        toes_world = np.empty_like(toes)
        for n in range(count):
            goals_world[:, n], placed[:, n], turn = _foot_goals(
                feet[:, n], soles[:, n], clearance[:, n], lock[:, n], contacts[:, n] if timeline else None,
                carrier, ground, s,
            )  # fmt: skip
            toes_world[:, n] = turn @ toes[:, n]
        level, standing = _support(plan, placed, pelvis, ground, smooth=timeline)
        return goals_world, toes_world, level - s.floor_height, standing

    under_pelvis = ground_level(plan, pelvis, ground) - s.floor_height
    if timeline:
        under_pelvis = planting.smooth(under_pelvis, s.pelvis_smoothing)
    goals_world, toes_world, level, standing = place_feet(under_pelvis)
    if timeline:  # swinging feet ride on the level the body follows, known once the feet are placed
        goals_world, toes_world, level, standing = place_feet(level)

    hips = np.stack([i.hips for i in inputs])  # (F, n, 3)
    animated = np.linalg.norm(hips - feet[:, :, :3, 3], axis=2)  # how extended each leg is animated
    reach = np.array([f.reach for f in plan.feet])
    allowed = np.minimum(np.maximum(animated, REACH_MARGIN * reach), reach)
    raised = hips + np.stack([np.zeros_like(level), np.zeros_like(level), level], axis=1)[:, None, :]
    for n, foot in enumerate(plan.feet):
        # A foot already rolling onto its toes in the animation may roll further, so the leg keeps
        # its animated extension and the knee its animated bend.
        heel_up = planting.smoothstep((clearance[:, n, 0] - clearance[:, n].min(axis=1)) / ROLLING)
        angle = _roll_for_reach(
            goals_world[:, n],
            foot.foot_length,
            raised[:, n],
            animated[:, n],
            s.max_heel_roll * heel_up * standing[:, n],
        )
        if timeline:  # eased over time, but never while the animated foot is flat
            angle = planting.smooth(angle, s.pelvis_smoothing) * heel_up
        goals_world[:, n] = _rolled(goals_world[:, n], foot.foot_length, angle)
    # Only a standing foot must be reached; a swinging one may come up short for a moment.
    needed = (
        np.stack(
            [planting.vertical_drop(raised[:, n], goals_world[:, n, :3, 3], allowed[:, n]) for n in range(count)],
            axis=1,
        )
        * standing
    ).max(axis=1)
    drop = _eased_up(needed, s.pelvis_smoothing) if timeline else needed
    offset = np.zeros((frames, 3))
    offset[:, 2] = level - drop
    return PlantResult(goals_world, toes_world, offset, contacts)


def _eased_up(needed: np.ndarray, sigma: float) -> np.ndarray:
    """At least ``needed`` at every frame, but easing in and out over about ``sigma`` frames
    instead of jumping: a widened maximum, smoothed."""
    if sigma <= 0.0 or not needed.any():
        return needed
    window = max(int(round(2.0 * sigma)), 1)
    widened = np.array([needed[max(0, f - window) : f + window + 1].max() for f in range(len(needed))])
    return np.maximum(planting.smooth(widened, sigma), needed)


def _roll_for_reach(goals, foot_length: float, hips, allowed, limit) -> np.ndarray:
    """(F,) least angle (at most ``limit``) to turn each foot about its toe joint, heel up, that
    brings its ankle within ``allowed`` of the hip (for the largest angle, as near as it gets)."""
    low, high = np.zeros(len(goals)), np.asarray(limit, dtype=np.float64).copy()

    def short(angle):  # how far the ankle stays out of reach at this roll
        return np.linalg.norm(hips - _rolled(goals, foot_length, angle)[:, :3, 3], axis=1) - allowed

    needs = (short(low) > 0.0) & (high > 0.0)
    enough = short(high) <= 0.0  # elsewhere even the limit is not enough: roll that far
    for _ in range(30):  # bisection on [0, limit]
        middle = 0.5 * (low + high)
        out = short(middle) > 0.0
        low, high = np.where(out, middle, low), np.where(out, high, middle)
    return np.where(needs, np.where(enough, high, limit), 0.0)


def _rolled(goals, foot_length: float, angle) -> np.ndarray:
    """Feet (F, 4, 4) turned about their toe joints by ``angle`` (F,), heel up."""
    ankle = goals[:, :3, 3]
    toe_joint = ankle + goals[:, :3, 1] * foot_length
    back = ankle - toe_joint
    axis = np.cross(back, [0.0, 0.0, 1.0])
    norm = np.linalg.norm(axis, axis=1, keepdims=True)
    axis = np.divide(axis, norm, out=np.zeros_like(axis), where=norm > 1e-12)
    turn = rotation_modes.quat_to_matrix(np.column_stack([np.cos(0.5 * angle), axis * np.sin(0.5 * angle)[:, None]]))
    result = goals.copy()
    result[:, :3, :3] = turn @ goals[:, :3, :3]
    result[:, :3, 3] = toe_joint + np.einsum("fij,fj->fi", turn, back)
    return result


def ground_level(plan: PlantPlan, pelvis: np.ndarray, ground: Ground) -> np.ndarray:
    """(F,) height of the ground under the character: the surface averaged over a disc around the
    pelvis a quarter of a leg wide, so one pebble or a step's edge does not jolt the body."""
    s = plan.obj.limb_ik
    radius = 0.25 * max(f.reach for f in plan.feet)
    disc = np.repeat(pelvis, len(_DISC), axis=0)
    disc[:, :2] += np.tile(_DISC * radius, (len(pelvis), 1))
    return ground.cast_down(disc, s.search_distance, s.floor_height)[0].reshape(len(pelvis), -1).mean(axis=1)


def support_level(plan: PlantPlan, soles: np.ndarray, pelvis: np.ndarray, ground: Ground) -> np.ndarray:
    """(F,) height of the ground carrying the character, over frames of a pose as it plays (see
    :func:`_support`): what the pelvis' height is measured against."""
    return _support(plan, soles, pelvis, ground, smooth=True)[0]


def _support(plan: PlantPlan, soles, pelvis, ground: Ground, smooth: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ground carrying the character at each frame, and how much each foot stands on it.

    The surface under each foot's sole, weighing by how closely the foot stands on it (fading out
    as it lifts, over the blend height); with no foot down (a run's flight), the ground under
    the pelvis. Over a timeline it is smoothed by the pelvis smoothing, so the body does not bob
    from footfall to footfall. ``soles`` (F, n, P, 3) and ``pelvis`` (F, 3) in world space.
    """
    s = plan.obj.limb_ik
    frames, count, points = soles.shape[:3]
    heights, _, _ = ground.cast_down(soles.reshape(-1, 3), s.search_distance, s.floor_height)
    heights = heights.reshape(frames, count, points)
    standing = planting.contact_weight((soles[..., 2] - heights).min(axis=2), s.blend_height)
    footing = heights.mean(axis=2)
    level = ((standing * footing).sum(axis=1) + FLIGHT * ground_level(plan, pelvis, ground)) / (
        standing.sum(axis=1) + FLIGHT
    )
    return (planting.smooth(level, s.pelvis_smoothing) if smooth else level), standing


def stance(soles, clearance, fps: float, s):
    """Where one foot stands: (F,) contact mask, (F, P) which sole points touch, (F, P, 2) how far
    each point moved since the previous frame. ``clearance`` is the points' height above whatever
    they stand on (the authored floor, or the surface)."""
    lowest = clearance.min(axis=1)
    step = np.diff(soles[:, :, :2], axis=0, prepend=soles[:1, :, :2])
    touching = clearance <= lowest[:, None] + s.contact_height * 0.5
    speed = np.linalg.norm(np.where(touching[..., None], step, np.inf), axis=2).min(axis=1) * fps
    speed[0] = speed[1] if len(speed) > 1 else 0.0
    return planting.contact_mask(lowest, speed, s.contact_height, s.contact_speed), touching, step


def _contacts_and_lock(soles, clearance, fps, s):
    """Where the animation has one foot standing, and the horizontal hold that keeps it still."""
    contacts, touching, step = stance(soles, clearance, fps, s)
    if not s.use_foot_lock:
        return contacts, np.zeros((len(soles), 2))
    # The points on the ground carry the foot; one already lifting (a heel rolling up) must not,
    # and a foot that has left the floor altogether is not sliding but stepping.
    lowest = clearance.min(axis=1, keepdims=True)
    weight = np.exp(-(clearance - lowest) / TOUCH)
    on_floor = np.exp(-np.maximum(lowest, 0.0) / (0.25 * max(s.contact_height, 1e-6)))
    drift = on_floor * (step * weight[..., None]).sum(axis=1) / weight.sum(axis=1, keepdims=True)
    return contacts, planting.lock_offsets(contacts, drift, s.lock_release)


def _foot_goals(feet, soles, clearance, lock, contacts, level, ground: Ground, s):
    """(F, 4, 4) world matrices for one foot: held, on the surface, tipped to follow it; (F, P, 3)
    where that puts its sole points; and (F, 3, 3) the turn from the floor onto the surface.

    The animation's floor is mapped onto the surface by a rigid turn about a point of the sole.
    With ``contacts`` (a bake), one mapping serves a whole contact, so a foot rolling from heel to
    ball in the animation rolls on the slope without slipping; between contacts the mapping
    blends from one to the next. One frame at a time (live), the mapping is made anew each frame
    about the sole's lowest points, easing in as the foot comes down. Either way the foot is then
    raised wherever a sole point would be under the surface.
    """
    frames, points = soles.shape[:2]
    shift = np.concatenate([lock, np.zeros((frames, 1))], axis=1)
    soles = soles + shift[:, None, :]
    moved = feet.copy()
    moved[:, :3, 3] += shift
    if contacts is not None and contacts.any():
        turn, anchor, lift = _contact_mappings(soles, clearance, contacts, level, ground, s)
    else:
        weight = planting.contact_weight(clearance.min(axis=1), s.blend_height)
        turn, anchor, lift = _frame_mappings(soles, clearance, weight, level, ground, s)
    rotation = rotation_modes.quat_to_matrix(turn)  # (F, 3, 3)

    def mapped(points_world):  # (F, k, 3): about each frame's anchor, then lifted
        turned = np.einsum("fij,fpj->fpi", rotation, points_world - anchor[:, None, :]) + anchor[:, None, :]
        turned[..., 2] += lift[:, None]
        return turned

    placed = mapped(soles)
    surface, _, _ = ground.cast_down(placed.reshape(-1, 3), s.search_distance, s.floor_height)
    under = np.maximum((surface.reshape(frames, points) - placed[..., 2]).max(axis=1), 0.0)
    if contacts is not None:
        under = _clearing_lift(under, contacts, s.pelvis_smoothing)
    result = moved.copy()
    result[:, :3, :3] = rotation @ moved[:, :3, :3]
    result[:, :3, 3] = mapped(moved[:, None, :3, 3])[:, 0]
    result[:, 2, 3] += under
    placed[..., 2] += under[:, None]
    return result, placed, rotation


def _clearing_lift(under: np.ndarray, contacts: np.ndarray, sigma: float) -> np.ndarray:
    """Extra lift that keeps a swinging foot out of the ground (a step's edge, a bump), shaped as a
    foot would move. Within each swing, the lowest path that never dips between two obstacles
    (rising as early and falling as late as they demand); each of its frames then lifts its
    neighbours with a smooth bump about ``2 * sigma`` frames wide, narrower where take-off or
    landing is nearer, so the lift is nothing at both. Standing frames keep their own lift."""
    lift = under.copy()
    reach = max(int(round(2.0 * sigma)), 1)
    for first, last in planting.intervals(~contacts):
        need = under[first : last + 1]
        if not need.any():
            continue
        path = np.minimum(np.maximum.accumulate(need), np.maximum.accumulate(need[::-1])[::-1])
        frames = np.arange(len(path))
        room = np.minimum(np.minimum(frames + 1, len(path) - frames), reach)  # frames to take-off or landing
        distance = np.abs(frames[:, None] - frames[None, :])
        bumps = planting.smoothstep(1.0 - distance / room[None, :])  # (frame, obstacle frame)
        lift[first : last + 1] = (path[None, :] * bumps).max(axis=1)
    return lift


def _surface_turn(soles_world, ground: Ground, s) -> tuple[np.ndarray, np.ndarray]:
    """Surface height under the middle of a sole (P, 3) and the turn (quaternion) from +Z to its normal."""
    heights, normals, _ = ground.cast_down(soles_world, s.search_distance, s.floor_height)
    return heights.mean(), planting.tilt(normals.sum(axis=0)[None], 1.0, s.max_foot_angle)[0]


def _contact_mappings(soles, clearance, contacts, carrier, ground: Ground, s):
    """One rigid floor-to-surface mapping per contact, held while the foot stands and blended
    between contacts: (F, 4) turns, (F, 3) anchors on the floor, (F,) lifts.

    A foot in the air rides on ``carrier`` (F,), the body's ground level, as it rises and falls,
    so hip and ankle keep their animated relation; only its offset from that level blends from
    take-off to landing."""
    frames = len(soles)
    spans = planting.intervals(contacts)
    turns, anchors, lifts = [], [], []
    for first, last in spans:
        flattest = first + int(np.argmin(clearance[first : last + 1].sum(axis=1)))
        anchor = soles[flattest].mean(axis=0)
        anchor[2] = s.floor_height
        height, turn = _surface_turn(soles[flattest], ground, s)
        turns.append(turn)
        anchors.append(anchor)
        lifts.append(height - s.floor_height)
    turn, anchor, lift = np.empty((frames, 4)), np.empty((frames, 3)), np.empty(frames)
    for k, (first, last) in enumerate(spans):
        turn[first : last + 1], anchor[first : last + 1], lift[first : last + 1] = turns[k], anchors[k], lifts[k]
    for first, last in planting.intervals(~contacts):
        before = next((k for k, span in enumerate(spans) if span[1] == first - 1), None)
        after = next((k for k, span in enumerate(spans) if span[0] == last + 1), None)
        a, b = (before if before is not None else after), (after if after is not None else before)
        t = (np.arange(first, last + 1) - first + 1) / (last - first + 2)
        u = planting.smoothstep(t)
        turn[first : last + 1] = rotation_modes.slerp(np.tile(turns[a], (len(u), 1)), np.tile(turns[b], (len(u), 1)), u)
        anchor[first : last + 1] = anchors[a] + u[:, None] * (anchors[b] - anchors[a])
        ride = carrier[first : last + 1]
        take_off = lifts[a] - carrier[spans[a][1]] if before is not None else lifts[a] - carrier[first]
        landing = lifts[b] - carrier[spans[b][0]] if after is not None else lifts[b] - carrier[last]
        lift[first : last + 1] = ride + take_off + u * (landing - take_off)
    return turn, anchor, lift


def _frame_mappings(soles, clearance, weight, level, ground: Ground, s):
    """A floor-to-surface mapping per frame, about the sole's lowest points: full while the foot is
    down, fading toward the body's ground level as it lifts."""
    frames = len(soles)
    near = np.exp(-(clearance - clearance.min(axis=1, keepdims=True)) / TOUCH)  # lowest points weigh most
    anchor = (soles * near[..., None]).sum(axis=1) / near.sum(axis=1, keepdims=True)
    anchor[:, 2] = s.floor_height
    turn, lift = np.empty((frames, 4)), np.empty(frames)
    for f in range(frames):
        height, turn[f] = _surface_turn(soles[f], ground, s)
        lift[f] = weight[f] * (height - s.floor_height) + (1.0 - weight[f]) * level[f]
    turn = rotation_modes.slerp(np.tile([1.0, 0.0, 0.0, 0.0], (frames, 1)), turn, weight)
    return turn, anchor, lift


def apply(plan: PlantPlan, groups, pose, inputs: FrameInputs, result: PlantResult, frame: int) -> np.ndarray:
    """Put one frame's planting into the gathered chains: feet goals, and every chain below the
    pelvis carried by its offset. Returns the pelvis' new location channel value."""
    to_armature = np.linalg.inv(inputs.world)
    shift = to_armature[:3, :3] @ result.pelvis_offset[frame]
    foot_goal = {
        f.limb: (to_armature @ result.feet[frame, n], to_armature[:3, :3] @ result.toes[frame, n])
        for n, f in enumerate(plan.feet)
    }
    for group in groups:
        batch = group.batch
        for row, limb in enumerate(group.limbs):
            if limb.name in plan.under_pelvis:
                batch.matrices[row, :, :3, 3] += shift
                batch.points[row] += shift
                if limb.target is None:
                    batch.target[row] += shift
            if limb.name in foot_goal:
                goal, toe = foot_goal[limb.name]
                length = next(f.foot_length for f in plan.feet if f.limb == limb.name)
                batch.target[row] = goal[:3, 3] + goal[:3, 1] * length
                batch.end_rotation[row] = goal[:3, :3]
                if batch.toe_goal is not None:
                    batch.toe_goal[row] = toe
    return pelvis_location(plan, pose, shift)


def pelvis_location(plan: PlantPlan, pose, shift: np.ndarray) -> np.ndarray:
    """The pelvis' location channel that moves it by ``shift`` (armature space)."""
    index = plan.pelvis
    if not plan.local_location:
        return pose.location[index] + shift
    # Location is applied in the frame the bone's rotation sits in: its matrix without its own
    # scale and rotation (see solvers.local_rotation for the model).
    rotation = rotation_modes.quat_to_matrix(local_quaternions(pose, [index], [plan.pelvis_mode]))[0]
    frame = pose.matrices[index, :3, :3] / pose.scale[index][None, :] @ rotation.T
    return pose.location[index] + np.linalg.solve(frame, shift)
