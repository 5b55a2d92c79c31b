# SPDX-License-Identifier: GPL-3.0-or-later
"""How well planted feet stand: measured on the pose as it plays back, against the take as authored.

One definition of every figure, the same here, in the demo, the benchmark and the README (and in
the independent measure the tests hold this to). The *ball* is the toe's head, or a toe-less
foot's tail; on a skinned mesh's sole, the lowest of its heel, ball and tip (as played, the one it
stood on as authored while that is within 2 mm of the lowest). A foot is *in contact*
where, as authored, its ball is within 3 cm of its lowest height over the frames measured and moves
slower than 0.3 m/s across the floor (in a cycle walked in place, whose body travels less than
half its legs' length, by its height alone). Then:

* ball height: in contact, how far the ball's height above the surface under it is from its
  authored height above the floor (no less than 0): median and 95th percentile;
* deepest: how far the ankle or the ball goes into the surface on any frame, where it was
  above the floor as authored;
* pitch: in contact, how far the foot's pitch (ankle to ball) against the surface is from its
  authored pitch against the floor, 95th percentile;
* knee pop: the most the knee (thigh to shin) turns in one frame beyond what it turns as authored;
* slide: the farthest the ball moves across the ground during one contact;
* pelvis drop: the most the pelvis sits lower above the ground under it than it was authored
  above the floor;
* pelvis lift: how far the pelvis stands above its authored height (negative: below) on the frame
  where it stands nearest it: a ground far from the authored floor moves the whole body, which the
  figures above, taken against the ground, do not show.

The take as authored is what the last planting bake read, recorded on the rig, so the figures
hold after a bake and in the saved file; without a record, the animation itself, played with
live solving paused. Nothing here calls the planting solver.
"""

import math
from dataclasses import asdict, dataclass

import bpy
import numpy as np

from ...solvers.planting.contacts import DOWN, UP
from .. import plan, timeline
from ..errors import LimbIKError
from ..pose import read_pose
from . import contacts, legs
from .ground import Ground

CONTACT_HEIGHT = 0.03  #: metres above its lowest height a ball in contact may be
CONTACT_SPEED = 0.3  #: metres per second across the floor a ball in contact may move
IN_PLACE = 0.5  #: a body that travels less than this much of its legs' length (pelvis to ankle) walks in place
TIE = 0.002  #: metres: a sole stands on the same point as authored while that point is this close to its lowest
RECORD = "limb_ik_authored"  #: the rig's custom property holding the take as the last planting bake read it


@dataclass
class FootFigures:
    limb: str
    contact_frames: int
    ball_height_median: float  #: metres
    ball_height_p95: float
    deepest: float  #: metres into the surface, any frame
    pitch_p95: float  #: degrees
    knee_pop: float  #: degrees in one frame
    slide: float  #: metres
    frames_without_ground: int  #: frames where the ankle or ball has no surface under it


@dataclass
class FootReport:
    frames: tuple[int, int]
    feet: list[FootFigures]
    pelvis_drop: float  #: metres
    pelvis_lift: float  #: metres, negative below
    authored: str  #: where the authored take came from: "recorded by the last bake" or "the animation"

    def as_dict(self) -> dict:
        """The report as plain data, its words (``lines``) included: what the API returns and the command
        line writes, and prints in another process."""
        return {
            "frames": list(self.frames),
            "feet": [asdict(f) for f in self.feet],
            "pelvis_drop": self.pelvis_drop,
            "pelvis_lift": self.pelvis_lift,
            "authored": self.authored,
            "lines": self.lines(),
        }

    def lines(self) -> list[str]:
        """The report in words: a line per foot, one for the pelvis."""
        feet = [
            f"{f.limb}: {f.contact_frames} contact frames, ball height off by {1e3 * f.ball_height_median:.1f} "
            f"mm (p95 {1e3 * f.ball_height_p95:.1f}), deepest {1e3 * f.deepest:.1f} mm, pitch off by "
            f"{f.pitch_p95:.1f}° (p95), knee pop {f.knee_pop:.1f}°, slide {1e3 * f.slide:.1f} mm"
            + (f", no ground on {f.frames_without_ground} frames" if f.frames_without_ground else "")
            for f in self.feet
        ]
        pelvis = f"pelvis drop {1e3 * self.pelvis_drop:.1f} mm, lift {1e3 * self.pelvis_lift:.1f} mm"
        return [*feet, f"{pelvis} (against {self.authored})"]


