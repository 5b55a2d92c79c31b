# SPDX-License-Identifier: GPL-3.0-or-later
"""Bake solved limbs to keyframes: read every frame, plant, solve all frames at once, key in bulk.

The animated pose and the goals are read over the whole range at once (:mod:`.frames.sampling`): from the
F-curves in bulk when nothing else drives them and that agrees with Blender, else by letting Blender
evaluate each frame with live solving paused. The chains of all frames then go through one solve,
and each limb bone's rotation channel (in its own mode, continuous over time) is keyed with
whole-array writes. Only those channels change; every other key is left bit-identical, and a failure
leaves the action as it was.
"""

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
import numpy as np

from ..solvers import rotation_modes
from . import plan, solve, timeline
from .errors import LimbIKError
from .frames import overrides, sampling
from .keys.actions import ActionEdit, check_editable
from .keys.bones import key_bone, key_rotations, rotation_path
from .limbs import setup
from .planting import contacts, figures, legs, limits, measured, source
from .planting.ground import Ground
from .pose import AXIS_ANGLE, QUATERNION, by_mode

READ_BACK = 2000  #: frames of keys read back at once to hold them to the planting limits: a long take in parts


@dataclass
class BakeReport:
    frames: int = 0
    limbs: list[str] = field(default_factory=list)
    keys: int = 0
    unreached: dict[str, int] = field(default_factory=dict)  #: limb -> frames its tip was keyed off its goal
    #: limb -> frames its goal lay off its plane, and the farthest it lay (world units)
    off_plane: dict[str, tuple[int, float]] = field(default_factory=dict)
    #: limb -> a sentence, for what was keyed but is wrong: a body planting moved further than the take explains
    problems: dict[str, str] = field(default_factory=dict)
    #: limb -> a sentence, for what was keyed beyond the planting limits: a knee turned faster than 10° a frame; a
    #: foot off its height, pitch, sunk or sliding where it stands, measured on the keys (:mod:`.planting.limits`)
    warnings: dict[str, str] = field(default_factory=dict)
    #: how far planting raises the body (negative: lowers it) where it moves it least (world units); None without
    lift: float | None = None
    seconds: float = 0.0
    path: str = ""  #: how the animation was read: "bulk" (F-curves evaluated at once) or "stepped" (frame by frame)
    why: str = ""  #: a sentence saying how and why


def frame_list(start: int, end: int, step: int) -> list[int]:
    """The frames keyed: every ``step``-th from ``start``, and always ``end``."""
    if end < start:
        raise LimbIKError(f"The bake range ends (frame {end}) before it starts (frame {start}).")
    if step < 1:
        raise LimbIKError(f"The bake step must be 1 or more, not {step}.")
    frames = list(range(start, end + 1, step))
    if frames[-1] != end:
        frames.append(end)
    return frames


def bake(
    obj: bpy.types.Object,
    depsgraph,
    limbs=None,
    frame_start: int | None = None,
    frame_end: int | None = None,
    step: int = 1,
    turn_off_live: bool = True,
    progress: Callable[[float], None] | None = None,
) -> BakeReport:
    """Key the solved pose of ``limbs`` (default: all enabled) of ``obj`` over a frame range of the
    scene ``depsgraph`` evaluates, read from its F-curves in bulk or stepped through its frames.

    The range defaults to the scene's. With ``turn_off_live`` the rig's live solving is switched
    off afterwards, so the keys play back as baked. ``progress`` is called with the fraction read.
    Raises :class:`LimbIKError` (nothing changed) if a limb cannot be solved.
    """
    began = time.perf_counter()
    scene = depsgraph.scene
    if obj.name not in scene.objects:
        raise LimbIKError(f"Armature '{obj.name}' is not in the scene '{scene.name}'.")
    planned = plan.make(obj, limbs, from_source=True)
    planned.raise_first_problem()
    if not planned.limbs:
        raise LimbIKError(f"Armature '{obj.name}' has no enabled limbs to bake.")
    check_editable(obj)
    blended = overrides.keys_overridden(obj)
    if blended:
        raise LimbIKError(blended)
    frames = frame_list(*timeline.frame_range(scene, frame_start, frame_end), step)
    planting = planned.planting
    edit = ActionEdit(obj)
    kept = None
    try:
        if planting is not None:  # from the animator's keys, however often planted
            kept = source.Planting(
                obj, edit, source.channels(obj, planned.written, [planting.pelvis, *planned.located])
            )
            kept.start()
        report = _bake(obj, depsgraph, planned, edit, frames, progress)
        if kept is not None:
            kept.finish(frames[0], frames[-1])
            limits.remember(obj, {**report.problems, **report.warnings})
    except Exception:
        edit.rollback()
        if kept is not None:
            kept.undo()
        raise
    if turn_off_live:
        obj.limb_ik.live = False
    report.seconds = time.perf_counter() - began
    return report


