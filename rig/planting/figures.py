# SPDX-License-Identifier: GPL-3.0-or-later
"""How well planted feet stand: measured on the pose as it plays back, against the take as authored.

One definition of every figure, the same here, in the demo, the benchmark and the README (and in
the independent measure the tests hold this to). The *ball* is the toe's head, or a toe-less
foot's tail; a foot is *in contact* where, as authored, its ball is within 3 cm of its lowest
height over the frames measured and moves slower than 0.3 m/s across the floor. Then:

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

from .. import plan, timeline
from ..errors import LimbIKError
from ..pose import read_pose
from . import legs
from .ground import Ground

CONTACT_HEIGHT = 0.03  #: metres above its lowest height a ball in contact may be
CONTACT_SPEED = 0.3  #: metres per second across the floor a ball in contact may move
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
    floor = obj.limb_ik.floor_height
    feet = [_figures(f.limb, n, authored, played, ground, fps, floor) for n, f in enumerate(planting.feet)]
    lift = played["pelvis"][:, 2] - authored["pelvis"][:, 2]
    pelvis_lift = float(lift[np.argmin(np.abs(lift))])
    return FootReport((start, end), feet, _pelvis_drop(authored, played, ground, floor), pelvis_lift, source)


def _track(depsgraph, planting: legs.PlantPlan, frames, paused: bool) -> dict[str, np.ndarray]:
    """Ankles, balls and knees (F, n, …) and the pelvis (F, 3) in world space over ``frames``."""
    obj = planting.obj

    def read(depsgraph):
        sample = legs.leg_sample(planting, read_pose(obj, obj.evaluated_get(depsgraph))).at(0)
        return sample.feet[:, :3, 3], sample.balls, _knees(sample), sample.pelvis

    ankles, balls, knees, pelvis = (np.array(c) for c in zip(*timeline.step(depsgraph, frames, read, paused=paused)))
    return {"ankle": ankles, "ball": balls, "knee": knees, "pelvis": pelvis}


def _knees(sample: legs.LegSample) -> np.ndarray:
    """(n,) radians between each thigh (hip to knee) and shin (knee to ankle): 0 straight; (F, n) over frames."""
    thigh, shin = sample.knees - sample.hips, sample.feet[..., :3, 3] - sample.knees
    cos = np.einsum("...i,...i->...", thigh, shin) / (np.linalg.norm(thigh, axis=-1) * np.linalg.norm(shin, axis=-1))
    return np.arccos(np.clip(cos, -1.0, 1.0))


def record(obj: bpy.types.Object, planting: legs.PlantPlan, frames: range, sample: legs.LegSample) -> None:
    """Keep on ``obj`` the take a planting bake read (``sample``: :func:`.planting.legs.leg_sample` over ``frames``)."""
    track = {"ankle": sample.feet[..., :3, 3], "ball": sample.balls, "knee": _knees(sample), "pelvis": sample.pelvis}
    obj[RECORD] = {
        "start": frames.start,
        "limbs": [f.limb for f in planting.feet],
        **{key: value.ravel().tolist() for key, value in track.items()},
    }


def recorded(obj: bpy.types.Object, planting: legs.PlantPlan, frames: range) -> dict[str, np.ndarray] | None:
    """The recorded take over ``frames`` for the legs of ``planting``, or None if there is none that covers them."""
    stored = obj.get(RECORD)
    if stored is None:
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
    widths = {"ankle": 3, "ball": 3, "knee": 0, "pelvis": None}
    out = {}
    for key, width in widths.items():
        values = np.asarray(stored[key], dtype=np.float64)
        if width is None:
            out[key] = values.reshape(count, 3)[rows]
        else:
            shaped = values.reshape(count, len(limbs), width) if width else values.reshape(count, len(limbs))
            out[key] = shaped[rows][:, columns]
    return out


def _figures(limb: str, n: int, authored, played, ground: Ground, fps: float, floor: float) -> FootFigures:
    was_ankle, was_ball = authored["ankle"][:, n], authored["ball"][:, n]
    ankle, ball = played["ankle"][:, n], played["ball"][:, n]
    frames = len(ball)
    heights, normals, hit = ground.cast_down(np.concatenate([ankle, ball]))
    ankle_ground, ball_ground = heights[:frames], heights[frames:]
    ball_normal, found = normals[frames:], hit[:frames] & hit[frames:]

    sink = np.concatenate(
        [
            (ankle[:, 2] - ankle_ground)[found & (was_ankle[:, 2] >= floor)],
            (ball[:, 2] - ball_ground)[found & (was_ball[:, 2] >= floor)],
        ]
    )
    step = np.linalg.norm(np.diff(was_ball[:, :2], axis=0), axis=1) * fps
    contact = np.zeros(frames, bool)
    contact[1:] = (was_ball[1:, 2] < was_ball[:, 2].min() + CONTACT_HEIGHT) & (step < CONTACT_SPEED)
    measured = contact & found
    height = np.abs((ball[:, 2] - ball_ground) - np.maximum(was_ball[:, 2] - floor, 0.0))[measured]
    pitch = np.abs(_pitch(was_ankle, was_ball, np.array([0.0, 0.0, 1.0])) - _pitch(ankle, ball, ball_normal))
    turn = np.diff(played["knee"][:, n]) - np.diff(authored["knee"][:, n])
    slide = 0.0
    for first, last in _runs(contact):
        slide = max(slide, float(np.linalg.norm(ball[first : last + 1, :2] - ball[first, :2], axis=1).max()))
    return FootFigures(
        limb,
        int(contact.sum()),
        _percentile(height, 50),
        _percentile(height, 95),
        float(max(-sink.min(), 0.0)) if len(sink) else 0.0,
        math.degrees(_percentile(pitch[measured], 95)),
        math.degrees(float(np.abs(turn).max())) if len(turn) else 0.0,
        slide,
        int((~found).sum()),
    )


def _pitch(ankle, ball, up) -> np.ndarray:
    """(F,) radians the ankle-to-ball direction rises against the plane whose normal is ``up``."""
    direction = ball - ankle
    direction = direction / np.linalg.norm(direction, axis=1, keepdims=True)
    return np.arcsin(np.clip(np.einsum("fi,fi->f", direction, np.broadcast_to(up, direction.shape)), -1.0, 1.0))


def _pelvis_drop(authored, played, ground: Ground, floor: float) -> float:
    heights, _, hit = ground.cast_down(played["pelvis"])
    lower = (authored["pelvis"][:, 2] - floor) - (played["pelvis"][:, 2] - heights)
    return float(max(lower[hit].max(initial=0.0), 0.0))


def _runs(mask) -> list[tuple[int, int]]:
    edges = np.diff(np.concatenate([[0], np.asarray(mask, np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def _percentile(values, q: float) -> float:
    """The ``q``-th percentile, taken as the nearest lower rank (as the independent measure does); 0 with no values."""
    values = np.sort(np.asarray(values, dtype=np.float64))
    return float(values[int(q / 100.0 * (len(values) - 1))]) if len(values) else 0.0
