# SPDX-License-Identifier: GPL-3.0-or-later
"""How high the body goes: as high as its standing legs allow with their animated extension (the lowest
leg's, or by the pelvis mode the front one's or their average, no higher than the ground under the body),
following the ground that carries it, and lower still where a foot would be out of reach even with its
heel lifted."""

import numpy as np

from ..errors import SolverError
from .air import bend, extension
from .surface import rise
from .timeline import envelope, fill_gaps, intervals, smooth, smooth_above

#: Weight of the ground under the pelvis against the feet's footing (a foot down weighs 1):
#: it only counts when no foot is down, as in the flight of a run or a jump.
FLIGHT = 0.05
#: Fraction of a leg's length (thigh and shin) the pelvis drop aims for, so knees never lock straight.
LENGTH_MARGIN = 0.995
#: How the body's height follows the legs that carry it (:attr:`.PlantSettings.pelvis_mode`): the lowest keeps
#: its animated bend; the front one does going uphill, the lowest downhill; their average does.
PELVIS_MODES = ("lowest", "front_uphill", "average")
#: Metres per second the body must travel across the ground to have a front foot.
TRAVELLING = 0.1
#: Most a standing foot's heel lifts (the foot turning about its ball) so its leg keeps its animated bend: more
#: would turn the foot off its authored pitch against the ground beyond the 5° the planting limits allow. A mesh's sole
#: lifts none (:func:`..plant`).
MAX_HEEL = np.radians(4.0)
#: Most a standing knee turns in one frame beyond its animated turn (radians): under the 10° the planting
#: limits allow, with room for what :func:`knee_guard` leaves out (the heel's lift eased, the foot lock).
KNEE_TURN = np.radians(6.0)
#: Leg lengths a second: fastest the body moves beyond where it was to keep a standing knee within KNEE_TURN (its
#: ground rising or falling under it); faster, the body would jump, and every leg in the air with it.
GUARD_SPEED = 1.0
#: Metres of that drop too little to see, let go at once.
SETTLED = 1e-4
#: Metres the body, smoothed, may ride above the height its mode asks for (other than the lowest leg's), the
#: legs straightening for it: enough to follow a slope without bobbing, not to pull a leg straight at a step.
OVERSHOOT = 0.02


def support_level(footing, down, under_pelvis, sigma: float) -> np.ndarray:
    """(F,) height of the ground carrying the body: the surface under the feet that are down
    (``footing`` (F, n) where ``down`` (F, n)), else under the pelvis (``under_pelvis`` (F,)),
    smoothed over ``sigma`` frames so the body does not bob from footfall to footfall."""
    weight = np.asarray(down, dtype=np.float64)
    footing = np.where(weight > 0.0, footing, 0.0)
    level = ((weight * footing).sum(axis=1) + FLIGHT * under_pelvis) / (weight.sum(axis=1) + FLIGHT)
    return smooth(level, sigma)


def highest(hips, ankles, extension) -> np.ndarray:
    """(F, n) the highest each leg's hip (F, n, 3) can go, straight up or down, with its ankle
    (F, n, 3) at most ``extension`` (F, n) away; where no height is, the hip's height is level
    with the ankle (as near as it gets)."""
    offset = np.asarray(ankles, dtype=np.float64) - np.asarray(hips, dtype=np.float64)
    across = np.einsum("fni,fni->fn", offset[..., :2], offset[..., :2])
    return offset[..., 2] + np.sqrt(np.maximum(np.asarray(extension) ** 2 - across, 0.0))


def carried_height(ceiling, carries, mode: str, ahead=None) -> np.ndarray:
    """(F,) how far the body moves up where some leg carries it (``carries`` (F, n); elsewhere +inf), from each
    leg's ``ceiling`` (F, n), the rise that keeps it as extended as animated, by ``mode`` (:data:`PELVIS_MODES`):
    the lowest ceiling; the front leg's (``ahead`` (F, n), how far each ankle is along the way the body travels,
    NaN where it does not travel) where it is the highest (uphill), else the lowest; or their average."""
    carries = np.asarray(carries, bool)
    lowest = np.where(carries, ceiling, np.inf).min(axis=1)
    if mode == "lowest":
        return lowest
    count = carries.sum(axis=1)
    if mode == "average":
        return np.where(count > 0, np.where(carries, ceiling, 0.0).sum(axis=1) / np.maximum(count, 1), np.inf)
    if mode != "front_uphill":
        raise SolverError(f"pelvis mode must be one of {', '.join(PELVIS_MODES)}, not {mode!r}")
    known = np.isfinite(ahead).all(axis=1) & (count > 0)
    front = np.argmax(np.where(carries & known[:, None], np.nan_to_num(ahead), -np.inf), axis=1)
    leading = np.take_along_axis(np.asarray(ceiling, np.float64), front[:, None], axis=1)[:, 0]
    top = np.where(carries, ceiling, -np.inf).max(axis=1)
    return np.where(known & (leading >= top), leading, lowest)