def plant(
    obj: bpy.types.Object,
    depsgraph,
    ground: bpy.types.Collection | str | None = None,
    limbs=None,
    frame_start: int | None = None,
    frame_end: int | None = None,
    step: int = 1,
    progress: Callable[[float], None] | None = None,
    pelvis_mode: str | None = None,
    max_pelvis_drop: float | None = None,
    authored_ground: bpy.types.Collection | str | None = None,
) -> BakeReport:
    """Plant the legs of ``obj`` on ``ground`` (a collection or its name; default: the rig's ground) and
    :func:`bake` them: the Plant operator and the API's ``plant``. The legs are ``limbs`` (names), else
    those :func:`.limbs.setup.to_plant` chooses; they are marked planted and the ground becomes the rig's, as
    do ``pelvis_mode``, ``max_pelvis_drop`` and ``authored_ground`` (what the take was made on) where given.
    If anything fails, those settings are put back as they were, with the keys."""
    settings = obj.limb_ik
    before = (
        settings.ground,
        {limb.name: limb.plant for limb in settings.limbs},
        settings.pelvis_mode,
        settings.max_pelvis_drop,
        settings.authored_ground,
    )
    try:
        if pelvis_mode is not None:
            modes = [item.identifier for item in settings.bl_rna.properties["pelvis_mode"].enum_items]
            if str(pelvis_mode).upper() not in modes:
                raise LimbIKError(f"There is no pelvis mode '{pelvis_mode}'; choose one of {', '.join(modes)}.")
            settings.pelvis_mode = str(pelvis_mode).upper()
        if max_pelvis_drop is not None:
            if not (isinstance(max_pelvis_drop, (int, float)) and 0.0 <= max_pelvis_drop < math.inf):
                raise LimbIKError(f"The maximum pelvis drop must be 0 or more metres, not {max_pelvis_drop!r}.")
            settings.max_pelvis_drop = max_pelvis_drop
        if ground is not None:
            settings.ground = _collection(ground, "ground")
        if authored_ground is not None:
            settings.authored_ground = _collection(authored_ground, "authored ground")
        planted = setup.to_plant(obj, limbs, depsgraph)
        for limb in planted:
            limb.plant = True
        return bake(obj, depsgraph, planted, frame_start, frame_end, step, progress=progress)
    except Exception:
        settings.ground, settings.pelvis_mode, settings.max_pelvis_drop = before[0], before[2], before[3]
        settings.authored_ground = before[4]
        for limb in settings.limbs:
            limb.plant = before[1].get(limb.name, limb.plant)
        raise


def _collection(collection: bpy.types.Collection | str, role: str) -> bpy.types.Collection:
    found = bpy.data.collections.get(collection) if isinstance(collection, str) else collection
    if found is None:
        raise LimbIKError(f"There is no collection named '{collection}' to use as {role}.")
    return found


def match_fk(obj: bpy.types.Object, depsgraph, limbs, insert_keys: bool = True) -> solve.Report:
    """Solve ``limbs`` of ``obj`` at the current frame, key their bones' rotations there (``insert_keys``)
    and switch the limbs off, so the animation carries on in FK without a jump: the Match FK operator and
    the API's ``match_fk``."""
    if insert_keys:
        check_editable(obj)  # before the pose changes
    report = solve.solve_rig(obj, depsgraph, limbs)
    if insert_keys:
        bones = [b for limb in limbs for b in (limb.upper_bone, limb.lower_bone, limb.end_bone) if b]
        key_rotations(obj, bones, depsgraph.scene.frame_current)
    for limb in limbs:
        limb.enabled = False
    return report


