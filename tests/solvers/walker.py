# SPDX-License-Identifier: GPL-3.0-or-later
"""A synthetic two-legged walker with the flaws of real motion capture, in plain numpy.

Each leg runs the same gait cycle, half a cycle apart: a stance from heel strike to toe-off (the
heel lands with the toes up, the foot rocks flat about the heel, stands, then rolls up about the
ball, its toe staying on the floor) and a swing that carries the foot to the next footprint over
a lifted arc. Capture noise on top: a stance foot drifts (slides) a few millimetres to 2 cm,
every foot wobbles a few millimetres (smooth noise, as a filtered marker track does), the toe
joint rests a drawn 0-3 cm above the floor, and a standing foot dips below the floor for one
frame now and then. The pelvis rides as high as the legs allow, as an inverted pendulum does: at
every frame each ankle is within a drawn 95-99% of its leg's length.

Frames: the foot bone's Y axis runs from the ankle to the ball (as a Blender bone's does) and
its translation is the ankle; the toe's Y axis runs from the ball to the tip.
"""

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from solvers.planting import Legs

LEGS = 2


@dataclass(frozen=True)
class Gait:
    """Everything the walker draws: distances in metres, times in seconds, angles in radians."""

    fps: float
    seconds: float  #: length of the take
    speed: float  #: forward speed of the body
    period: float  #: seconds per stride (two steps)
    duty: float  #: fraction of the stride a foot is on the floor (< 0.5: a run, with flights)
    phase: float  #: where in the stride the take starts
    heading: float  #: walking direction, about +Z from +X
    start: tuple[float, float]  #: the pelvis' ground position at frame 0
    floor: float  #: height of the floor the motion is animated on
    thigh: float
    shin: float
    hip_width: float  #: half the distance between the hips
    ankle_height: float  #: ankle above the ball joint when the foot stands flat
    foot_length: float  #: ankle to ball, horizontally, standing flat
    heel_back: float  #: heel behind the ankle
    toe_length: float  #: ball to tip
    toe_rest: tuple[float, float]  #: per leg, the ball joint's height above the floor standing flat
    strike: float  #: toes-up pitch at heel strike (0: the foot lands flat)
    rock: float  #: fraction of the stance spent rocking down onto the ball
    heel_lift: float  #: fraction of the stance, at its end, spent rolling up onto the ball
    toe_off: float  #: toes-down pitch at toe-off
    clearance: float  #: how high the swing lifts the foot
    reach: float  #: the straightest leg is this fraction of thigh + shin
    ease: float  #: seconds the pelvis' rise and fall is smoothed over
    slide: float  #: largest drift of a standing foot
    jitter: float  #: standard deviation of the smooth wobble
    dips: int  #: one-frame dips below the floor per leg, at random frames with the ball down
    dip_depth: float  #: how far below the floor a dip puts the ball, at most
    seed: int  #: for the noise


@dataclass(frozen=True)
class Walk:
    """The walker's legs and its ground truth."""

    gait: Gait
    legs: Legs
    stance: np.ndarray  #: (F, n) heel strike to toe-off
    ball_down: np.ndarray  #: (F, n) the ball on the floor (foot flat or rolling up)
    dipped: np.ndarray  #: (F, n) frames that dip below the floor

    @property
    def frames(self) -> int:
        return len(self.stance)


def smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def about_x(angle) -> np.ndarray:
    """(..., 3, 3) right-handed rotations about +X: a positive angle lifts +Y towards +Z."""
    angle = np.asarray(angle, dtype=np.float64)
    c, s = np.cos(angle), np.sin(angle)
    m = np.zeros(angle.shape + (3, 3))
    m[..., 0, 0] = 1.0
    m[..., 1, 1], m[..., 1, 2], m[..., 2, 1], m[..., 2, 2] = c, -s, s, c
    return m