def travel_ahead(ankles, pelvis, fps: float, sigma: float) -> np.ndarray:
    """(F, n) how far each ankle (F, n, 3) is ahead of the pelvis (F, 3) along the way the body travels across
    the ground (its motion smoothed over ``sigma`` frames); NaN where it moves slower than :data:`TRAVELLING`."""
    track = smooth(np.asarray(pelvis, np.float64)[:, :2], sigma)
    velocity = np.gradient(track, axis=0) * fps if len(track) > 1 else np.zeros_like(track)
    speed = np.linalg.norm(velocity, axis=1)
    way = velocity / np.maximum(speed, 1e-12)[:, None]
    ahead = np.einsum("fni,fi->fn", np.asarray(ankles)[..., :2] - np.asarray(pelvis)[:, None, :2], way)
    return np.where((speed >= TRAVELLING)[:, None], ahead, np.nan)


def surface_under(footing, normals, points, at, steepest) -> np.ndarray:
    """(F, n) each foot's ground (``footing`` (F, n), the surface's heights at ``points`` (F, n, 3) with upward
    ``normals`` (F, n, 3)) carried on along its own surface to straight below ``at`` (F, 3), no steeper than
    ``steepest`` (F, n) (rise over run: the ground's own there, so a bump under a foot does not tip it): on a
    slope every foot's agrees with the ground there; at a step's edge a foot below it says the lower level."""
    gradient = rise(normals, steepest)
    across = np.asarray(at, np.float64)[:, None, :2] - np.asarray(points, np.float64)[..., :2]
    return np.asarray(footing, np.float64) + np.einsum("fni,fni->fn", gradient, across)


def body_height(
    ceiling, carries, grounded, carrier, sigma: float, flight: int, target=None, overshoot: float | None = None
) -> np.ndarray:
    """(F,) how far the body moves up: to the lowest ``ceiling`` (F, n) of the legs that carry it
    (``carries`` (F, n)), so that leg keeps its animated extension; with feet on the ground but
    none carrying (``grounded`` (F,): lying, sitting), with ``carrier`` (F,), the ground under it.
    Between flights (no foot on the ground for ``flight`` frames or more) the heights are smoothed
    over ``sigma`` frames, centred, and wherever that rises above them, the curve dips to meet them,
    easing in and out: it follows a slope without lag and sinks early for a lower foot. In a flight
    the body is free: it moves from where it leaves the ground to where it lands on a curve that
    keeps its speed at both ends, so each stance keeps the legs' animated bend (a run up a slope
    rises in the air, not by landing on a bent knee). ``target`` (F,), if given, is the height to meet where a
    leg carries instead of the lowest ceiling (:func:`carried_height`); with ``overshoot`` (metres) the heights
    are smoothed, centred, and dip only where that rises more than ``overshoot`` above them."""
    carried = np.asarray(carries, bool).any(axis=1)
    if target is None:
        target = carried_height(ceiling, carries, "lowest")
    target = np.where(carried, target, carrier)
    known = carried | np.asarray(grounded, bool)
    if not known.any():
        return np.asarray(carrier, dtype=np.float64).copy()
    target = fill_gaps(target, known)
    frames = len(target)
    flights = [
        (first, last)
        for first, last in intervals(~known)
        if first >= 1 and last <= frames - 2 and last - first + 1 >= max(flight, 1)
    ]
    height = np.empty(frames)
    free = np.zeros(frames, bool)
    start = 0
    for first, last in [*flights, (frames, frames)]:
        part = target[start:first]
        if overshoot is None:
            height[start:first] = -smooth_above(-part, sigma)
        else:
            smoothed = smooth(part, sigma)
            height[start:first] = smoothed - envelope(np.maximum(smoothed - part - overshoot, 0.0), sigma)
        free[first : last + 1] = True
        start = last + 1
    for first, last in flights:
        # Speeds (per frame) where the body leaves and lands; none where that stance is a frame long.
        leaves = 0.0 if first < 2 or free[first - 2] else height[first - 1] - height[first - 2]
        lands = 0.0 if last > frames - 3 or free[last + 2] else height[last + 2] - height[last + 1]
        height[first : last + 1] = _hermite(height[first - 1], leaves, height[last + 1], lands, last - first + 1)
    return height


