# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting over a whole take, on plain arrays: feet animated on one ground land on another surface.

In: the animated legs as world-space tracks (:class:`Legs`, +Z up), the ground as a
``cast_down(points) -> (heights, normals, hit)`` callable, and :class:`PlantSettings`. Out
(:class:`Planted`): per frame, where each foot and toe goes and how far the pelvis moves. The
rig layer gathers the tracks and turns the result into IK goals. The steps, one module each:

0. :mod:`.authored`: the ground each stance stood on in the source: the floor, a raised stance's own
   level, or the authored ground given;
1. :mod:`.contacts`: which sole points (heel, ball, tip) are down and which stand, each against
   its own contact level; the foot lock that holds a standing foot on its ball; :mod:`.placement`, a stance
   that would straddle an edge moved to footing; :mod:`.held`, which frames a foot down on the ground is held
   on it, and which are a swing (landing, skimming, over an edge);
2. :mod:`.surface`: the floor-to-surface map of each foot, held while it stands, blended from
   take-off to landing in the air, and raised wherever the foot would go into the ground;
3. :mod:`.pelvis`: the ground carrying the body, and the drop a standing leg needs to reach;
4. :mod:`.loops`: a cycle in place that loops is planted as it plays on repeat, so it loops planted too.

Everything works on the whole timeline at once, so a frame's result depends on the take, not
on which frames are baked, and live solving can look its frame up in the same analysis.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..constants import IDENTITY
from ..errors import SolverError
from ..rotation_modes import matrix_to_quat, quat_to_matrix
from .air import bend_in_air, gentle_swing
from .authored import authored_raise, stance_raise, standing_under
from .contacts import AUTO, BALL, DOWN, UP, Contacts, find_contacts, holders, lock_offsets, sliding
from .held import across_edges, held_part, landings
from .loops import frames_around, period, taken, tracked
from .pelvis import (
    GUARD_SPEED,
    KNEE_TURN,
    LENGTH_MARGIN,
    MAX_HEEL,
    OVERSHOOT,
    PELVIS_MODES,
    body_height,
    body_motion,
    carried_height,
    heel_lift,
    heel_turn,
    highest,
    knee_guard,
    moved_with,
    pelvis_drop,
    support_level,
    surface_under,
    travel_ahead,
)
from .placement import footing_offsets
from .retime import least_jumps
from .surface import clearing_lift, eased_turns, pitched, rest, swing, tilt, transform
from .timeline import ease_jumps, envelope, fill_gaps, intervals, smoothstep

#: ``cast_down(points (N, 3)) -> heights (N,), upward normals (N, 3), hit (N,)``: the topmost
#: surface straight below each point; where ``hit`` is False the other two mean nothing.
CastDown = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]
#: A leg carries the body when its hip is at least this fraction of its extension above its ankle.
CARRIES = 0.5
#: Most a foot lock moves a foot, as a fraction of its leg's length: a capture's drift over a long stance (one
#: of CMU 131's hops stands 1.8 s while the capture drags it 9 cm, 11% of the leg), not a step.
LOCK_REACH = 0.15
#: Seconds with no foot on the ground that make a flight (a run's, a jump's); shorter gaps are noise.
FLIGHT_TIME = 0.05
#: A body that travels less than this fraction of its legs' length over the take walks in place.
IN_PLACE = 0.5
#: Metres a held foot's ground may change between two frames without moving: noise, not an edge.
STEADY = 0.002
#: Fastest a held foot turns to follow the ground under it (radians a second), and the seconds over which a faster
#: change (its ball crossing an edge between two faces of the ground, a bump's rim) eases, before and after.
HELD_TURN, HELD_EASE = np.radians(120.0), 0.05
#: Directions around the pelvis where the ground under the body is sampled.
_DISC = np.array([[0.0, 0.0]] + [[math.cos(a), math.sin(a)] for a in np.linspace(0.0, 2 * math.pi, 8, endpoint=False)])


@dataclass(frozen=True)
class PlantSettings:
    """How planting reads the motion. Distances in metres, times in seconds, angles in radians."""

    fps: float  #: frames per second of the take
    floor: float = 0.0  #: height of the floor the motion was animated on (stances well above it stand on something)
    contact_height: float = 0.03  #: a sole point this close to its contact level is down
    contact_speed: float = 0.3  #: a point down and slower than this (m/s, horizontally) stands
    max_tilt: float = math.radians(40.0)  #: steepest surface a foot tips to follow
    smoothing: float = 0.15  #: the body's rise and fall is smoothed over about this time
    release: float = 0.1  #: a locked foot eases back to its animation over this time after lift-off
    foot_lock: bool = True  #: hold standing feet where they stand
    pelvis_mode: str = "average"  #: which carrying legs set the body's height: one of :data:`.pelvis.PELVIS_MODES`
    max_pelvis_drop: float = 1.0  #: most the pelvis sits lower above the ground under it than authored above the floor

    def __post_init__(self):
        if self.pelvis_mode not in PELVIS_MODES:
            raise SolverError(f"pelvis mode must be one of {', '.join(PELVIS_MODES)}, not {self.pelvis_mode!r}")
        values = {
            name: getattr(self, name)
            for name in (
                "fps",
                "floor",
                "contact_height",
                "contact_speed",
                "max_tilt",
                "smoothing",
                "release",
                "max_pelvis_drop",
            )
        }
        if not all(math.isfinite(v) for v in values.values()):
            raise SolverError(f"planting settings must be finite numbers: {values}")
        if self.fps <= 0.0:
            raise SolverError(f"fps must be positive, not {self.fps}")
        negative = [name for name, v in values.items() if name != "floor" and v < 0.0]
        if negative:
            raise SolverError(f"planting settings must not be negative: {', '.join(negative)}")