def foot_report(
    obj: bpy.types.Object, depsgraph, frame_start: int | None = None, frame_end: int | None = None
) -> FootReport:
    """Measure the planted feet of ``obj`` over a frame range (default: the scene's) of the scene
    ``depsgraph`` evaluates, as they play back now (live planting or baked keys)."""
    planned = plan.make(obj, from_source=True)
    planned.raise_first_problem()
    planting = planned.planting
    if planting is None:
        raise LimbIKError(f"Armature '{obj.name}' has no planted limbs to report on.")
    scene = depsgraph.scene
    start, end = timeline.frame_range(scene, frame_start, frame_end)
    if end < start:
        raise LimbIKError(f"The report's range ends (frame {end}) before it starts (frame {start}).")
    frames = range(start, end + 1)
    played = _track(depsgraph, planting, frames, paused=False)
    authored, source = recorded(obj, planting, frames), "the take recorded by the last planting bake"
    if authored is None:
        authored, source = _track(depsgraph, planting, frames, paused=True), "the animation"
    ground = Ground(planting.ground, timeline.evaluated(depsgraph.view_layer))
    fps = scene.render.fps / scene.render.fps_base
    forced = contacts.forced(obj, planting.feet, frames)
    found = measure(authored, played, ground, np.asarray(frames) / fps, obj.limb_ik.floor_height, forced)
    feet = [_figures(f.limb, n, found) for n, f in enumerate(planting.feet)]
    lift = played["pelvis"][:, 2] - authored["pelvis"][:, 2]
    pelvis_lift = float(lift[np.argmin(np.abs(lift))])
    floor = obj.limb_ik.floor_height
    return FootReport((start, end), feet, _pelvis_drop(authored, played, ground, floor), pelvis_lift, source)


def points(planting: legs.PlantPlan, sample: legs.LegSample) -> dict[str, np.ndarray]:
    """What the figures read of legs sampled over F frames (:func:`.legs.leg_sample`): ankles (F, n, 3), the points
    a sole may stand on (F, n, 3, 3: heel, ball and tip of a skinned mesh's sole; the ball thrice for a bone sole),
    knees (F, n, radians between thigh and shin: 0 straight) and the pelvis (F, 3), in world space."""
    thigh, shin = sample.knees - sample.hips, sample.feet[..., :3, 3] - sample.knees
    cos = np.einsum("...i,...i->...", thigh, shin) / (np.linalg.norm(thigh, axis=-1) * np.linalg.norm(shin, axis=-1))
    on_mesh = np.array([foot.sole is not None for foot in planting.feet])[:, None, None]
    sole = np.stack([sample.heels, sample.balls, sample.tips], axis=-2)
    return {
        "ankle": sample.feet[..., :3, 3],
        "sole": np.where(on_mesh, sole, sample.balls[..., None, :]),
        "knee": np.arccos(np.clip(cos, -1.0, 1.0)),
        "pelvis": sample.pelvis,
    }


