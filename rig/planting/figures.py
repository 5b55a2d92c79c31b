# SPDX-License-Identifier: GPL-3.0-or-later
"""How well planted feet stand: measured on the pose as it plays back, against the take as authored.

One definition of every figure, the same here, in the demo, the benchmark and the README (and in
the independent measure the tests hold this to). The *ball* is the toe's head, or a toe-less
foot's tail; on a skinned mesh, the lowest vertex of the foot (as played, the one the take stood on
while that is within 2 mm of the one nearest the ground under it). A foot is *in contact*
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
from dataclasses import asdict, dataclass, field

import bpy
import numpy as np

from .. import plan, timeline
from ..errors import LimbIKError
from ..pose import read_pose
from . import contacts, legs, limits
from .ground import Ground
from .measured import Measured, measure, percentile

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
    #: limb -> a sentence, for each foot beyond the planting limits (:func:`.limits.beyond`, as a planting bake says)
    beyond: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The report as plain data, its words (``lines``) included: what the API returns and the command
        line writes, and prints in another process."""
        return {
            "frames": list(self.frames),
            "feet": [asdict(f) for f in self.feet],
            "pelvis_drop": self.pelvis_drop,
            "pelvis_lift": self.pelvis_lift,
            "authored": self.authored,
            "beyond": dict(self.beyond),
            "lines": self.lines(),
        }

    def lines(self) -> list[str]:
        """The report in words: a line per foot, one for the pelvis, and a sentence per foot beyond the limits."""
        feet = [
            f"{f.limb}: {f.contact_frames} contact frames, ball height off by {1e3 * f.ball_height_median:.1f} "
            f"mm (p95 {1e3 * f.ball_height_p95:.1f}), deepest {1e3 * f.deepest:.1f} mm, pitch off by "
            f"{f.pitch_p95:.1f}° (p95), knee pop {f.knee_pop:.1f}°, slide {1e3 * f.slide:.1f} mm"
            + (f", no ground on {f.frames_without_ground} frames" if f.frames_without_ground else "")
            for f in self.feet
        ]
        pelvis = f"pelvis drop {1e3 * self.pelvis_drop:.1f} mm, lift {1e3 * self.pelvis_lift:.1f} mm"
        return [*feet, f"{pelvis} (against {self.authored})", *dict.fromkeys(self.beyond.values())]


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
        authored, source = _track(depsgraph, planting, frames, paused=True, skin=False), "the animation"
    ground = Ground(planting.ground, timeline.evaluated(depsgraph.view_layer))
    fps = scene.render.fps / scene.render.fps_base
    settings = obj.limb_ik
    forced = contacts.forced(obj, planting.feet, frames)
    found = measure(authored, played, ground, np.asarray(frames) / fps, settings.floor_height, forced)
    limbs = [f.limb for f in planting.feet]
    feet = [_figures(limb, n, found) for n, limb in enumerate(limbs)]
    lift = played["pelvis"][:, 2] - authored["pelvis"][:, 2]
    pelvis_lift = float(lift[np.argmin(np.abs(lift))])
    drop = _pelvis_drop(authored, played, ground, settings.floor_height)
    said = limits.beyond(
        limbs, found, frames, max_tilt=settings.max_foot_angle, locked=settings.use_foot_lock, keyed=False
    )
    return FootReport((start, end), feet, drop, pelvis_lift, source, said)