@dataclass(frozen=True)
class Legs:
    """n animated legs over F frames, in world space with +Z up."""

    foot: np.ndarray  #: (F, n, 4, 4) foot bone matrices; the translation is the ankle
    ball: np.ndarray  #: (F, n, 3) where the foot bends: the toe's head, or a toe-less foot's tip
    tip: np.ndarray  #: (F, n, 3) the toe's tip (the ball again for a toe-less foot)
    toe: np.ndarray  #: (F, n, 3, 3) the toe bone's rotation (the foot's, without a toe)
    hip: np.ndarray  #: (F, n, 3) the upper bone's head
    pelvis: np.ndarray  #: (F, 3)
    thigh: np.ndarray  #: (F, n) hip to knee, as animated (a bone between them may bend it)
    shin: np.ndarray  #: (F, n) knee to ankle, as animated
    girdle: np.ndarray | None = None  #: (n,) 0 or 1: hind and front legs of a quadruped; None: one girdle
    heel: np.ndarray | None = None  #: (F, n, 3) where each heel touches (a mesh's sole); None: :func:`heel_points`
    #: (n,) feet whose sole is a mesh's: where the take has it under the floor, it is raised onto it, pitch kept (a
    #: mesh keyed into the floor shows in the render; a bone sole is a guess, kept as deep as it is), and it lifts no
    #: heel to reach; None: none
    solid: np.ndarray | None = None
    #: (F, n, Q, 3) more points of each foot that may touch the ground (a mesh's claws, a hoof's rim): they stay out
    #: of it as the sole does, and a solid foot is raised by them too; None: the sole alone
    outline: np.ndarray | None = None


@dataclass(frozen=True)
class Planted:
    """Where the legs go, per frame of the take."""

    foot: np.ndarray  #: (F, n, 4, 4) world matrices the foot bones take
    toe: np.ndarray  #: (F, n, 3, 3) world rotations the toes take
    body: np.ndarray  #: (F, 4, 4) world transform of the pelvis and all it carries: up or down, and pitched
    contacts: Contacts  #: where the motion has the feet on the floor
    no_ground: np.ndarray  #: (F, n) frames where a foot had no ground below it
    source: np.ndarray  #: (F, n) height of the ground under each ball in the source: the floor but on raised stances
    under_floor: np.ndarray  #: (F, n) frames where a foot stands far under its floor, on nothing: not to be planted
    #: (F, n) height of the ground under each ball where planting holds it across the floor (lock and placement in)
    ground: np.ndarray
    #: (F, n) how far each solid foot the take keys into its floor is raised onto it (0 for the others)
    raised: np.ndarray


def plant(
    legs: Legs, cast_down: CastDown, settings: PlantSettings, forced=None, authored: CastDown | None = None
) -> Planted:
    """Plant ``legs`` on the ground ``cast_down`` finds, over the whole take. ``forced`` (F, n), if given, is
    the animator's word on where each foot stands (:data:`.contacts.DOWN`) or is up (:data:`.contacts.UP`):
    a foot forced down is locked however far the motion drags it, and lowered to where it stands.
    ``authored``, if given, is the ground the take was made on (the floor where it has no surface); else
    that ground is read from the stances (:mod:`.authored`). A cycle in place that loops is planted as it plays on
    repeat (:mod:`.loops`)."""
    _check(legs)
    if forced is not None and np.shape(forced) != legs.ball.shape[:2]:
        raise SolverError(f"forced must be {legs.ball.shape[:2]}, not {np.shape(forced)}")
    heel = heel_points(legs.foot, legs.ball) if legs.heel is None else np.asarray(legs.heel, dtype=np.float64)
    sole = np.stack([heel, legs.ball, legs.tip], axis=2)  # (F, n, P, 3)
    # Heights above the ground each point stood on in the source, from the floor: contacts are found, and heights
    # kept, as on a flat floor.
    source_up = None
    if authored is None:
        animated = np.linalg.norm(legs.hip - legs.foot[:, :, :3, 3], axis=2)
        carried = legs.hip[..., 2] - legs.foot[..., 2, 3] >= CARRIES * animated
        args = settings.contact_height, settings.contact_speed, legs.girdle, carried
        leg_lengths = np.median(legs.thigh + legs.shin, axis=0)
        raised, aloft = stance_raise(sole, leg_lengths, settings.fps, settings.floor, *args)
        stood = np.repeat(raised[..., None], sole.shape[2], axis=2)
        if aloft.any():  # a foot held up at rest beside one on the floor is in the air, unless forced down there
            given = np.full(aloft.shape, AUTO) if forced is None else np.asarray(forced)
            forced = np.where(aloft & (given == AUTO), UP, given)
    else:
        stood, source_up = authored_raise(sole, authored, settings.floor)
    source = _Source(sole, stood, source_up, forced)
    loop = None if travelling(legs) else period(tracked(legs))
    if loop is None:
        return _plant(legs, source, cast_down, settings)
    # A cycle in place that loops is planted with the loops that come before and after it on repeat, then cut.
    index, before = frames_around(len(legs.ball), loop)
    planted = _plant(taken(legs, index), taken(source, index), cast_down, settings)
    return taken(planted, np.arange(before, before + len(legs.ball)))


