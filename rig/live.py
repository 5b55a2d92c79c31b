# SPDX-License-Identifier: GPL-3.0-or-later
"""Live solving on frame change, without losing the animated pose of bones that have no keys.

A keyed bone gets its animated rotation back from the animation system on every frame. A bone
without keys would keep what the live solve wrote, and the next solve would start from the IK
pose instead of the animator's. So the values the live solve wrote are swapped back for what
was there before, before each frame change and before saving, unless someone has changed
them since (a key, a driver, the animator).

Undo steps store the channels as they are, solved values included. After an undo or redo, the
write those values came from is looked up among the recent ones (the last at each frame), so the
animator's values still come back at the next frame change.
"""

from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass

import bpy
import numpy as np

from . import solve
from .errors import LimbError

CHANNELS = (
    ("rotation_quaternion", 4),
    ("rotation_euler", 3),
    ("rotation_axis_angle", 4),
    ("scale", 3),
    ("location", 3),
)


@dataclass
class _Written:
    name: str
    indices: np.ndarray
    before: dict[str, np.ndarray]  #: channel -> (n, width) float32 values before the write
    after: dict[str, np.ndarray]  #: channel -> values written


_written: dict[int, _Written] = {}  # by Object.session_uid
_plans: dict[int, tuple[tuple, solve.Plan]] = {}  # by Object.session_uid: (signature, plan)
_moved: set[int] = set()  # live rigs whose targets or poles were moved since they were solved
_recent: dict[int, OrderedDict] = {}  # by Object.session_uid: frame -> the last _Written there, oldest first
RECENT_FRAMES = 256  #: frames whose last write is remembered for undo, per armature
_suspended = 0


@contextmanager
def suspended():
    """Within this block frame changes show the animated pose: live solving is paused (a bake reads FK)."""
    global _suspended
    _suspended += 1
    try:
        yield
    finally:
        _suspended -= 1


def is_suspended() -> bool:
    return _suspended > 0


def live_rigs(scene: bpy.types.Scene):
    return [obj for obj in scene.objects if obj.type == "ARMATURE" and obj.limb_ik.live and obj.limb_ik.limbs]


def _read_channels(obj, indices) -> dict[str, np.ndarray]:
    count = len(obj.pose.bones)
    out = {}
    for name, width in CHANNELS:
        buffer = np.empty(count * width, np.float32)
        obj.pose.bones.foreach_get(name, buffer)
        out[name] = buffer.reshape(count, width)[indices].copy()
    return out


def restore(obj: bpy.types.Object) -> None:
    """Put back the animator's values of the bones the live solve wrote on ``obj``, where untouched."""
    written = _written.pop(obj.session_uid, None)
    if written is None or len(obj.pose.bones) <= int(written.indices.max(initial=-1)):
        return
    current = _read_channels(obj, written.indices)
    count = len(obj.pose.bones)
    changed = False
    for name, width in CHANNELS:
        untouched = np.all(current[name] == written.after[name], axis=1)
        if not untouched.any():
            continue
        buffer = np.empty(count * width, np.float32)
        obj.pose.bones.foreach_get(name, buffer)
        buffer.reshape(count, width)[written.indices[untouched]] = written.before[name][untouched]
        obj.pose.bones.foreach_set(name, buffer)
        changed = True
    if changed:
        obj.update_tag()


def restore_scene(scene: bpy.types.Scene) -> None:
    for obj in scene.objects:
        if obj.session_uid in _written:
            restore(obj)


def forget_all() -> None:
    _written.clear()
    _plans.clear()
    _moved.clear()


def note_moved_goals(scene: bpy.types.Scene, depsgraph) -> bool:
    """Note the live rigs of ``scene`` whose targets or poles this depsgraph update moved (say, the
    animator dragging a target); True when some rig needs solving again. The rigs themselves are
    not watched: the live solve's own writes update them."""
    moved = {
        update.id.original.session_uid
        for update in depsgraph.updates
        if update.is_updated_transform and isinstance(update.id, bpy.types.Object)
    }
    if not moved:
        return False
    for obj in live_rigs(scene):
        cached = _plans.get(obj.session_uid)
        goals = (
            {goal[0].session_uid for chain in cached[1].chains for goal in (chain.target, chain.pole) if goal}
            if cached
            else set()
        )
        if goals & moved:
            _moved.add(obj.session_uid)
    return bool(_moved)


