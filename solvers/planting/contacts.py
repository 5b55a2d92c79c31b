# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the motion has a foot on the floor, and the foot lock that keeps it still there.

Real motion capture does not put a foot exactly on the floor: the toe joint rests a few
centimetres above it, a heel a little more, and both jitter. So each sole point gets its own
contact level, the height it rests at in the clip, and a point is *down* when it is within the
contact height of that level. A point that is down and slow *stands*; the foot is locked on its
standing point, the ball first.
"""

from dataclasses import dataclass

import numpy as np

from .timeline import clean, intervals, smoothstep

#: Sole points, in the order every (…, P, 3) array holds them.
HEEL, BALL, TIP = 0, 1, 2
#: Which standing point holds the foot: the ball, where a foot pivots and pushes off, then the tip, then the heel.
LOCK_ORDER = (BALL, TIP, HEEL)
#: Seconds a point must rest at a height for that height to be its contact level.
REST_TIME = 0.05
#: A point resting more than this fraction of its leg's length above where it goes is at the top of a swing.
SWING_TOP = 0.25
#: Seconds: shorter touches are noise, and so are shorter lifts within a contact.
MIN_CONTACT, MAX_GAP = 0.03, 0.02
#: Seconds: down no longer than this before its first stance or after its last, a foot lands or lifts.
LIFT_TIME = 0.1
#: The animator's word on a frame of a foot (the (F, n) ``forced`` arrays): as the motion says, down, up.
AUTO, DOWN, UP = 0, 1, -1


@dataclass(frozen=True)
class Contacts:
    """Per frame and foot: ``down`` (F, n), some sole point at its contact level; ``stance``
    (F, n, P), which points stand (down and slow); ``clearance`` (F, n, P), each point's height
    above its contact level; ``level`` (n, P), the contact levels (world heights); ``pressed`` (F, n),
    where a foot stands only because it is forced down."""

    down: np.ndarray
    stance: np.ndarray
    clearance: np.ndarray
    level: np.ndarray
    pressed: np.ndarray


def contact_level(height, frames: int, tolerance: float, highest: float = np.inf) -> float:
    """The lowest height that ``height`` (F,) rests at for ``frames`` frames running (within
    ``tolerance``): a point's height when it stands, ignoring one-frame dips (capture glitches),
    however many there are and however deep, and longer dips deeper than ``tolerance``; the lowest
    height of all for a point that never rests, or rests only more than ``highest`` above where it goes
    (one-frame dips gone): a hoof folded still at the top of a gallop's swing is not on its floor."""
    height = np.asarray(height, dtype=np.float64)
    held = np.maximum(height[:-1], height[1:]) if len(height) > 1 else height  # one-frame dips gone
    frames = min(max(frames, 1), len(held))
    windows = np.lib.stride_tricks.sliding_window_view(held, frames)
    low, high = windows.min(axis=1), windows.max(axis=1)
    resting = (high - low <= tolerance) & (low <= held.min() + highest)
    return float(low[resting].min() if resting.any() else height.min())


def find_contacts(sole, reach, fps: float, contact_height: float, contact_speed: float, forced=None) -> Contacts:
    """Contacts of the (F, n, P, 3) world sole points of n feet, whose legs are ``reach`` (n,) long, sampled at
    ``fps``; where ``forced`` (F, n; :data:`DOWN`, :data:`UP` or :data:`AUTO`) says so, a foot stands (on its
    standing points, else its ball) or is up, whatever the motion shows. A point resting more than :data:`SWING_TOP`
    of its leg above where it goes is at the top of a swing, not on its floor."""
    sole = np.asarray(sole, dtype=np.float64)
    frames, feet, points = sole.shape[:3]
    rest = max(3, int(np.ceil(REST_TIME * fps)))
    highest = SWING_TOP * np.asarray(reach, np.float64)
    level = np.array(
        [
            [contact_level(sole[:, n, p, 2], rest, 0.5 * contact_height, highest[n]) for p in range(points)]
            for n in range(feet)
        ]
    ).reshape(feet, points)
    clearance = sole[..., 2] - level[None]
    down_points = clearance <= contact_height
    speed = horizontal_speed(sole, fps)
    min_frames, max_gap = max(2, round(MIN_CONTACT * fps)), max(1, round(MAX_GAP * fps))
    stance = np.empty_like(down_points)
    down = np.empty((frames, feet), bool)
    for n in range(feet):
        for p in range(points):
            stance[:, n, p] = clean(down_points[:, n, p] & (speed[:, n, p] <= contact_speed), min_frames, max_gap)
        down[:, n] = clean(down_points[:, n].any(axis=1), min_frames, max_gap)
    pressed = np.zeros((frames, feet), bool)
    if forced is not None:
        forced = np.asarray(forced)
        pressed = (forced == DOWN) & ~stance.any(axis=2)
        stance[..., BALL] |= pressed
        down |= forced == DOWN
        stance[forced == UP] = False
        down[forced == UP] = False
    return Contacts(down, stance, clearance, level, pressed)