@dataclass(frozen=True)
class _Source:
    """What :func:`plant` reads of the ground the take was made on, per frame: each foot's (F, n, P, 3) ``sole``
    points, how far that ground is above the floor under each (``stood`` (F, n, P)), its upward normal under each
    ball where it was given (``up`` (F, n, 3), else None), and where each foot is forced down or up (``forced``
    (F, n), or None)."""

    sole: np.ndarray
    stood: np.ndarray
    up: np.ndarray | None
    forced: np.ndarray | None


def _plant(legs: Legs, source: _Source, cast_down: CastDown, settings: PlantSettings) -> Planted:
    """:func:`plant`, the ground the take was made on read."""
    frames, count = legs.ball.shape[:2]
    fps, floor = settings.fps, settings.floor
    sigma = settings.smoothing * fps
    flight = math.ceil(FLIGHT_TIME * fps)
    sole, stood, source_up, forced = source.sole, source.stood, source.up, source.forced
    animated = np.linalg.norm(legs.hip - legs.foot[:, :, :3, 3], axis=2)
    lengths = legs.thigh + legs.shin
    leg_lengths = np.median(lengths, axis=0)  # (n,) each leg's length over the take
    relative = sole.copy()
    relative[..., 2] -= stood
    contacts = find_contacts(relative, leg_lengths, fps, settings.contact_height, settings.contact_speed, forced)
    under_floor = standing_under(contacts.stance, relative[..., 2], floor, leg_lengths)
    shift = np.zeros((frames, count, 3))
    # A cycle walked in place slides its standing feet back by design: the lock holds only the feet forced down there,
    # not the moments a foot slows as it turns (a straight leg held a few millimetres off its slide bends 10°).
    travels = travelling(legs)
    if settings.foot_lock:
        most = LOCK_REACH * leg_lengths
        for n in range(count):
            pinned = np.zeros(frames, bool) if forced is None else np.asarray(forced)[:, n] == DOWN
            reach = np.where(pinned, np.inf, most[n])
            fastest = np.where(pinned, np.inf, settings.contact_speed / fps)
            held_still = contacts.stance[:, n] if travels else contacts.stance[:, n] & pinned[:, None]
            shift[:, n, :2] = lock_offsets(sole[:, n, :, :2], held_still, settings.release * fps, reach, fastest)
    if contacts.pressed.any():
        shift[..., 2] = pressed_down(contacts, settings.release * fps)
    outline = np.zeros((frames, count, 0, 3)) if legs.outline is None else np.asarray(legs.outline, np.float64)
    solid = np.zeros(count, bool) if legs.solid is None else np.asarray(legs.solid, bool)  # (n,) mesh soles
    keyed_under = np.zeros((frames, count))  # how far each solid foot is raised onto the floor the take keys it into
    if solid.any():
        bottom = np.concatenate([sole[..., 2], outline[..., 2]], axis=2).min(axis=2)
        under = np.maximum(floor - (bottom + shift[..., 2]), 0.0)  # (F, n)
        keyed_under = np.where(solid, under, 0.0)
        shift[..., 2] += keyed_under
    # Heel, ball, tip, ankle and outline as held and raised so far, and how deep each may go into the ground: as deep
    # as the take has it under the ground it stood on.
    points = np.concatenate([sole, legs.foot[:, :, None, :3, 3], outline], axis=2) + shift[:, :, None]
    others = np.repeat(stood[:, :, BALL, None], 1 + outline.shape[2], axis=2)
    depth = np.minimum(points[..., 2] - floor - np.concatenate([stood, others], axis=2), 0.0)
    # A stance whose sole would straddle an edge (its ball short of a step's riser, its toe over the upper level)
    # moves along the foot to where the whole sole has footing.
    on_sole = np.r_[:3, 4 : points.shape[2]]  # all but the ankle
    placed = footing_offsets(
        points[:, :, on_sole],
        contacts.stance.any(axis=2),
        depth[:, :, on_sole],
        floor + stood[:, :, BALL],
        cast_down,
        settings.max_tilt,
        settings.contact_height,
    )
    shift[..., :2] += placed
    points[..., :2] += placed[:, :, None]
    sole = points[:, :, :3]

    # The ground under each foot; a foot on the ground (standing, or sliding along it) is carried
    # by a map that turns about its ball and lifts it by the ground's height there, keeping its
    # height above it.
    down, standing = contacts.down, contacts.stance.any(axis=2)
    held = standing | sliding(contacts, settings.contact_height, fps)
    pivot = sole[:, :, BALL]
    footing, normal, ground = (a.reshape(frames, count, *a.shape[1:]) for a in cast_down(pivot.reshape(-1, 3)))
    no_ground = down & ~ground
    lift = np.zeros((frames, count))
    for n in range(count):  # a foot off the ground's edge keeps the lift of its nearest footing
        lift[:, n] = fill_gaps(np.where(ground[:, n], footing[:, n] - floor - stood[:, n, BALL], 0.0), ground[:, n])
    turn = np.tile(IDENTITY, (frames, count, 1))
    held &= ground
    tilted = tilt(normal[held], settings.max_tilt)
    if source_up is not None:  # from the authored ground's slope, not from the floor's
        untilted = quat_to_matrix(tilt(source_up[held], settings.max_tilt))
        tilted = matrix_to_quat(quat_to_matrix(tilted) @ np.swapaxes(untilted, 1, 2))
    turn[held] = pitched(tilted, *rest(tilted, sole[held], depth[held][:, :3], lift[held], cast_down))
    for n in range(count):
        for first, last in intervals(held[:, n]):
            turn[first : last + 1, n] = eased_turns(turn[first : last + 1, n], HELD_TURN / fps, HELD_EASE * fps)
    need = _sinking(transform(turn[held], pivot[held], lift[held], points[held]), depth[held], cast_down)[0]
    lift[held] += need.max(axis=1, initial=0.0)
    # A foot landing or leaving across an edge (a step's riser) is held up by a point not standing,
    # its toe or heel over the higher ground: there it is in the air, not on either level.
    stands = np.zeros(points.shape[:3], bool)  # the ankle and the outline: never
    stands[..., :3] = contacts.stance
    stands = stands[held]
    leaning, bearing = np.where(stands, 0.0, need).max(axis=1), np.where(stands, need, 0.0).max(axis=1)
    hanging = np.zeros((frames, count), bool)
    hanging[held] = leaning > bearing + settings.contact_height
    # A foot sliding without standing over an edge (what it stands on changes faster than the steepest slope it
    # follows, a step's riser) is a swing skimming the ground: in the air too.
    steady = np.tan(settings.max_tilt) * np.linalg.norm(np.diff(pivot[..., :2], axis=0), axis=2) + STEADY
    edges = np.abs(np.diff(lift, axis=0)) > steady + settings.contact_height
    # A take whose body travels (not a cycle walked in place, whose feet slide back along the ground at walking speed)
    # lands its feet through the air, where they come down sliding before they stand or the last frame cuts them.
    for n in range(count):
        from_hip = pivot[:, n, :2] - legs.hip[:, n, :2]
        for first, last in intervals(held[:, n]):
            span = slice(first, last + 1)
            held[span, n] = held_part(hanging[span, n], standing[span, n])
            held[span, n] &= across_edges(edges[first:last, n], standing[span, n], from_hip[span])
        if travels:
            held[:, n] &= ~landings(held[:, n], standing[:, n], from_hip, lift[:, n], settings.contact_height)
    # In a cycle walked in place, a foot down in the contact band but not held (landing or lifting, or running into a
    # stance the take's first frame cuts) keeps its height above the ground under its ball as it has it above the
    # floor: it goes back along the ground as the standing feet do, not through the air.
    band = down & ground & ~held if not travels else np.zeros_like(held)
    for n in range(count):  # but not across an edge (a step's riser): there it goes through the air
        for first, last in intervals(band[:, n]):
            if edges[max(first - 1, 0) : last + 1, n].any():
                band[first : last + 1, n] = False
    # Where what a foot on the ground stands on changes that fast, the change eases over time, before and after.
    for n in range(count):
        for first, last in intervals(held[:, n] | band[:, n]):
            lift[first : last + 1, n] = ease_jumps(lift[first : last + 1, n], steady[first:last, n], sigma)

    # Everywhere else the map blends from stance to stance, riding on the body, so hip and foot
    # keep their animated relation (and the knee its bend) but for the blend; and rises over
    # whatever it would pass through, on a smooth path.
    under, slope = _under_pelvis(legs, cast_down, floor)
    carrier = support_level(footing - stood[:, :, BALL], down & ground, under, sigma) - floor

    def ride(rise, held_turn=None):
        """Every foot's (F, n, 4) turns and (F, n, 4, 3) carried points, each foot in the air riding on
        the rise of its hip, ``rise`` (F, n); ``held_turn`` (F, n, 4): the turns where feet are held, if not
        ``turn``."""
        held_turn = turn if held_turn is None else held_turn
        turns, moved = held_turn.copy(), np.empty_like(points)
        for n in range(count):
            turns[:, n], lifts = swing(held[:, n], held_turn[:, n], lift[:, n], rise[:, n])
            if band[:, n].any():  # its lifts ride from the ground under a foot down in the band too, not its turns
                lifts = swing(held[:, n] | band[:, n], held_turn[:, n], lift[:, n], rise[:, n])[1]
            moved[:, n] = transform(turns[:, n], pivot[:, n], lifts, points[:, n])
        return turns, moved

    # Each girdle (the hips, or a quadruped's hind and front legs) sits as high as the pelvis mode has its
    # standing legs allow with their animated extension (the lowest leg's; or the front one's or their average,
    # each heel free to lift, no higher than any standing foot's own ground says the ground under the girdle is),
    # and carries that over a flight; the body goes up or down (and pitches, between two girdles) to
    # meet them.
    girdle = np.zeros(count, int) if legs.girdle is None else np.asarray(legs.girdle)
    _, moved = ride(np.repeat(carrier[:, None], count, axis=1))  # where held feet go does not depend on the body
    heels, balls, tips, ankles = (moved[:, :, k] for k in range(4))  # as held; a heel lift turns them about the ball
    ceiling = highest(legs.hip, ankles, animated)
    # Only a leg that points down carries the body; lying, sitting or kneeling, the hips rest on
    # something else (and the height that keeps such a leg's extension is ill-defined).
    carries = held & (legs.hip[..., 2] - legs.foot[..., 2, 3] >= CARRIES * animated)
    # How far each standing foot may lift its heel to reach: a mesh's sole none, as lifting it would stand the foot
    # on the front edge of its toes, not on the part of it the take stands on; its leg straightens, or the body
    # comes lower, instead.
    heel_most = np.where(solid, 0.0, MAX_HEEL)
    lowest = settings.pelvis_mode == "lowest"
    if not lowest:
        raised = _heel_turned(np.broadcast_to(heel_most, (frames, count)), balls, ankles, heels, tips)
        straight = np.minimum(np.maximum(animated, LENGTH_MARGIN * lengths), lengths)
        reach = np.maximum(ceiling, highest(legs.hip, raised, straight))
        ahead = travel_ahead(ankles, legs.pelvis, fps, sigma)
        steepest = np.repeat(slope[:, None], count, axis=1)
    heights = []
    for g in np.unique(girdle):
        part = girdle == g
        rule = (ceiling[:, part], carries[:, part], held.any(axis=1))
        if lowest:
            heights.append(body_height(*rule, carrier, sigma, flight))
            continue
        # A standing foot the take has off its floor (a mesh sole keyed into it and raised onto it, a foot forced
        # down) is off its ground, not on higher or lower ground: the mode's height is worked out as if it were not,
        # and the body goes up or down with the least moved standing foot on top of that, smoothed from below as
        # the lowest leg's height is (the mode's overshoot, there to ride over a slope, would straighten a leg
        # and lift its heel over a sole raised for a few frames on flat ground).
        off = shift[..., 2]
        wanted = carried_height(reach[:, part] - off[:, part], carries[:, part], settings.pelvis_mode, ahead[:, part])
        carrying = (carries & ground)[:, part]
        grounds = surface_under(footing - stood[:, :, BALL], normal, pivot, legs.hip[:, part].mean(axis=1), steepest)
        grounds = grounds[:, part] - floor
        target = np.minimum(wanted, np.where(carrying, grounds, np.inf).min(axis=1))
        raise_ = np.where(carrying, off[:, part], np.inf).min(axis=1)
        raise_ = body_height(*rule, np.zeros(frames), sigma, flight, np.where(np.isfinite(raise_), raise_, 0.0))
        heights.append(body_height(*rule, carrier - raise_, sigma, flight, target, OVERSHOOT) + raise_)
    body = body_motion(np.stack(heights, axis=1), legs.hip, girdle)
    hips = moved_with(body, legs.hip)

    # A standing leg that cannot keep its animated bend lifts its heel (up to MAX_HEEL), then straightens; the
    # body goes lower where even that does not reach (a foot whose swing must clear something, as a step's
    # riser, leaves with its animated bend), and never more than the maximum drop below its authored height
    # above the ground under it.
    nearest = _heel_turned(heel_lift(hips, balls, ankles, heels, tips, 0.0, heel_most), balls, ankles, heels, tips)
    keep = _clearing(ride(hips[..., 2] - legs.hip[..., 2])[1], depth, held, settings.contact_height, sigma, cast_down)
    drop = pelvis_drop(hips, nearest, lengths, animated, held, sigma, keep)
    pelvis = np.einsum("fij,fj->fi", body[:, :3, :3], legs.pelvis) + body[:, :3, 3]
    least = under + (legs.pelvis[:, 2] - floor) - settings.max_pelvis_drop
    drop -= envelope(np.maximum(least - (pelvis[:, 2] - drop), 0.0), sigma)
    hips[..., 2] -= drop[:, None]
    heel_up = np.zeros((frames, count))
    for n in range(count):
        needed = heel_lift(hips[:, n], balls[:, n], ankles[:, n], heels[:, n], tips[:, n], animated[:, n], heel_most[n])
        for first, last in intervals(held[:, n]):
            heel_up[first : last + 1, n] = np.minimum(envelope(needed[first : last + 1], sigma), heel_most[n])
    # Nor does the body sink or rise faster than a standing leg, its heel so lifted, can follow without its knee
    # folding (a straight leg coming under a body held low) or snapping straight (a body rising onto a step while
    # the back foot still stands), nor where the ground under a standing foot carries it up or down (a cycle walked in
    # place slides its feet back over a slope), the body then following it up to GUARD_SPEED; rising only as far as
    # every standing foot still reaches, within the maximum drop.
    lifted = _heel_turned(heel_up, balls, ankles, heels, tips)
    standing_legs = (animated, legs.thigh, legs.shin, held, sigma)
    longest = np.minimum(np.maximum(animated, LENGTH_MARGIN * lengths), lengths)
    room = np.where(held, highest(hips, lifted, longest), np.inf).min(axis=1)
    fastest = GUARD_SPEED * leg_lengths.max() / fps
    rise = knee_guard(hips, lifted, *standing_legs, lower=False, room=room, fastest=fastest)
    drop -= rise
    hips[..., 2] += rise[:, None]
    straightening = knee_guard(hips, lifted, *standing_legs, lower=True, fastest=fastest)
    straightening = np.minimum(straightening, np.maximum(pelvis[:, 2] - drop - least, 0.0))
    drop += straightening
    hips[..., 2] -= straightening[:, None]
    body[:, 2, 3] -= drop
    lifting = held & (heel_up > 0.0)
    pitch = quat_to_matrix(heel_turn(heel_up[lifting], heels[lifting], tips[lifting]))
    flat = turn.copy()  # the toes stay along the ground as the heels lift
    turn[lifting] = matrix_to_quat(pitch @ quat_to_matrix(turn[lifting]))

    # The feet in the air go with their hips, their legs bending as animated give or take, then
    # rise over whatever they would pass through.
    rise = hips[..., 2] - legs.hip[..., 2]
    turn, moved = ride(rise)
    # In the air a leg bends as the take has it with its foot raised where the take has the mesh in the floor (or
    # pressed down where forced): a foot raised as it pushes off leaves as the take does, not held up to the landing.
    raised = legs.foot[:, :, :3, 3].copy()
    raised[..., 2] += shift[..., 2]
    swung = np.linalg.norm(legs.hip - raised, axis=2)
    toe_turn = ride(rise, flat)[0] if lifting.any() else turn
    for n in range(count):
        # As straight as animated, or nearly.
        longest = np.clip(swung[:, n], LENGTH_MARGIN * lengths[:, n], lengths[:, n])
        ankles = bend_in_air(
            held[:, n] | band[:, n],
            standing[:, n],
            hips[:, n],
            moved[:, n, 3],
            swung[:, n],
            legs.thigh[:, n],
            legs.shin[:, n],
            longest,
        )
        moved[:, n] += (ankles - moved[:, n, 3])[:, None]
    need, hit = _sinking(moved.reshape(-1, *points.shape[2:]), depth.reshape(-1, *depth.shape[2:]), cast_down)
    need, hit = need.max(axis=1, initial=0.0).reshape(frames, count), hit.reshape(frames, count, -1)
    for n in range(count):
        # Each swing with its take-off and landing frames rises over what it would pass through; between two
        # stances, re-timed where it would rise onto higher ground in a jump.
        swings = intervals(~held[:, n])
        spans = [slice(max(first - 1, 0), min(last + 2, frames)) for first, last in swings]
        tracks = [moved[span, n] for span in spans]
        risen = _lifted(tracks, spans, held[:, n], depth[:, n], cast_down, sigma, [need[span, n] for span in spans])
        between = [i for i, (first, last) in enumerate(swings) if first > 0 and last < frames - 1]
        chosen = least_jumps(
            [tracks[i] for i in between],
            [risen[i] for i in between],
            [points[spans[i], n] for i in between],
            lambda trials, which, n=n, among=[spans[i] for i in between]: _lifted(
                trials, [among[k] for k in which], held[:, n], depth[:, n], cast_down, sigma
            ),
        )
        for i, track in zip(between, chosen):
            risen[i] = track
        for span, track in zip(spans, risen):
            moved[span, n] = track
        # Nor does its knee turn in the air by more than KNEE_TURN a frame beyond its animated turn (or, where the
        # foot must clear something, than it must): the foot moves along the line from the hip, so the knee bends
        # early instead of at once; then rises again over anything it would still pass through.
        leg = (animated[:, n], legs.thigh[:, n], legs.shin[:, n])

        def sinking(offsets, n=n):
            return _sinking(moved[:, n] + offsets[:, None], depth[:, n], cast_down)[0].max(axis=1, initial=0.0)

        gentle, again = gentle_swing(held[:, n], hips[:, n], moved[:, n, 3], *leg, KNEE_TURN, sinking)
        moved[:, n] += gentle[:, None]
        over = clearing_lift(np.where(held[:, n], 0.0, np.maximum(again, 0.0)), held[:, n], sigma)
        moved[:, n, :, 2] += over[:, None]

    rotation = quat_to_matrix(turn.reshape(-1, 4)).reshape(frames, count, 3, 3)
    foot = legs.foot.copy()
    foot[..., :3, :3] = rotation @ legs.foot[..., :3, :3]
    foot[..., :3, 3] = moved[:, :, 3]
    toe_rotation = quat_to_matrix(toe_turn.reshape(-1, 4)).reshape(frames, count, 3, 3)
    source = floor + stood[:, :, BALL]
    missing = no_ground | ~hit[:, :, BALL]
    return Planted(foot, toe_rotation @ legs.toe, body, contacts, missing, source, under_floor, footing, keyed_under)