def solve_moved(context) -> None:
    """Solve again the live rigs whose goals moved, from the animator's pose. Runs outside the
    depsgraph's evaluation (a timer), as it evaluates the scene once between restoring and solving."""
    rigs = [obj for obj in context.scene.objects if obj.session_uid in _moved] if context.scene else []
    _moved.clear()
    if not rigs:
        return
    for obj in rigs:
        restore(obj)
    context.view_layer.update()
    depsgraph = context.evaluated_depsgraph_get()
    for obj in rigs:
        solve_live(obj, depsgraph)
    _recent.clear()


def recall_scene(scene: bpy.types.Scene) -> None:
    """After undo or redo: for each armature, take as the pending write the recent one whose solved
    values the restored channels still hold, or none (the channels are then the animator's)."""
    _plans.clear()  # undo may have reallocated the limbs and bones a plan refers to
    for obj in scene.objects:
        history = _recent.get(obj.session_uid)
        if not history:
            continue
        _written.pop(obj.session_uid, None)
        best, best_rows = None, 0
        for written in reversed(history.values()):  # newest first: ties go to the latest write
            if len(obj.pose.bones) <= int(written.indices.max(initial=-1)):
                continue
            current = _read_channels(obj, written.indices)
            rows = sum(
                int(np.sum(np.all(current[name] == written.after[name], axis=1)
                           & np.any(written.before[name] != written.after[name], axis=1)))
                for name, _ in CHANNELS
            )  # fmt: skip
            if rows > best_rows:
                best, best_rows = written, rows
        if best is not None:
            _written[obj.session_uid] = best


def _remember(obj: bpy.types.Object, frame: float, written: _Written) -> None:
    _written[obj.session_uid] = written
    history = _recent.setdefault(obj.session_uid, OrderedDict())
    history.pop(frame, None)
    history[frame] = written
    while len(history) > RECENT_FRAMES:
        history.popitem(last=False)


def show_now(obj: bpy.types.Object, context) -> None:
    """After Live was switched on ``obj``: show the IK pose now, or the animator's pose when switched off,
    rather than at the next frame change."""
    if is_suspended():
        return
    if obj.limb_ik.live and obj.limb_ik.limbs:
        restore(obj)
        solve_live(obj, context.evaluated_depsgraph_get())
    else:
        restore(obj)


def _plan(obj: bpy.types.Object) -> solve.Plan:
    """The plan of ``obj``, checked anew only when what it is built from has changed."""
    key = solve.signature(obj)
    cached = _plans.get(obj.session_uid)
    if cached is not None and cached[0] == key:
        return cached[1]
    planned = solve.plan(obj)
    _plans[obj.session_uid] = (key, planned)
    return planned


def solve_live(obj: bpy.types.Object, depsgraph) -> None:
    """Solve the enabled limbs of ``obj``; limbs that cannot be solved are skipped and marked.

    Never raises for a problem with the rig: the problem is stored in the limbs' status.
    """
    try:
        planned = _plan(obj)
        problems = dict(planned.problems)
        if planned.limbs:
            groups, pose, locations = solve.prepare(planned, depsgraph)
            results = solve.solve_groups(groups)
            indices = np.concatenate([g.bones.ravel() for g in groups])
            indices = np.concatenate([indices, np.fromiter(locations, int, len(locations))])
            before = _read_channels(obj, indices)
            solve.write(obj, pose, groups, results, locations)
            written = _Written(obj.name, indices, before, _read_channels(obj, indices))
            _remember(obj, depsgraph.scene.frame_current_final, written)
    except LimbError as error:
        problems = {limb.name: str(error) for limb in obj.limb_ik.limbs if limb.enabled}
    for limb in obj.limb_ik.limbs:
        status = problems.get(limb.name, "") if limb.enabled else ""
        if limb.status != status:  # written only on change: every write tags the object
            limb.status = status