def _hermite(start, start_speed, end, end_speed, count: int) -> np.ndarray:
    """(count,) values of the cubic from ``start`` to ``end`` over ``count + 1`` frames, leaving and
    arriving with the given speeds (per frame), at the frames in between."""
    steps = count + 1
    s = np.arange(1, steps) / steps
    start_speed, end_speed = start_speed * steps, end_speed * steps
    return (
        (2 * s**3 - 3 * s**2 + 1) * start
        + (s**3 - 2 * s**2 + s) * start_speed
        + (-2 * s**3 + 3 * s**2) * end
        + (s**3 - s**2) * end_speed
    )


def body_motion(heights, hips, girdle) -> np.ndarray:
    """(F, 4, 4) world transforms moving the body so each girdle's hips rise by its ``heights``
    (F, G): with one girdle straight up or down; with two (a quadruped's hind and front legs,
    ``girdle`` (n,) 0 or 1) also pitched about the body's side axis halfway between the girdles,
    so the front rises more than the hind on a slope up. ``hips`` (F, n, 3) as animated."""
    heights = np.asarray(heights, dtype=np.float64)
    frames = len(heights)
    motion = np.tile(np.eye(4), (frames, 1, 1))
    if heights.shape[1] == 1:
        motion[:, 2, 3] = heights[:, 0]
        return motion
    girdle = np.asarray(girdle)
    centres = np.stack([hips[:, girdle == g].mean(axis=1) for g in (0, 1)], axis=1)  # (F, 2, 3)
    axis = centres[:, 1] - centres[:, 0]
    axis[:, 2] = 0.0
    span = np.linalg.norm(axis, axis=1)
    axis /= np.maximum(span, 1e-12)[:, None]
    middle = centres.mean(axis=1)
    slope = (heights[:, 1] - heights[:, 0]) / np.maximum(span, 1e-12)
    side = np.cross(axis, [0.0, 0.0, 1.0])  # turning about it by a positive angle lifts what is ahead
    rotation = _turns(side, np.arctan(slope))
    motion[:, :3, :3] = rotation
    motion[:, :3, 3] = middle - np.einsum("fij,fj->fi", rotation, middle)
    motion[:, 2, 3] += heights.mean(axis=1)
    return motion


def moved_with(body, points) -> np.ndarray:
    """(F, n, 3) ``points`` (F, n, 3) moved with the body by its (F, 4, 4) transforms ``body`` (:func:`body_motion`)."""
    return np.einsum("fij,fnj->fni", body[:, :3, :3], points) + body[:, None, :3, 3]


def _turns(axis, angle) -> np.ndarray:
    """(F, 3, 3) rotations about unit ``axis`` (F, 3) by ``angle`` (F,) (Rodrigues)."""
    k = np.zeros((len(axis), 3, 3))
    k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -axis[:, 2], axis[:, 1], -axis[:, 0]
    k -= np.swapaxes(k, 1, 2)
    sin, cos = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + sin * k + (1.0 - cos) * (k @ k)


def vertical_drop(hip, goal, length) -> np.ndarray:
    """How far (>= 0) each (F, 3) ``hip`` must move down so that ``goal`` is within ``length`` of it.

    The smaller root of ``|hip - d * up - goal| = length``; when no vertical move can bring the
    goal within reach, the drop that brings the hip level with it (closest approach).
    """
    v = np.asarray(hip, dtype=np.float64) - np.asarray(goal, dtype=np.float64)
    length = np.asarray(length, dtype=np.float64)
    along = v[:, 2]
    discriminant = along * along - np.einsum("ij,ij->i", v, v) + length * length
    drop = np.where(discriminant >= 0.0, along - np.sqrt(np.maximum(discriminant, 0.0)), along)
    return np.maximum(drop, 0.0)