def _bake(obj, depsgraph, planned: plan.Plan, edit: ActionEdit, frames: list[int], progress) -> BakeReport:
    """Read, plant, solve and key ``frames``: the bake once its range and the take's source are settled."""
    scene = depsgraph.scene
    planting, analysis = planned.planting, None
    span = legs.take_frames(obj, scene, frames[0], frames[-1]) if planting is not None else frames
    sampled = sampling.sample(depsgraph, planned, [*span, *frames], frames, progress)
    solve.check_numbers(planned, sampled.pose, sampled.frames)
    rows = sampled.rows(frames)
    pose = sampled.pose if len(rows) == len(sampled.frames) else sampled.pose.frames(rows)
    groups = solve.assemble(planned, pose, sampled.goals[rows])
    if planting is not None:  # planting reads the whole take
        ground = Ground(planting.ground, depsgraph)
        authored = Ground(planting.authored, depsgraph) if planting.authored is not None else None
        track = legs.leg_sample(planting, sampled.pose, skin=True)
        if len(span) != len(sampled.frames):
            track = track.at(sampled.rows(span))
        taken = figures.points(planting, track, skin=False)  # the take as the figures read it
        track = track._replace(skin=None)
        asked = range(frames[0], frames[-1] + 1)
        analysis = legs.analyse(planting, span, track, ground, scene, asked, authored)
        figures.record(obj, planting, span, taken)  # what the foot report compares with, saved in the file
    solved = solve.solve_frames(planned, groups, pose, frames, analysis)

    report = BakeReport(len(frames), [limb.name for limb in planned.limbs], path=sampled.path, why=sampled.why)
    if analysis is not None:
        report.lift = analysis.least_lift
        report.problems.update(planting.outside)
        report.problems.update(analysis.problems)
    count = len(frames)
    lengths = solve.world_length(pose)[:, None]
    for group, result in zip(solved.groups, solved.results):
        reached = result.reached.reshape(count, len(group.layout.limbs))
        away = result.off_plane.reshape(count, len(group.layout.limbs)) * lengths
        for limb, column, off in zip(group.layout.limbs, reached.T, away.T):
            if not column.all():
                report.unreached[limb.name] = int((~column).sum())
            if off.any():
                report.off_plane[limb.name] = (int(np.count_nonzero(off)), float(off.max()))
    report.keys = _write(obj, edit, solved, frames, pose.frame(0))
    if analysis is not None:
        del sampled, pose, groups, solved, track  # the take as read and solved, whose place the keys read back take
        rows = np.asarray(frames) - span.start
        taken = {key: value[rows] for key, value in taken.items()}
        for limb, sentence in _beyond_limits(depsgraph, planned, frames, taken, analysis, ground).items():
            report.warnings[limb] = f"{report.warnings[limb]} {sentence}" if limb in report.warnings else sentence
    return report


def _beyond_limits(
    depsgraph, planned: plan.Plan, frames: list[int], authored: dict, analysis: legs.Analysis, ground: Ground
) -> dict[str, str]:
    """The planted legs beyond the planting limits (:mod:`.planting.limits`) as keyed over ``frames``: the keys read
    back as they play, against the take as read there (``authored``, :func:`.planting.figures.points` without the
    skin) and the ground it was authored on."""
    scene, planting = depsgraph.scene, planned.planting
    parts = [frames[first : first + READ_BACK] for first in range(0, len(frames), READ_BACK)]
    read = [
        figures.points(
            planting, legs.leg_sample(planting, sampling.sample(depsgraph, planned, part, part[:1]).pose, skin=True)
        )
        for part in parts
    ]
    played = {key: np.concatenate([part[key] for part in read]) for key in read[0]}
    seconds = np.asarray(frames) * scene.render.fps_base / scene.render.fps
    rows = np.asarray(frames) - analysis.frames.start
    source = analysis.planted.source[rows]  # the ground each foot stood on in the take, as planting read it
    forced = contacts.forced(planned.obj, planting.feet, analysis.frames)
    found = measured.measure(authored, played, ground, seconds, source, None if forced is None else forced[rows])
    held = analysis.planted.contacts.stance.any(axis=2)[rows]
    settings = planned.obj.limb_ik
    lowered = np.maximum(settings.floor_height - source, 0.0)
    limbs = [f.limb for f in planting.feet]
    return limits.beyond(
        limbs,
        found,
        frames,
        held,
        settings.max_foot_angle,
        settings.use_foot_lock,
        lowered,
        knee_causes=analysis.knee_causes,
    )