def travelling(legs: Legs) -> bool:
    """Whether the body of ``legs`` travels over the take: its pelvis goes at least :data:`IN_PLACE` of its legs'
    length (the median thigh and shin) from where it starts. Else the take walks in place."""
    reach = np.median(np.asarray(legs.thigh) + np.asarray(legs.shin))
    return bool(np.linalg.norm(legs.pelvis[:, :2] - legs.pelvis[0, :2], axis=1).max() >= IN_PLACE * reach)


def pressed_down(contacts: Contacts, release_frames: float) -> np.ndarray:
    """(F, n) how far each foot is lowered where it stands only because it is forced down (``contacts.pressed``):
    its holding point to its contact level, as where the motion stands, never up; after each such run, eased
    back over ``release_frames``."""
    down = contacts.pressed
    holder = holders(contacts.stance)[..., None]
    above = np.maximum(np.take_along_axis(contacts.clearance, holder, axis=2)[..., 0], 0.0)
    lower = np.where(down, -above, 0.0)
    frames = len(lower)
    for n in range(lower.shape[1]):
        for _, last in intervals(down[:, n]):
            after = np.arange(1, min(math.ceil(release_frames), frames - 1 - last) + 1)
            eased = lower[last, n] * (1.0 - smoothstep(after / max(release_frames, 1.0)))
            lower[last + after, n] = np.minimum(lower[last + after, n], eased)
    return lower


