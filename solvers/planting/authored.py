# SPDX-License-Identifier: GPL-3.0-or-later
"""The ground a take was authored on, under each foot: not assumed flat.

Planting keeps a standing foot's height above the ground it stood on in the source as its height
above the surface it is planted on. Where the authored ground is given (a capture stage's blocks
and ramps, a set's stairs), that ground is its height under each sole point, the floor where it has
none. Otherwise it is read from the stances: a foot resting higher than the contact height above where
its sole rests on the floor, for a moment the only foot of its girdle resting (so it carries the body:
not a foot held up while the other stands; a stance the take cuts off may have that moment outside it),
stands on something that high, with the clearance its sole has on the floor; one resting more than
:data:`RAISED` contact heights up only beside another is held up. A foot that never rests on the floor
(every step on blocks) has the clearance of the other feet of its girdle.

Either way the result is how far the source ground under each sole point is above the floor,
``raised`` (F, n, P): the sole's heights less it are heights over a flat floor, where contacts are
found as on a flat floor. Where every stance is on the floor it is zero: planting as on a flat floor.
"""

import math

import numpy as np

from .contacts import BALL, MAX_GAP, REST_TIME, SWING_TOP, TIP, contact_level, holders, horizontal_speed
from .timeline import intervals

#: A foot resting this many contact heights above its sole's floor level, never the only foot of its girdle resting,
#: is held up beside the one that stands (a hoof cocked through an idle); less, it is a floor's unevenness beside the
#: other foot (neither held up nor a stance). Resting alone, a foot above its floor's contact band stands.
RAISED = 2.0
#: Seconds a sole point must rest on its lowest level for that to be its own floor level (four times what makes a
#: rest): shorter, it may be a landing the take cuts off, still settling; the other feet's level is the better guess.
FLOOR_TIME = 4 * REST_TIME
#: A standing foot this far under its floor (a fraction of its leg's length) stands on nothing the
#: take shows: a floor set wrong, or a ground missing from the authored ground.
UNDER = 0.1


def stance_raise(
    sole, reach, fps: float, floor: float, contact_height: float, contact_speed: float, girdle, carries
) -> tuple[np.ndarray, np.ndarray]:
    """(F, n) how far above the floor each of n feet stands in the source, read from its (F, n, P, 3) ``sole``
    points: zero but around raised stances, where it is the stance's rise over the foot's floor level, from
    landing to lift-off; and (F, n) where a foot rests that high without standing there, held up beside a foot on
    the floor (its own lowest rest, if it never comes lower, is no contact level). ``reach`` (n,): each leg's
    length; ``floor``: the take's floor height; ``girdle`` (n,) or None as in :class:`.Legs`; ``carries`` (F, n): the
    leg points down."""
    sole = np.asarray(sole, dtype=np.float64)
    frames, feet, points = sole.shape[:3]
    window = max(3, math.ceil(REST_TIME * fps))
    tolerance = 0.5 * contact_height
    height = sole[..., 2]
    resting = _rest_levels(height, sole[..., :2], window, tolerance, contact_speed * (window - 1) / fps)
    girdle = np.zeros(feet, int) if girdle is None else np.asarray(girdle)
    least = max(2 * window, round(FLOOR_TIME * fps))
    highest = SWING_TOP * np.asarray(reach, np.float64)
    reference, known = _floor_levels(resting, height, window, tolerance, contact_height, girdle, least, highest)
    rests = np.isfinite(resting).any(axis=2)  # (F, n)
    slow = (horizontal_speed(sole, fps) <= contact_speed).any(axis=2)
    raised = np.zeros((frames, feet))
    aloft = np.zeros((frames, feet), bool)
    gap = max(1, round(MAX_GAP * fps))
    for n in range(feet):
        others = rests[:, (girdle == girdle[n]) & (np.arange(feet) != n)].any(axis=1)
        for first, last in intervals(rests[:, n]):
            # A landing the take's end cuts off may still be settling: its lowest rest, so that it floats, not sinks.
            rest = np.where(known[n], resting[first : last + 1, n], np.inf)
            rises = _rises(rest, reference[n], tolerance, 2 * window, last == frames - 1)
            rise = _rise(rises, tolerance)
            carrying = carries[first : last + 1, n]
            # Alone on its girdle for a moment, or cut off by one of the take's ends (the moment may be outside it); a
            # foot at rest from the take's first frame to its last beside another on the floor is held up, not on a
            # block: a horse's hind hoof cocked through an idle, which planted as a stance would take the body down.
            cut_off = (first == 0) != (last == frames - 1)
            alone = (carrying & ~others[first : last + 1]).any() or (carrying.any() and cut_off)
            # Resting above its floor's contact band and on the floor (not a sole keyed into it, less deep), its
            # whole sole clear of its floor level, the only foot of its girdle resting stands there: no other foot
            # carries the body (a take captured on a floor a few centimetres uneven, or drifting up). Higher than
            # RAISED contact heights, the ball alone says so.
            if rise <= contact_height:
                continue
            low = rest[np.isfinite(rest)].min(initial=np.inf)
            if rise <= RAISED * contact_height and (
                not alone or low <= floor or min(rises.values(), default=0.0) <= tolerance
            ):
                continue
            if not alone:
                aloft[first : last + 1, n] = True
                continue
            # Landing and lift-off: on that level's contact band, and slow (a foot stepping off the block's edge
            # at its height is in the air).
            band = (np.abs((height[:, n] - reference[n]).min(axis=1) - rise) <= contact_height) & slow[:, n]
            while first > 0 and band[first - 1] and not rests[first - 1, n]:  # landing
                first -= 1
            while last < frames - 1 and band[last + 1] and not rests[last + 1, n]:  # lift-off
                last += 1
            raised[first : last + 1, n] = rise
        # A capture dip of a frame or two within a stance splits its rest: the stance stays on its level.
        for first, last in intervals(raised[:, n] == 0.0):
            inside = first > 0 and last < frames - 1 and last - first < gap
            if inside and abs(raised[first - 1, n] - raised[last + 1, n]) <= tolerance:
                raised[first : last + 1, n] = raised[first - 1, n]
    return raised, aloft


