# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a standing foot goes across the ground: where the take has it, unless its sole would straddle an edge.

A take made on flat ground puts its feet anywhere; on the ground they are planted on, a stance may land with its
ball short of a step's riser and its toe over the upper level. Planted where it was, that foot stands on its
toe, its ball in the air over the lower level. Such a stance moves along the foot, as little as it can, to where
the whole sole has footing on one level, and keeps that place while it stands; its swings ease to it and away.
"""

import math

import numpy as np

from .contacts import BALL
from .surface import rise
from .timeline import bridges, intervals

#: Most a stance moves along its foot to find footing, in lengths of its sole (heel to tip): beyond that the take
#: asks for another step, not a shifted one.
MOST = 1.0
#: Steps, in metres, in which a stance is moved to find footing.
STEP = 0.01
#: Metres a stance so moved goes further, where it still has footing there: off the edge by more than a hair, so
#: its swings can come down (or leave) over it before the last (or first) frame.
CLEARANCE = 0.05
#: Rise over run a standing sole may pitch beyond the ground under its ball to rest on what is under its heel or toe
#: (a bump): about 5°, the pitch the planting limits allow; more, and the stance straddles an edge.
PITCH = math.tan(math.radians(5.0))
#: Frames of a long stance at which its footing is tried (spread over it, its ends included).
TRIED = 32


def footing_offsets(points, standing, depth, stood_on, cast_down, steepest: float, height: float) -> np.ndarray:
    """(F, n, 2) how far each of n feet moves across the floor so its sole has footing where it stands.

    ``points`` (F, n, K, 3): each foot's heel, ball, tip and any more points of its sole, where the take has them
    (its lock's hold included); ``standing`` (F, n): where each stands; ``depth`` (F, n, K): how deep each point
    may go into the ground (zero or less: a point the take keys under its floor may stay as deep); ``stood_on``
    (F, n): the height of the ground each ball stood on in the take (the floor, or a raised stance's level), so a
    ball over ground at height ``g`` is lifted by ``g - stood_on``. A standing foot straddles an edge where a point
    of its sole, the foot lifted so and tipped to the ground under its ball (no steeper than ``steepest``, radians),
    would go into the ground further than ``height`` (the contact height) beyond what a pitch of :data:`PITCH`
    raises it. Each stance that straddles one at any frame moves,
    along the foot's heel-to-tip, by the least multiple of :data:`STEP` (up to :data:`MOST` of its sole, either
    way) that leaves it straddling none, then :data:`CLEARANCE` further where that straddles none either; one that
    finds none stays. Between stances the offsets ease from one to the next (smoothstep), before the first and
    after the last they hold."""
    points = np.asarray(points, dtype=np.float64)
    standing = np.asarray(standing, bool)
    frames, count = points.shape[:2]
    offsets = np.zeros((frames, count, 2))
    slope = math.tan(steepest)

    def straddling(sole, allowed, base) -> np.ndarray:
        """(m,) which of m frames' soles (m, K, 3) straddle an edge."""
        heights, normals, hit = cast_down(sole.reshape(-1, 3))
        heights, hit = heights.reshape(sole.shape[:2]), hit.reshape(sole.shape[:2])
        lifted = sole[..., 2] + (heights[:, BALL] - base)[:, None]
        # The foot tips to the ground under its ball (no steeper than ``steepest``), then pitches by up to PITCH.
        gradient = rise(normals.reshape(*sole.shape[:2], 3)[:, BALL], slope)
        offset = sole[..., :2] - sole[:, BALL, None, :2]
        tipped = np.einsum("mki,mi->mk", offset, gradient)
        sinks = heights + allowed - lifted - tipped - PITCH * np.linalg.norm(offset, axis=-1)
        return (hit & hit[:, BALL, None] & (sinks > height)).any(axis=1)

    where = np.zeros((frames, count), bool)  # every standing frame at once, then only the stances that straddle
    if standing.any():
        where[standing] = straddling(points[standing], depth[standing], stood_on[standing])
    for n in range(count):
        for first, last in intervals(standing[:, n]):
            if not where[first : last + 1, n].any():
                continue
            rows = np.unique(np.linspace(first, last, min(last - first + 1, TRIED)).round().astype(int))
            sole, allowed, base = points[rows, n], depth[rows, n], stood_on[rows, n]
            heel_to_tip = (sole[:, 2, :2] - sole[:, 0, :2]).mean(axis=0)
            length = float(np.linalg.norm(heel_to_tip))
            if length <= STEP:
                continue
            along = heel_to_tip / length

            def fits(distance: float, sole=sole, allowed=allowed, base=base, along=along) -> bool:
                return not straddling(sole + np.append(distance * along, 0.0), allowed, base).any()

            tries = np.arange(1, int(MOST * length / STEP) + 1) * STEP
            for distance in np.stack([-tries, tries], axis=1).ravel():  # the nearest first, back before forward
                if fits(distance):
                    clear = distance + math.copysign(CLEARANCE, distance)
                    offsets[first : last + 1, n] = (clear if fits(clear) else distance) * along
                    break
        if offsets[:, n].any():  # between stances, from one's place to the next's
            for first, last, before, after, u in bridges(standing[:, n]):
                start, end = offsets[before, n], offsets[after, n]
                offsets[first : last + 1, n] = start + u[:, None] * (end - start)
    return offsets