def _sinking(points, depth, cast_down: CastDown) -> tuple[np.ndarray, np.ndarray]:
    """(k, K) how far each of k feet must rise so each of its (k, K, 3) ``points`` is in the ground
    no deeper than ``depth`` (k, K) allows (zero or less: not at all), and (k, K) which points have
    ground under them."""
    heights, _, hit = cast_down(points.reshape(-1, 3))
    heights, hit = heights.reshape(depth.shape), hit.reshape(depth.shape)
    return np.where(hit, heights + depth - points[..., 2], 0.0), hit


def _lifted(tracks, spans, down, depth, cast_down: CastDown, sigma: float, needs=None) -> list[np.ndarray]:
    """The one leg's swing ``tracks`` ((k, K, 3) each), over the frames ``spans`` of a take where it is ``down``
    (F,) and its K points may go ``depth`` (F, K) deep, each risen over what it would pass through
    (:func:`.surface.clearing_lift`); ``needs``: how far each would go in ((k,) each), else cast all at once."""
    if needs is None:
        need = _sinking(np.concatenate(tracks), np.concatenate([depth[span] for span in spans]), cast_down)[0]
        needs = np.split(need.max(axis=1, initial=0.0), np.cumsum([len(track) for track in tracks])[:-1])
    risen = []
    for track, span, need in zip(tracks, spans, needs):
        track = np.array(track, dtype=np.float64)
        track[..., 2] += clearing_lift(np.where(down[span], 0.0, need), down[span], sigma)[:, None]
        risen.append(track)
    return risen