def _floor_levels(
    resting, height, window: int, tolerance: float, contact_height: float, girdle, least: int, highest
) -> tuple[np.ndarray, np.ndarray]:
    """(n, P) each sole point's level on the floor: where it :func:`settled` at its lowest rests, if it rests there
    for ``least`` frames and not :data:`RAISED` contact heights above the other feet of its girdle; else (a
    foot that never stands on the floor, or only lands on it as the take ends) the lowest such level of its
    girdle. And (n, P) which levels are known so: where no foot of the girdle rests a point that long (a heel
    that lifts whenever it is on the floor), its lowest height is no floor level to measure a block by. A point that
    never rests so has its :func:`.contacts.contact_level`, not counting rests more than ``highest`` (n,) above where
    it goes (a hoof folded still at the top of a gallop's swing), as contacts are found."""
    feet, points = resting.shape[1:]
    level, trusted = np.empty((feet, points)), np.zeros((feet, points), bool)
    for n in range(feet):
        for p in range(points):
            rests = resting[:, n, p]
            if np.isfinite(rests).any():
                level[n, p] = settled(rests, tolerance)
                trusted[n, p] = (rests <= level[n, p] + tolerance).sum() >= least
            else:
                level[n, p] = contact_level(height[:, n, p], window, tolerance, highest[n])
    reference = level.copy()
    for n in range(feet):
        same = girdle == girdle[n]
        for p in range(points):
            known = level[same & trusted[:, p], p]
            lowest = known.min() if len(known) else level[same, p].min()
            if not trusted[n, p] or level[n, p] - lowest > RAISED * contact_height:
                reference[n, p] = lowest
    known = np.array([[trusted[girdle == girdle[n], p].any() for p in range(points)] for n in range(feet)])
    return reference, known


def _rises(resting, reference, tolerance: float, least: int, cut_off: bool) -> dict[int, float]:
    """How far each point of one foot's rest, ``resting`` (m, P) as :func:`_rest_levels` gives it, that rests
    ``least`` frames or more is above its sole's ``reference`` (P,) on the floor, where it :func:`settled` (the
    lowest rest if the rest is ``cut_off`` by the take's end), by point index. The least of them is how far the
    whole sole is up (a ball whose floor level was read on tiptoe, lower than where it rests flat, is not a foot on
    something)."""
    rests = np.flatnonzero(np.isfinite(resting).sum(axis=0) >= least)
    return {p: settled(resting[:, p], tolerance, cut_off) - reference[p] for p in rests}