def points(planting: legs.PlantPlan, sample: legs.LegSample, skin: bool = True) -> dict[str, np.ndarray]:
    """What the figures read of legs sampled over F frames (:func:`.legs.leg_sample`): ankles (F, n, 3), the points
    a sole may stand on (F, n, P, 3: heel, ball and tip of a skinned mesh's sole, then its outline; the ball P times
    for a bone sole),
    knees (F, n, radians between the thigh's and the shin's bone directions, head to tail, as the independent measure
    reads them: 0 straight; where the bones are not joined head to tail, a shin turned about its length turns them) and
    the pelvis (F, 3), in world space; with the feet's skin where it was sampled, which of its vertices is lowest (F, n)
    and where that is (F, n, 3), and with ``skin``, every vertex of it (F, n, V, 3)."""
    thigh, shin = sample.directions[..., 0, :], sample.directions[..., 1, :]
    cos = np.einsum("...i,...i->...", thigh, shin) / (np.linalg.norm(thigh, axis=-1) * np.linalg.norm(shin, axis=-1))
    on_mesh = np.array([foot.sole is not None for foot in planting.feet])[:, None, None]
    sole = np.concatenate([np.stack([sample.heels, sample.balls, sample.tips], axis=-2), sample.outline], axis=-2)
    out = {
        "ankle": sample.feet[..., :3, 3],
        "sole": np.where(on_mesh, sole, sample.balls[..., None, :]),
        "knee": np.arccos(np.clip(cos, -1.0, 1.0)),
        "pelvis": sample.pelvis,
    }
    if sample.skin is not None and sample.skin.shape[-2]:
        out["low"] = np.argmin(sample.skin[..., 2], axis=-1)
        out["low_point"] = np.take_along_axis(sample.skin, out["low"][..., None, None], axis=-2)[..., 0, :]
        if skin:
            out["skin"] = sample.skin
    return out


def _track(depsgraph, planting: legs.PlantPlan, frames, paused: bool, skin: bool = True) -> dict[str, np.ndarray]:
    """:func:`points` over ``frames`` as the scene plays them (``paused``: with live solving paused; ``skin``: with
    every vertex of the feet's skin, which only the legs as played are measured on)."""
    obj = planting.obj

    def read(depsgraph):
        return legs.leg_sample(planting, read_pose(obj, obj.evaluated_get(depsgraph)), skin=True).at(0)

    sampled = timeline.step(depsgraph, frames, read, paused=paused)
    return points(planting, legs.LegSample(*(np.array(values) for values in zip(*sampled))), skin)


def record(obj: bpy.types.Object, planting: legs.PlantPlan, frames: range, taken: dict[str, np.ndarray]) -> None:
    """Keep on ``obj`` the take a planting bake read over ``frames`` (``taken``: :func:`points` without the skin,
    whose lowest vertex is kept: the skin as played is measured against it)."""
    obj[RECORD] = {
        "start": frames.start,
        "knees": "bones",  # knees between the bones' directions (before: between the joints)
        "limbs": [f.limb for f in planting.feet],
        **{key: np.ascontiguousarray(value, dtype=np.float64).ravel() for key, value in taken.items()},
    }


def recorded(obj: bpy.types.Object, planting: legs.PlantPlan, frames: range) -> dict[str, np.ndarray] | None:
    """The recorded take over ``frames`` for the legs of ``planting``, or None if there is none that covers them."""
    stored = obj.get(RECORD)
    if stored is None or "sole" not in stored or stored.get("knees") != "bones":  # none, or by an older version
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
    widths = {"ankle": (3,), "sole": (-1, 3), "knee": (), "pelvis": None, "low": (), "low_point": (3,)}
    out = {}
    for key, width in widths.items():
        if key not in stored:  # the skin's lowest vertex, recorded where it was sampled
            continue
        values = np.asarray(stored[key], dtype=np.float64)
        if width is None:
            out[key] = values.reshape(count, 3)[rows]
        else:
            out[key] = values.reshape(count, len(limbs), *width)[rows][:, columns]
    if out["sole"].shape[2] != 3 + legs.outline_size(planting):  # recorded with another sole
        return None
    return out


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


def _pelvis_drop(authored, played, ground: Ground, floor: float) -> float:
    heights, _, hit = ground.cast_down(played["pelvis"])
    lower = (authored["pelvis"][:, 2] - floor) - (played["pelvis"][:, 2] - heights)
    return float(max(lower[hit].max(initial=0.0), 0.0))