def _heel_turned(angle, balls, ankles, heels, tips) -> np.ndarray:
    """(F, n, 3) the ``ankles`` of feet turned heel up by ``angle`` (F, n) about their ``balls``."""
    turns = heel_turn(angle, heels, tips).reshape(-1, 4)
    turned = transform(turns, balls.reshape(-1, 3), np.zeros(len(turns)), ankles.reshape(-1, 1, 3))
    return turned.reshape(ankles.shape)


def _clearing(moved, depth, held, height: float, sigma: float, cast_down: CastDown) -> np.ndarray:
    """(F, n) the last ``sigma`` frames of each stance after which the foot, on its way (``moved`` (F, n, K, 3)
    as it would go, ``depth`` (F, n, K) as deep as each point may go), must rise more than ``height`` over
    something: there its leg keeps its animated extension, so it does not leave straightened and fold at once."""
    frames, count = held.shape
    need = _sinking(moved.reshape(-1, *moved.shape[2:]), depth.reshape(-1, depth.shape[2]), cast_down)[0]
    need = need.max(axis=1, initial=0.0).reshape(frames, count)
    keep = np.zeros((frames, count), bool)
    span = max(int(round(sigma)), 1)
    for n in range(count):
        for first, last in intervals(~held[:, n]):
            if first > 0 and need[first : last + 1, n].max() > height:
                stance = intervals(held[:first, n])[-1][0]
                keep[max(stance, first - span) : first, n] = True
    return keep