def about_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def along_y(direction) -> np.ndarray:
    """A bone frame whose Y axis is the unit ``direction`` (3,) in the Y-Z plane, X kept."""
    y = np.asarray(direction, dtype=np.float64) / np.linalg.norm(direction)
    x = np.array([1.0, 0.0, 0.0])
    return np.column_stack([x, y, np.cross(x, y)])


def gaussian(values, sigma: float) -> np.ndarray:
    """(F, ...) ``values`` blurred along the first axis by a Gaussian of ``sigma`` frames, the ends held."""
    values = np.asarray(values, dtype=np.float64)
    radius = int(math.ceil(3 * sigma))
    if radius == 0:
        return values.copy()
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    padded = np.pad(values, [(radius, radius)] + [(0, 0)] * (values.ndim - 1), mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, len(kernel), axis=0)
    return windows @ (kernel / kernel.sum())


def smooth_noise(rng, frames: int, fps: float, size: float, shape=(3,)) -> np.ndarray:
    """(frames, *shape) wobble of standard deviation ``size`` changing over about 60 ms, as a
    marker track that was filtered: white noise blurred by a Gaussian."""
    if size == 0.0 or frames == 0:
        return np.zeros((frames, *shape))
    sigma = max(0.06 * fps, 1.0)
    radius = int(math.ceil(3 * sigma))
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    white = rng.standard_normal((frames + 2 * radius, *shape))
    blurred = np.apply_along_axis(lambda column: np.convolve(column, kernel, mode="valid"), 0, white)
    return size * blurred / max(float(blurred.std()), 1e-12)