def pelvis_drop(hips, ankles, lengths, animated, down, sigma: float, keep=None) -> np.ndarray:
    """(F,) how far the pelvis goes down so every foot that is down stays within reach.

    ``hips`` and ``ankles`` (F, n, 3) where they will be; ``lengths`` (F, n) each leg's length;
    ``animated`` (F, n) each leg's hip-to-ankle distance as animated. A leg may be as extended as
    it was animated, or up to :data:`LENGTH_MARGIN` of its length, never more; only a foot that is
    down must be reached (one in the air may come up short for a moment). The drop eases in and
    out over about ``sigma`` frames, never less than needed. Where ``keep`` (F, n) is True a leg may be no more
    extended than animated.
    """
    lengths = np.asarray(lengths, dtype=np.float64)
    allowed = np.minimum(np.maximum(animated, LENGTH_MARGIN * lengths), lengths)
    if keep is not None:
        allowed = np.where(keep, np.minimum(animated, allowed), allowed)
    frames, feet = allowed.shape
    needed = np.stack([vertical_drop(hips[:, n], ankles[:, n], allowed[:, n]) for n in range(feet)], axis=1)
    return envelope((needed * np.asarray(down, bool)).max(axis=1, initial=0.0), sigma)


def knee_guard(
    hips,
    ankles,
    animated,
    thigh,
    shin,
    held,
    sigma: float,
    lower: bool,
    room=None,
    fastest: float = 0.0,
    most: float = KNEE_TURN,
) -> np.ndarray:
    """(F,) how much further the body goes down (``lower``) or up (>= 0) so that no leg ``held`` (F, n) on a frame and
    the one before turns its knee in that frame by more than ``most`` beyond its animated turn, straighter (going down
    holds it bent: a body rising onto higher ground while the back foot still stands, or the ground falling away under a
    standing foot) or more bent (going up holds it straight: a body held low while a straight leg comes under it, or the
    ground rising under a standing foot, as under a foot a cycle walked in place slides back over a slope). As far as
    holding the body where it was the frame before does it, and then at most ``fastest`` metres further in a frame (a
    body that jumps to spare one knee pops every other leg; a knee the motion itself turns is the motion's); nor up by
    more than ``room`` (F,), what every standing leg still reaches. It catches up over about ``sigma`` frames, as fast
    as the legs allow, and never lets go by more than ``fastest`` in a frame either (where ``room`` or the legs end it
    sooner, it starts letting go earlier). ``hips`` and ``ankles`` (F, n, 3) where they will be; ``animated`` (F, n)
    each leg's hip-to-ankle distance as animated; ``thigh``, ``shin`` (F, n) its lengths."""
    way = -1.0 if lower else 1.0  # the body's move, and the turn beyond the animated one it holds back
    hips, ankles = np.asarray(hips, np.float64), np.asarray(ankles, np.float64)
    wanted = bend(animated, thigh, shin)
    beyond = bend(np.linalg.norm(hips - ankles, axis=-1), thigh, shin) - wanted
    held = np.asarray(held, bool)
    both = held[1:] & held[:-1]
    starts = list(np.flatnonzero((both & (way * np.diff(beyond, axis=0) > most)).any(axis=1)) + 1)
    height = hips[..., 2].mean(axis=1)
    room = np.full(len(hips), np.inf) if room is None else np.asarray(room, np.float64)
    move = np.zeros(len(hips))
    keep = np.exp(-1.0 / max(sigma, 1.0))  # of the move from one frame to the next, where nothing needs more
    frame = 0
    while starts:
        frame = max(starts.pop(0), frame)
        # From there on, frame by frame, each held leg's bend beyond the animated one on the frame before (the body
        # moved by that frame's move) bounds how far it turns; until the move is back to nothing.
        while 0 < frame < len(hips):
            was, legs = frame - 1, both[frame - 1]
            before = hips[was, legs] - ankles[was, legs]
            before[:, 2] += way * move[was]
            last = bend(np.linalg.norm(before, axis=-1), thigh[was, legs], shin[was, legs]) - wanted[was, legs]
            limit = wanted[frame, legs] + last + way * most
            reach = extension(np.clip(limit, 0.0, np.pi), thigh[frame, legs], shin[frame, legs])
            # The least move that brings the ankle that near (lower) or that far (up); none where no vertical move
            # would (the foot too far ahead or behind: the knee turns whatever the body does).
            apart = hips[frame, legs] - ankles[frame, legs]
            across = np.einsum("ni,ni->n", apart[:, :2], apart[:, :2])
            square = reach**2 - across
            root = np.sqrt(np.maximum(square, 0.0))
            needed = np.where(square >= 0.0, apart[:, 2] - root if lower else root - apart[:, 2], 0.0)
            eased = keep * move[was] if move[was] > SETTLED else 0.0
            level = max(way * (height[was] - height[frame]) + move[was], 0.0)  # the body held where it was
            most_move = min(max(needed.max(initial=0.0), eased), level + fastest, max(room[frame], 0.0))
            # The body moved for one held leg moves the others too: where that would turn another past ``most`` the
            # other way (a body lowered for a landing front leg, bending its partner), the move up to that whose
            # worst turn beyond the limit is least, the furthest of those.
            moves = np.linspace(0.0, most_move, 9)
            up = apart[None, :, 2] + way * moves[:, None]
            turned = bend(np.sqrt(across + up**2), thigh[frame, legs], shin[frame, legs]) - wanted[frame, legs] - last
            worst = np.maximum(np.abs(turned) - most, 0.0).max(axis=1, initial=0.0)
            move[frame] = moves[np.flatnonzero(worst <= worst.min() + 1e-9)[-1]]
            if move[frame] == 0.0:
                break
            frame += 1
    # Nor does the move fall away faster than it may grow (where a leg it held up stops reaching): it lets go earlier.
    if fastest > 0.0:
        for frame in range(len(move) - 2, -1, -1):
            move[frame] = min(move[frame], move[frame + 1] + fastest)
    return move