def _rise(rises: dict[int, float], tolerance: float) -> float:
    """How far one foot's rest is up, from its points' :func:`_rises`: at the ball (a real joint, where the heel is
    derived) if that rests long enough, else the least of the other points that do (the lower guess: a foot put a
    little high floats, one put low sinks); 0 (the floor) where none does (a foot slowing as it lands rests a
    moment, high). A foot whose tip rests within ``tolerance`` of its floor level stands on the floor, however high
    its ball (a hoof standing on its tip)."""
    if TIP in rises and rises[TIP] <= tolerance:
        return min(rises[TIP], rises.get(BALL, np.inf))
    return rises[BALL] if BALL in rises else min(rises.values(), default=0.0)


def settled(levels, tolerance: float, lowest: bool = False) -> float:
    """Where a point settles among its rest ``levels`` (inf: not resting): the median of those within ``tolerance``
    of the lowest, so neither a dip of a frame or two, nor a foot still coming down as it lands, nor a roll off the
    edge sets it; the lowest itself where ``lowest`` (a stance the take's end cuts off may still be settling: put
    a little high, a foot floats; put low, it sinks)."""
    levels = np.asarray(levels)[np.isfinite(levels)]
    return float(levels.min() if lowest else np.median(levels[levels <= levels.min() + tolerance]))


def _rest_levels(height, xy, window: int, tolerance: float, spread: float) -> np.ndarray:
    """(F, n, P) the height each of the (F, n, P) ``height`` tracks rests at at each frame (one-frame dips taking
    their neighbours' height), inf where it does not rest: within ``tolerance`` for ``window`` frames running
    around it, its (F, n, P, 2) ``xy`` within ``spread`` of where those frames start."""
    frames = len(height)
    if frames < window:
        return np.full(height.shape, np.inf)
    clean = height.copy()
    if frames > 2:  # a one-frame dip takes the lower of its neighbours
        clean[1:-1] = np.minimum(np.maximum(height[:-2], height[1:-1]), np.maximum(height[1:-1], height[2:]))
    windows = np.lib.stride_tricks.sliding_window_view(clean, window, axis=0)
    still = windows.max(axis=-1) - windows.min(axis=-1) <= tolerance
    drift = np.lib.stride_tricks.sliding_window_view(xy, window, axis=0) - xy[: frames - window + 1, ..., None]
    still &= np.linalg.norm(drift, axis=-2).max(axis=-1) <= spread
    covered = np.zeros(height.shape, bool)
    for offset in range(window):
        covered[offset : offset + len(still)] |= still
    return np.where(covered, clean, np.inf)


def standing_under(stance, relative, floor: float, legs_length) -> np.ndarray:
    """(F, n) frames where a foot stands (``stance`` (F, n, P)) with its holding point more than :data:`UNDER`
    of its leg's length (``legs_length`` (n,)) under the ground it stood on, ``relative`` (F, n, P) being its
    points' heights with that ground's rise over the ``floor`` taken off."""
    holder = holders(stance)[..., None]
    depth = floor - np.take_along_axis(np.asarray(relative), holder, axis=2)[..., 0]
    return stance.any(axis=2) & (depth > UNDER * np.asarray(legs_length)[None])


def authored_raise(sole, authored, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """(F, n, P) how far the authored ground (a :data:`.CastDown`) is above the ``floor`` under each of the
    (F, n, P, 3) ``sole`` points, zero where it has no surface; and (F, n, 3) its upward normal under each
    ball, +Z where none."""
    sole = np.asarray(sole, dtype=np.float64)
    shape = sole.shape[:3]
    heights, normals, hit = authored(sole.reshape(-1, 3))
    heights, hit, normals = heights.reshape(shape), hit.reshape(shape), normals.reshape(*shape, 3)
    raised = np.where(hit, heights - floor, 0.0)
    return raised, np.where(hit[..., BALL, None], normals[:, :, BALL], [0.0, 0.0, 1.0])