def _write(obj, edit: ActionEdit, solved: solve.Solved, frames, first_pose) -> int:
    """Key every chain bone's rotation (and stretch), and the pelvis' channels when planting carries
    the body, over ``frames``; returns the number of keys."""
    groups, results, carried = solved.groups, solved.results, solved.carried
    count = len(frames)
    indices = np.concatenate([g.layout.written.ravel() for g in groups])
    modes = [mode for g in groups for mode in g.layout.modes]
    rotations = np.concatenate([r.rotations.reshape(count, -1, 4) for r in results], axis=1)  # (frames, bones, 4)
    y_scale = np.concatenate([r.y_scale.reshape(count, -1) for r in results], axis=1)
    locations = dict(solved.located)
    if carried:
        pelvis = carried[0].index
        locations[pelvis] = np.array([c.location for c in carried])
        if carried[0].rotation is not None:  # a pitching body: the pelvis turns too
            turns = np.array([c.rotation for c in carried])
            indices = np.append(indices, pelvis)
            modes = [*modes, obj.pose.bones[pelvis].rotation_mode]
            rotations = np.concatenate([rotations, turns[:, None]], axis=1)
            y_scale = np.concatenate([y_scale, np.ones((count, 1))], axis=1)
    frame_array = np.asarray(frames, dtype=np.float64)
    start, end = frames[0], frames[-1]
    keys = 0
    for mode, columns in by_mode(modes).items():
        bones = indices[columns]
        values = _channel_values(rotations[:, columns], mode, first_pose, bones)
        path = rotation_path(mode)
        for column, bone in enumerate(bones):
            keys += key_bone(obj, edit, bone, path, frame_array, values[:, column], start, end)
    stretched = np.flatnonzero((y_scale != 1.0).any(axis=0))
    for column in stretched:
        bone = indices[column]
        values = (first_pose.scale[bone, 1] * y_scale[:, column])[:, None]
        keys += key_bone(obj, edit, bone, "scale", frame_array, values, start, end, first_index=1)
    for bone, values in locations.items():
        keys += key_bone(obj, edit, bone, "location", frame_array, values, start, end)
    return keys


def _channel_values(rotations: np.ndarray, mode: str, first_pose, bones: np.ndarray) -> np.ndarray:
    """(frames, bones, width) channel values in ``mode``, continuous over frames and starting
    nearest to the animated values at the first frame."""
    frames, count = rotations.shape[:2]
    if mode in (QUATERNION, AXIS_ANGLE):
        start = rotations[0]
        if mode == QUATERNION:
            start = rotation_modes.same_hemisphere(start, first_pose.quaternion[bones])
        else:
            start = rotation_modes.same_hemisphere(
                start, rotation_modes.axis_angle_to_quat(first_pose.axis_angle[bones])
            )
        sequence = np.stack(
            [
                rotation_modes.make_quat_continuous(np.vstack([start[b : b + 1], rotations[1:, b]]))
                for b in range(count)
            ],
            axis=1,
        )
        if mode == QUATERNION:
            return sequence
        return rotation_modes.quat_to_axis_angle(sequence.reshape(-1, 4)).reshape(frames, count, 4)
    return rotation_modes.quat_to_euler_sequence(rotations, mode, first_pose.euler[bones])