def heel_lift(hips, ball, ankle, heel, tip, extension, most: float = MAX_HEEL) -> np.ndarray:
    """(...) the least angle (radians, 0 to ``most``) each foot turns heel up about its ``ball`` (..., 3), the
    axis across it (``heel`` to ``tip``, across the ground), to bring its ``ankle`` within ``extension`` of its
    hip (``hips``); where no such angle is, the one that brings it nearest."""
    ball, ankle, hips = (np.asarray(a, np.float64) for a in (ball, ankle, hips))
    axis = _across(heel, tip)
    # The ankle turned by t about the axis: u cos t + (k x u) sin t + k (k.u)(1 - cos t) from the ball; its
    # distance to the hip is within reach where A cos t + B sin t >= D.
    u, h = ankle - ball, hips - ball
    along_u, along_h = np.einsum("...i,...i", axis, u), np.einsum("...i,...i", axis, h)
    a = np.einsum("...i,...i", h, u) - along_h * along_u
    b = np.einsum("...i,...i", h, np.cross(axis, u))
    d = 0.5 * (np.einsum("...i,...i", h, h) + np.einsum("...i,...i", u, u) - np.asarray(extension) ** 2)
    d = d - along_h * along_u
    size = np.maximum(np.hypot(a, b), 1e-12)
    angle = np.arctan2(b, a) - np.arccos(np.clip(d / size, -1.0, 1.0))
    # A leg exactly as extended as asked (one keeping its animated extension) needs none, whatever the rounding.
    return np.where(a >= d - 1e-9, 0.0, np.clip(angle, 0.0, most))


def heel_turn(angle, heel, tip) -> np.ndarray:
    """(..., 4) quaternions turning each foot heel up by ``angle`` (...) about the axis across it (``heel`` to
    ``tip``, across the ground)."""
    axis = _across(heel, tip)
    half = 0.5 * np.asarray(angle, np.float64)[..., None]
    return np.concatenate([np.cos(half), axis * np.sin(half)], axis=-1)


def _across(heel, tip) -> np.ndarray:
    """(..., 3) the horizontal unit axis across each foot (up x heel-to-tip): turning about it lifts the heel."""
    forward = np.asarray(tip, np.float64)[..., :2] - np.asarray(heel, np.float64)[..., :2]
    axis = np.stack([-forward[..., 1], forward[..., 0], np.zeros(forward.shape[:-1])], axis=-1)
    return axis / np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-12)