def heel_points(foot, ball) -> np.ndarray:
    """(F, n, 3) heels: where each foot's heel touches when it stands flat.

    Skeletons have no heel joint, so it is found in the motion: at the frame where the ankle is
    lowest (the foot standing flat), the point straight below the ankle at the ball's height,
    carried by the foot from then on.
    """
    foot, ball = np.asarray(foot, dtype=np.float64), np.asarray(ball, dtype=np.float64)
    heels = np.empty_like(ball)
    for n in range(ball.shape[1]):
        flat = int(np.argmin(foot[:, n, 2, 3]))
        heel = np.append(foot[flat, n, :3, 3], 1.0)
        heel[2] = min(heel[2], ball[flat, n, 2])
        local = np.linalg.solve(foot[flat, n], heel)
        heels[:, n] = (foot[:, n] @ local)[:, :3]
    return heels


def _under_pelvis(legs: Legs, cast_down: CastDown, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """(F,) the ground under the body: averaged over a disc around the pelvis a quarter of a leg
    wide, so one pebble or a step's edge does not jolt it; the floor where there is none. And (F,) how
    steep it is there (rise over run, from the plane through the disc's heights; 0 where part of it has none)."""
    frames = len(legs.pelvis)
    radius = 0.25 * float(np.max(legs.thigh + legs.shin))
    disc = np.repeat(legs.pelvis, len(_DISC), axis=0)
    disc[:, :2] += np.tile(_DISC * radius, (frames, 1))
    heights, _, hit = cast_down(disc)
    heights, hit = heights.reshape(frames, -1), hit.reshape(frames, -1)
    found = hit.any(axis=1)
    total = np.where(hit, heights, 0.0).sum(axis=1)  # heights where nothing is hit mean nothing (NaN is fair)
    mean = np.where(found, total / np.maximum(hit.sum(axis=1), 1), floor)
    fit = np.linalg.pinv(np.column_stack([np.ones(len(_DISC)), _DISC * radius]))  # (3, disc): level, d/dx, d/dy
    whole = hit.all(axis=1)
    gradient = np.where(whole[:, None], np.where(hit, heights, 0.0) @ fit[1:].T, 0.0)
    return fill_gaps(mean, found), np.linalg.norm(gradient, axis=1)


def _check(legs: Legs) -> None:
    frames, count = np.shape(legs.ball)[:2]
    shapes = {
        "foot": (frames, count, 4, 4),
        "ball": (frames, count, 3),
        "tip": (frames, count, 3),
        "toe": (frames, count, 3, 3),
        "hip": (frames, count, 3),
        "pelvis": (frames, 3),
        "thigh": (frames, count),
        "shin": (frames, count),
    }
    if legs.heel is not None:
        shapes["heel"] = (frames, count, 3)
    if legs.solid is not None:
        shapes["solid"] = (count,)
    if legs.outline is not None:
        shapes["outline"] = (frames, count, *np.shape(legs.outline)[2:3], 3)
    if legs.girdle is not None:
        shapes["girdle"] = (count,)
        if not set(np.unique(legs.girdle)) <= {0, 1}:
            raise SolverError("legs.girdle must hold 0 (hind) and 1 (front) only")
    for name, shape in shapes.items():
        value = np.asarray(getattr(legs, name))
        if value.shape != shape:
            raise SolverError(f"legs.{name} must be {shape}, not {value.shape}")
        if not np.isfinite(value).all():
            raise SolverError(f"legs.{name} must be finite")
    if frames == 0 or count == 0:
        raise SolverError("planting needs at least one frame and one leg")
    if not ((np.asarray(legs.thigh) > 0.0) & (np.asarray(legs.shin) > 0.0)).all():
        raise SolverError("every leg must have a thigh and a shin of positive length")