class _Leg:
    """One leg's foot over the take: where it stands, rocks, rolls and swings."""

    def __init__(self, g: Gait, n: int, rng, yaw, origin):
        self.g, self.n, self.yaw = g, n, yaw
        self.rest = g.toe_rest[n]
        tip_rest = float(rng.uniform(0.0, 0.004))
        self.toe_pitch = -math.asin(min((self.rest - tip_rest) / g.toe_length, 0.9))  # the tip on the floor
        # The foot standing flat in its own level frame (x right, y forward, z up, the floor at z = 0).
        self.ankle = np.array([0.0, 0.0, self.rest + g.ankle_height])
        self.ball = np.array([0.0, g.foot_length, self.rest])
        self.heel = np.array([0.0, -g.heel_back, 0.0])
        self.bone = along_y(self.ball - self.ankle)
        side = (1.0 if n == 0 else -1.0) * 0.9 * g.hip_width
        self.line = origin + side * (yaw @ np.array([-1.0, 0.0, 0.0])) + np.array([0.0, 0.0, self.rest])
        self.slides = {}
        self.rng = rng

    def footprint(self, k: int) -> np.ndarray:
        """Where stride ``k``'s ball stands on the floor, before it slides."""
        g = self.g
        landing = (k - g.phase - 0.5 * self.n) * g.period
        along = g.speed * (landing + 0.5 * g.duty * g.period) + g.foot_length
        return self.line + along * self.yaw[:, 1]

    def slide(self, k: int) -> np.ndarray:
        """How far stride ``k``'s standing foot drifts, in all."""
        if k not in self.slides:
            angle = self.rng.uniform(0.0, 2.0 * math.pi)
            self.slides[k] = self.rng.uniform(0.0, self.g.slide) * np.array([math.cos(angle), math.sin(angle), 0.0])
        return self.slides[k]

    def pose(self, pitch: float, pivot, at) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World foot rotation, ankle and ball of the foot pitched toes-up by ``pitch`` about the
        level-frame point ``pivot``, which sits at ``at``."""
        turn = self.yaw @ about_x(pitch)
        return turn @ self.bone, at + turn @ (self.ankle - pivot), at + turn @ (self.ball - pivot)

    def at(self, cycle: float):
        """(rotation, ankle, ball, toe pitch, standing, ball down) at ``cycle`` strides into the gait."""
        g = self.g
        k = math.floor(cycle)
        u = cycle - k
        heel_at = self.yaw @ (self.heel - self.ball)  # from the ball to the heel, standing flat
        if u < g.duty:  # stance of stride k: rock flat about the heel, stand, roll up about the ball
            s = u / g.duty
            ball_at = self.footprint(k) + self.slide(k) * smoothstep(s)
            if s < g.rock and g.strike > 0.0:
                pitch = g.strike * (1.0 - smoothstep(s / g.rock))
                return (*self.pose(pitch, self.heel, ball_at + heel_at), self.toe_pitch + pitch, True, False)
            lift = smoothstep((s - (1.0 - g.heel_lift)) / g.heel_lift)
            return (*self.pose(-g.toe_off * lift, self.ball, ball_at), self.toe_pitch, True, True)
        # Swing from stride k's toe-off to stride k + 1's heel strike, the toe straightening early.
        s = (u - g.duty) / (1.0 - g.duty)
        w = smoothstep(s)
        off = self.footprint(k) + self.slide(k)
        _, _, landing = self.pose(g.strike, self.heel, self.footprint(k + 1) + heel_at)
        pitch = -g.toe_off + w * (g.toe_off + g.strike)
        ball = (1.0 - w) * off + w * landing
        ball[2] += g.clearance * math.sin(math.pi * s) ** 2
        rotation, ankle, _ = self.pose(pitch, self.ball, ball)
        return rotation, ankle, ball, self.toe_pitch + pitch * smoothstep(s / 0.3), False, False


def walk(g: Gait) -> Walk:
    """The legs of ``g`` over ``round(g.seconds * g.fps)`` frames."""
    rng = np.random.default_rng(g.seed)
    frames = max(int(round(g.seconds * g.fps)), 2)
    t = np.arange(frames) / g.fps
    yaw = about_z(g.heading)
    forward, left = yaw[:, 1], -yaw[:, 0]  # walking along the yawed +Y, the left leg on the -X side
    origin = np.array([g.start[0], g.start[1], g.floor])

    foot = np.tile(np.eye(4), (frames, LEGS, 1, 1))
    ball, tip = np.zeros((frames, LEGS, 3)), np.zeros((frames, LEGS, 3))
    toe = np.zeros((frames, LEGS, 3, 3))
    stance, ball_down, dipped = (np.zeros((frames, LEGS), bool) for _ in range(3))
    for n in range(LEGS):
        leg = _Leg(g, n, rng, yaw, origin)
        for f in range(frames):
            rotation, ankle, ball[f, n], toe_pitch, stance[f, n], ball_down[f, n] = leg.at(
                t[f] / g.period + g.phase + 0.5 * n
            )
            foot[f, n, :3, :3], foot[f, n, :3, 3] = rotation, ankle
            toe[f, n] = yaw @ about_x(toe_pitch) @ along_y([0.0, 1.0, 0.0])
            tip[f, n] = ball[f, n] + toe[f, n] @ np.array([0.0, g.toe_length, 0.0])

        # Capture noise: a smooth wobble of the whole foot, and one-frame dips of a standing one
        # (each to its own depth, as glitches are).
        wobble = smooth_noise(rng, frames, g.fps, g.jitter)
        candidates = np.flatnonzero(ball_down[1:-1, n]) + 1
        for f in rng.choice(candidates, size=min(g.dips, len(candidates)), replace=False):
            dipped[f, n] = True
            wobble[f, 2] = -leg.rest - rng.uniform(0.003, max(g.dip_depth, 0.003))  # the ball below the floor
        foot[:, n, :3, 3] += wobble
        ball[:, n] += wobble
        tip[:, n] += wobble

    # The pelvis goes forward, wobbling a little; its height at each frame is the highest that keeps
    # every ankle within ``reach`` of its leg's length (a leg as straight as in a real stance: a
    # 16-36 degree knee), smoothed over ``ease`` seconds and lowered by as much as that raised it.
    wobble = smooth_noise(rng, frames, g.fps, 0.3 * g.jitter)
    pelvis = origin[None] + (g.speed * t)[:, None] * forward + wobble
    pelvis += 0.02 * np.sin(2.0 * math.pi * (t / g.period + g.phase))[:, None] * left  # sway
    sides = np.array([1.0, -1.0])[:, None] * g.hip_width * left
    longest = g.reach * (g.thigh + g.shin)
    ankle = foot[..., :3, 3]
    across = np.linalg.norm((ankle - pelvis[:, None] - sides[None])[..., :2], axis=2)
    if (across >= 0.97 * longest).any():
        raise ValueError("a stride too long for these legs")
    highest = (ankle[..., 2] + np.sqrt(longest**2 - across**2)).min(axis=1) - pelvis[:, 2]
    height = gaussian(highest, g.ease * g.fps)
    pelvis[:, 2] += height - max(float((height - highest).max()), 0.0)
    legs = Legs(
        foot=foot,
        ball=ball,
        tip=tip,
        toe=toe,
        hip=pelvis[:, None] + sides[None],
        pelvis=pelvis,
        thigh=np.full((frames, LEGS), g.thigh),
        shin=np.full((frames, LEGS), g.shin),
    )
    return Walk(g, legs, stance, ball_down, dipped)


# ---------------------------------------------------------------------------------------------
# Strategies


def _floats(lo: float, hi: float):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def gaits(draw, gait=("walk", "jog")) -> Gait:
    """A walk (1.6-2.1 steps of 0.45-0.68 m a second: 0.7-1.4 m/s, duty 0.58-0.65) or a jog (2.4-3
    steps of 0.65-1 m a second: 1.6-3 m/s, duty 0.32-0.42, with flights), at 24-120 fps, for 1.5-2.5 s;
    every leg 0.76-0.96 m long, its straightest at 95-99% of that."""
    kind = draw(st.sampled_from(gait))
    walking = kind == "walk"
    steps = draw(_floats(1.6, 2.1) if walking else _floats(2.4, 3.0))  # steps a second
    step = draw(_floats(0.45, 0.68) if walking else _floats(0.65, 1.0))  # metres a step
    return Gait(
        fps=float(draw(st.integers(24, 120))),
        seconds=draw(_floats(1.5, 2.5)),
        speed=steps * step,
        period=2.0 / steps,
        duty=draw(_floats(0.58, 0.65) if walking else _floats(0.32, 0.42)),
        phase=draw(_floats(0.0, 1.0)),
        heading=draw(_floats(0.0, 2.0 * math.pi)),
        start=(draw(_floats(-1.0, 1.0)), draw(_floats(-1.0, 1.0))),
        floor=draw(st.sampled_from([0.0, 0.0, 0.0, 0.25, -0.4])),
        thigh=draw(_floats(0.38, 0.48)),
        shin=draw(_floats(0.38, 0.48)),
        hip_width=draw(_floats(0.07, 0.11)),
        ankle_height=draw(_floats(0.06, 0.09)),
        foot_length=draw(_floats(0.12, 0.16)),
        heel_back=draw(_floats(0.04, 0.07)),
        toe_length=draw(_floats(0.04, 0.07)),
        toe_rest=(draw(_floats(0.0, 0.03)), draw(_floats(0.0, 0.03))),
        strike=math.radians(draw(_floats(0.0, 15.0) if walking else _floats(0.0, 6.0))),
        rock=draw(_floats(0.1, 0.2)),
        heel_lift=draw(_floats(0.25, 0.5)),
        toe_off=math.radians(draw(_floats(20.0, 40.0))),
        clearance=draw(_floats(0.04, 0.1) if walking else _floats(0.08, 0.16)),
        reach=draw(_floats(0.95, 0.99)),
        ease=draw(_floats(0.02, 0.06)),
        slide=draw(_floats(0.0, 0.02)),
        jitter=draw(_floats(0.0, 0.003)),
        # Up to two dips a leg here; test_locked_feet_do_not_slide_with_scattered_dips draws three to eight.
        dips=draw(st.integers(0, 2)),
        dip_depth=draw(_floats(0.003, 0.02)),
        seed=draw(st.integers(0, 2**32 - 1)),
    )