def _standing(authored: np.ndarray, played: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The standing point (F, n, 3) of the soles ``authored`` and ``played`` (:func:`points`): the lowest of each;
    the played one the same point as the authored while it is within :data:`TIE` of the lowest."""
    lowest = np.argmin(authored[..., 2], axis=-1)[..., None]
    same = np.take_along_axis(played[..., 2], lowest, axis=-1)[..., 0] <= played[..., 2].min(axis=-1) + TIE
    chosen = np.where(same[..., None], lowest, np.argmin(played[..., 2], axis=-1)[..., None])

    def pick(sole, index):
        return np.take_along_axis(sole, index[..., None], axis=-2)[..., 0, :]

    return pick(authored, lowest), pick(played, chosen)


def _track(depsgraph, planting: legs.PlantPlan, frames, paused: bool) -> dict[str, np.ndarray]:
    """:func:`points` over ``frames`` as the scene plays them (``paused``: with live solving paused)."""
    obj = planting.obj

    def read(depsgraph):
        return legs.leg_sample(planting, read_pose(obj, obj.evaluated_get(depsgraph))).at(0)

    sampled = timeline.step(depsgraph, frames, read, paused=paused)
    return points(planting, legs.LegSample(*(np.array(values) for values in zip(*sampled))))


def record(obj: bpy.types.Object, planting: legs.PlantPlan, frames: range, sample: legs.LegSample) -> None:
    """Keep on ``obj`` the take a planting bake read (``sample``: :func:`.planting.legs.leg_sample` over ``frames``)."""
    obj[RECORD] = {
        "start": frames.start,
        "limbs": [f.limb for f in planting.feet],
        **{
            key: np.ascontiguousarray(value, dtype=np.float64).ravel()
            for key, value in points(planting, sample).items()
        },
    }


def recorded(obj: bpy.types.Object, planting: legs.PlantPlan, frames: range) -> dict[str, np.ndarray] | None:
    """The recorded take over ``frames`` for the legs of ``planting``, or None if there is none that covers them."""
    stored = obj.get(RECORD)
    if stored is None or "sole" not in stored:  # none, or recorded by a version that kept the balls alone
        return None
    limbs = list(stored["limbs"])
    if any(f.limb not in limbs for f in planting.feet):
        return None
    columns = [limbs.index(f.limb) for f in planting.feet]
    count = len(np.asarray(stored["pelvis"])) // 3
    first = frames.start - int(stored["start"])
    if first < 0 or first + len(frames) > count:
        return None
    rows = slice(first, first + len(frames))
    widths = {"ankle": (3,), "sole": (3, 3), "knee": (), "pelvis": None}
    out = {}
    for key, width in widths.items():
        values = np.asarray(stored[key], dtype=np.float64)
        if width is None:
            out[key] = values.reshape(count, 3)[rows]
        else:
            out[key] = values.reshape(count, len(limbs), *width)[rows][:, columns]
    return out


@dataclass
class Measured:
    """The figures' measurements at each of F frames, n feet: what a foot report sums up per foot, and what a
    planting bake holds to the limits (:mod:`.limits`)."""

    contact: np.ndarray  #: (F, n) where the foot stands as authored (its standing point low and slow)
    height: (
        np.ndarray
    )  #: (F, n) metres the standing point is off its authored height above the ground (NaN: not measured)
    pitch: np.ndarray  #: (F, n) radians the foot's pitch is off its authored pitch (NaN: not measured)
    sink: (
        np.ndarray
    )  #: (F, n) metres the ankle or standing point goes into the surface, where above the floor as authored
    turn: np.ndarray  #: (F, n) radians the knee turns since the frame before beyond the authored turn (0 at the first)
    slide: (
        np.ndarray
    )  #: (F, n) metres the standing point has moved across the ground since its contact began (0 off one)
    without_ground: np.ndarray  #: (F, n) where the ankle or the standing point has no surface under it
    travels: bool  #: whether the body travels: else an in-place cycle, whose standing feet slide back by design
    under: np.ndarray  #: (F, n) metres the standing point lies under the floor as authored (0 where above)
    tilt: np.ndarray  #: (F, n) radians the surface under the standing point tilts from level


def measure(authored: dict, played: dict, ground: Ground, seconds: np.ndarray, floor, forced=None) -> Measured:
    """Compare the legs as they play (``played``) with the take as authored (``authored``), both :func:`points` over
    the same F frames, at ``seconds`` (F,) on the take's clock, on ``ground``. ``floor``: the height the take was
    authored on, one for all, or (F, n) under each foot.

    A foot is in contact where, as authored, its standing point is within :data:`CONTACT_HEIGHT` of its lowest
    height over the frames and moves slower than :data:`CONTACT_SPEED` across the floor since the frame before;
    where the body travels less than :data:`IN_PLACE` of its legs' length (a cycle walked in place), by height
    alone; and where the animator forced it down, not where forced up (``forced``: (F, n), :func:`.contacts.forced`)."""
    was_ankle, ankle = authored["ankle"], played["ankle"]
    was_ball, ball = _standing(authored["sole"], played["sole"])
    frames, count = ball.shape[:2]
    floor = np.broadcast_to(np.asarray(floor, dtype=np.float64), (frames, count))
    heights, normals, hit = ground.cast_down(np.stack([ankle, ball]))
    shape = (2, frames, count)
    heights, normals, hit = heights.reshape(shape), normals.reshape(*shape, 3), hit.reshape(shape)
    found = hit.all(axis=0)
    sink = np.maximum(np.stack([heights[0] - ankle[..., 2], heights[1] - ball[..., 2]]), 0.0)
    sink[0][was_ankle[..., 2] < floor] = 0.0
    sink[1][was_ball[..., 2] < floor] = 0.0
    sink = np.where(found, sink.max(axis=0), 0.0)

    pelvis = authored["pelvis"]
    legs_length = np.linalg.norm(was_ankle - pelvis[:, None], axis=-1).max(initial=0.0)
    travels = bool(np.linalg.norm(pelvis[:, :2] - pelvis[:1, :2], axis=1).max(initial=0.0) >= IN_PLACE * legs_length)
    speed = np.linalg.norm(np.diff(was_ball[..., :2], axis=0), axis=-1) / np.diff(seconds)[:, None]
    contact = np.zeros((frames, count), bool)
    low = was_ball[1:, :, 2] < was_ball[..., 2].min(axis=0) + CONTACT_HEIGHT
    contact[1:] = low & (speed < CONTACT_SPEED) if travels else low
    if forced is not None:
        contact = np.where(forced == DOWN, True, np.where(forced == UP, False, contact))
    measured = contact & found
    height = np.abs((ball[..., 2] - heights[1]) - np.maximum(was_ball[..., 2] - floor, 0.0))
    pitch = np.abs(_pitch(was_ankle, was_ball, np.array([0.0, 0.0, 1.0])) - _pitch(ankle, ball, normals[1]))
    turn = np.zeros((frames, count))
    turn[1:] = np.abs(np.diff(played["knee"], axis=0) - np.diff(authored["knee"], axis=0))
    slide = np.zeros((frames, count))
    for n in range(count):
        for first, last in _runs(contact[:, n]):
            moved = ball[first : last + 1, n, :2] - ball[first, n, :2]
            slide[first : last + 1, n] = np.linalg.norm(moved, axis=1)
    return Measured(
        contact,
        np.where(measured, height, np.nan),
        np.where(measured, pitch, np.nan),
        sink,
        turn,
        slide,
        ~found,
        travels,
        np.maximum(floor - was_ball[..., 2], 0.0),
        np.arccos(np.clip(normals[1][..., 2], -1.0, 1.0)),
    )


def _figures(limb: str, n: int, found: Measured) -> FootFigures:
    height, pitch = found.height[:, n], found.pitch[:, n]
    return FootFigures(
        limb,
        int(found.contact[:, n].sum()),
        percentile(height[~np.isnan(height)], 50),
        percentile(height[~np.isnan(height)], 95),
        float(found.sink[:, n].max(initial=0.0)),
        math.degrees(percentile(pitch[~np.isnan(pitch)], 95)),
        math.degrees(float(found.turn[:, n].max(initial=0.0))),
        float(found.slide[:, n].max(initial=0.0)),
        int(found.without_ground[:, n].sum()),
    )


def _pitch(ankle, ball, up) -> np.ndarray:
    """(F, n) radians the ankle-to-ball direction rises against the plane whose normal is ``up``."""
    direction = ball - ankle
    direction = direction / np.linalg.norm(direction, axis=-1, keepdims=True)
    return np.arcsin(np.clip(np.einsum("...i,...i->...", direction, np.broadcast_to(up, direction.shape)), -1.0, 1.0))


def _pelvis_drop(authored, played, ground: Ground, floor: float) -> float:
    heights, _, hit = ground.cast_down(played["pelvis"])
    lower = (authored["pelvis"][:, 2] - floor) - (played["pelvis"][:, 2] - heights)
    return float(max(lower[hit].max(initial=0.0), 0.0))


def _runs(mask) -> list[tuple[int, int]]:
    edges = np.diff(np.concatenate([[0], np.asarray(mask, np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def percentile(values, q: float) -> float:
    """The ``q``-th percentile, taken as the nearest lower rank (as the independent measure does); 0 with no values."""
    values = np.sort(np.asarray(values, dtype=np.float64))
    return float(values[int(q / 100.0 * (len(values) - 1))]) if len(values) else 0.0