def horizontal_speed(points, fps: float) -> np.ndarray:
    """(F, …) horizontal speed of (F, …, 3) points: the slower of the steps into and out of each
    frame, so a point that arrives or leaves slowly is still at that frame (the first and last
    frames of a contact count)."""
    if len(points) < 2:
        return np.zeros(points.shape[:-1])
    step = np.linalg.norm(np.diff(points[..., :2], axis=0), axis=-1) * fps
    into = np.concatenate([step[:1], step])
    out_of = np.concatenate([step, step[-1:]])
    return np.minimum(into, out_of)


def lock_offsets(sole_xy, stance, release_frames: float, most=np.inf, fastest=np.inf) -> np.ndarray:
    """(F, 2) horizontal corrections that hold one foot still while it stands.

    ``sole_xy`` (F, P, 2) and ``stance`` (F, P) of one foot. On each standing frame after the
    first, the correction cancels the step its holding point (:data:`LOCK_ORDER`) took since the
    frame before, so that point stays where it stood; a foot pivoting on its ball keeps the ball
    still. Once the ball has stood and no longer does, the foot is rolling off its toe to leave: a step
    of the toe longer than ``fastest``, more than a standing point moves in a frame, is that roll, and is
    not cancelled, or the lock would jolt the foot by it in one frame (a landing's slide, before the ball
    is down, still is). A correction never grows beyond ``most``: a foot the animation drags further
    than a capture's slide is being moved, and goes with it. ``most`` and ``fastest``: a length, or one
    per frame. After lift-off the correction eases back to zero over ``release_frames``; a new contact
    within that time carries on from where the easing is, so nothing jumps.
    """
    sole_xy = np.asarray(sole_xy, dtype=np.float64)
    stance = np.asarray(stance, bool)
    standing = stance.any(axis=1)
    holder = holders(stance)
    offsets = np.zeros((len(stance), 2))
    most = np.broadcast_to(np.asarray(most, dtype=np.float64), len(stance))
    fastest = np.broadcast_to(np.asarray(fastest, dtype=np.float64), len(stance))
    correction = np.zeros(2)
    at_lift, since_lift, ball_stood = None, 0, False
    for frame in range(len(stance)):
        if standing[frame]:
            if frame > 0 and standing[frame - 1]:
                p = holder[frame]
                step = sole_xy[frame, p] - sole_xy[frame - 1, p]
                rolling = ball_stood and not stance[frame, BALL]
                if not (rolling and np.linalg.norm(step) > fastest[frame]):
                    correction = correction - step
                length = np.linalg.norm(correction)
                if length > most[frame]:
                    correction = correction * (most[frame] / length)
            ball_stood |= stance[frame, BALL]
            at_lift = None
        else:
            ball_stood = False
            if at_lift is not None or (frame > 0 and standing[frame - 1]):
                if at_lift is None:
                    at_lift, since_lift = correction, 0
                since_lift += 1
                correction = at_lift * (1.0 - smoothstep(since_lift / max(release_frames, 1.0)))
                if since_lift >= release_frames:
                    at_lift = None
        offsets[frame] = correction
    return offsets


def sliding(contacts: Contacts, contact_height: float, fps: float) -> np.ndarray:
    """(F, n) frames where a foot slides along the floor without standing: while it is down and never
    stands (an in-place cycle, a landing that slides through), or when it is within half the contact
    height of its level. Such a foot must still follow the ground; one higher in the contact band is
    landing or lifting, and so is one before a contact's first stance or after its last that is down
    there no longer than :data:`LIFT_TIME`, or whose ball is up (its toe still low as the ball leaves)."""
    standing = contacts.stance.any(axis=2)
    low = contacts.clearance.min(axis=2) <= 0.5 * contact_height
    ball_low = contacts.clearance[..., BALL] <= 0.5 * contact_height
    slide = contacts.down & ~standing & low
    for n in range(slide.shape[1]):
        for first, last in intervals(contacts.down[:, n]):
            stands = np.flatnonzero(standing[first : last + 1, n])
            if not len(stands):
                slide[first : last + 1, n] = True
                continue
            for span in (slice(first, first + stands[0]), slice(first + stands[-1] + 1, last + 1)):
                if span.stop - span.start <= LIFT_TIME * fps:
                    slide[span, n] = False
                else:
                    slide[span, n] &= ball_low[span, n]
    return slide


def holders(stance) -> np.ndarray:
    """(…,) the sole point holding each foot from its (…, P) standing points, in :data:`LOCK_ORDER`;
    the ball where none stands."""
    stance = np.asarray(stance, bool)
    holder = np.full(stance.shape[:-1], BALL)
    for point in reversed(LOCK_ORDER):
        holder = np.where(stance[..., point], point, holder)
    return holder
