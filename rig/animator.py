# SPDX-License-Identifier: GPL-3.0-or-later
"""The animator's pose under live solving: what the live solve wrote, and what was there before.

A keyed bone gets its animated rotation back from the animation system on every frame. A bone
without keys would keep what the live solve wrote, and the next solve would start from the IK
pose instead of the animator's. So the values the live solve wrote are swapped back for what
was there before, before each frame change and before saving, unless someone has changed them
since (a key, a driver, the animator). At a frame change, a rig whose live solve can compose that
pose itself (:mod:`.live.compose`) keeps the values written and the solve takes the animator's in their place
(:func:`pending`), saving an evaluation of the armature.

Undo steps store the channels as they are, solved values included. After an undo or redo, the
write those values came from is looked up among the recent ones (the last at each frame), so the
animator's values still come back at the next frame change.

Code that must read the animated pose over many frames (a bake, the planting analysis) puts the
animator's values back with :func:`restore` and steps the scene inside :func:`suspended`.
"""

from collections import OrderedDict
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import bpy
import numpy as np

CHANNELS = (
    ("rotation_quaternion", 4),
    ("rotation_euler", 3),
    ("rotation_axis_angle", 4),
    ("scale", 3),
    ("location", 3),
)
#: Each channel's field in :class:`.pose.Pose`.
POSE_FIELDS = {
    "rotation_quaternion": "quaternion",
    "rotation_euler": "euler",
    "rotation_axis_angle": "axis_angle",
    "scale": "scale",
    "location": "location",
}
RECENT_FRAMES = 256  #: frames whose last write is remembered for undo, per armature


@dataclass
class Written:
    indices: np.ndarray  #: pose bone indices written
    before: dict[str, np.ndarray]  #: channel -> (n, width) float32 values before the write
    after: dict[str, np.ndarray]  #: channel -> values written


_written: dict[int, Written] = {}  # by Object.session_uid: the write to undo at the next frame change
_recent: dict[int, OrderedDict] = {}  # by Object.session_uid: frame -> the last Written there, oldest first
_suspended = 0


@contextmanager
def suspended():
    """Within this block frame changes show the animated pose: live solving is paused."""
    global _suspended
    _suspended += 1
    try:
        yield
    finally:
        _suspended -= 1


def is_suspended() -> bool:
    return _suspended > 0


def read_channels(obj: bpy.types.Object, indices) -> dict[str, np.ndarray]:
    """The transform channels of the pose bones ``indices``, as stored (float32)."""
    count = len(obj.pose.bones)
    out = {}
    for name, width in CHANNELS:
        buffer = np.empty(count * width, np.float32)
        obj.pose.bones.foreach_get(name, buffer)
        out[name] = buffer.reshape(count, width)[indices].copy()
    return out


def write_channels(obj: bpy.types.Object, channels: dict[str, np.ndarray]) -> None:
    """Set every pose bone's transform channels of ``obj`` to ``channels``, as :func:`read_channels` of them all
    returned."""
    for name, values in channels.items():
        obj.pose.bones.foreach_set(name, values.ravel())
    obj.update_tag()


def overwrite(obj: bpy.types.Object, frame: float, indices: np.ndarray, pose, write: Callable[[], None]) -> None:
    """Run ``write``, the live solve writing ``pose`` (a :class:`.pose.Pose` over one frame, holding the
    animator's values until then) into the bones ``indices`` of ``obj`` at ``frame``, and keep what it
    overwrote so it can be put back."""
    before = _channels(pose, indices)
    write()
    written = Written(indices, before, _channels(pose, indices))
    _written[obj.session_uid] = written
    history = _recent.setdefault(obj.session_uid, OrderedDict())
    history.pop(frame, None)
    history[frame] = written
    while len(history) > RECENT_FRAMES:
        history.popitem(last=False)


def _channels(pose, indices) -> dict[str, np.ndarray]:
    """The transform channels of the bones ``indices`` in ``pose`` (over one frame), as stored (float32): what
    :func:`read_channels` would read once they are written."""
    return {name: getattr(pose, POSE_FIELDS[name])[0, indices].astype(np.float32) for name, _ in CHANNELS}


def pending(obj: bpy.types.Object) -> Written | None:
    """The last live write on ``obj`` that has not been undone: its values may still be in the channels."""
    return _written.get(obj.session_uid)


def restore(obj: bpy.types.Object) -> None:
    """Put back the animator's values of the bones the live solve wrote on ``obj``, where untouched: value by
    value, as keys and drivers set them (one Euler angle may be keyed and the others not)."""
    written = _written.pop(obj.session_uid, None)
    if written is None or len(obj.pose.bones) <= int(written.indices.max(initial=-1)):
        return
    count = len(obj.pose.bones)
    changed = False
    for name, width in CHANNELS:
        buffer = np.empty(count * width, np.float32)
        obj.pose.bones.foreach_get(name, buffer)
        values = buffer.reshape(count, width)
        current = values[written.indices]
        untouched = current == written.after[name]
        if untouched.any():
            values[written.indices] = np.where(untouched, written.before[name], current)
            obj.pose.bones.foreach_set(name, buffer)
            changed = True
    if changed:
        obj.update_tag()


def restore_scene(scene: bpy.types.Scene, keep=()) -> None:
    """:func:`restore` every armature of ``scene`` but those whose ``session_uid`` is in ``keep``."""
    for obj in scene.objects:
        if obj.session_uid in _written and obj.session_uid not in keep:
            restore(obj)


def recall_scene(scene: bpy.types.Scene) -> None:
    """After undo or redo: for each armature, take as the pending write the recent one whose solved
    values the restored channels still hold, or none (the channels are then the animator's)."""
    for obj in scene.objects:
        history = _recent.get(obj.session_uid)
        if not history:
            continue
        _written.pop(obj.session_uid, None)
        best, best_rows = None, 0
        for written in reversed(history.values()):  # newest first: ties go to the latest write
            if len(obj.pose.bones) <= int(written.indices.max(initial=-1)):
                continue
            current = read_channels(obj, written.indices)
            # Rows that still hold what this write changed.
            held = [
                np.all(current[name] == written.after[name], axis=1)
                & np.any(written.before[name] != written.after[name], axis=1)
                for name, _ in CHANNELS
            ]
            rows = sum(int(np.sum(mask)) for mask in held)
            if rows > best_rows:
                best, best_rows = written, rows
        if best is not None:
            _written[obj.session_uid] = best


def forget_recent() -> None:
    """Forget the recent writes kept for undo (after a solve outside frame changes)."""
    _recent.clear()


def forget_all() -> None:
    _written.clear()
    _recent.clear()
