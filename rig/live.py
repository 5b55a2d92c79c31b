# SPDX-License-Identifier: GPL-3.0-or-later
"""Live solving on frame change, without losing the animated pose of bones that have no keys.

A keyed bone gets its animated rotation back from the animation system on every frame. A bone
without keys would keep what the live solve wrote, and the next solve would start from the IK
pose instead of the animator's. So the values the live solve wrote are swapped back for what
was there before, before each frame change and before saving, unless someone has changed
them since (a key, a driver, the animator).
"""

from contextlib import contextmanager
from dataclasses import dataclass

import bpy
import numpy as np

from . import solve
from .errors import LimbError

CHANNELS = (("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4), ("scale", 3))


@dataclass
class _Written:
    name: str
    indices: np.ndarray
    before: dict[str, np.ndarray]  #: channel -> (n, width) float32 values before the write
    after: dict[str, np.ndarray]  #: channel -> values written


_written: dict[int, _Written] = {}  # by Object.session_uid
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


def solve_live(obj: bpy.types.Object, depsgraph) -> None:
    """Solve the enabled limbs of ``obj``; limbs that cannot be solved are skipped and marked.

    Never raises for a problem with the rig: the problem is stored in the limbs' status.
    """
    try:
        planned = solve.plan(obj)
        problems = dict(planned.problems)
        if planned.limbs:
            groups, pose = solve.gather(planned, depsgraph)
            results = solve.solve_groups(groups)
            indices = np.concatenate([np.array([c.indices for c in g.chains]).ravel() for g in groups])
            before = _read_channels(obj, indices)
            solve.write(obj, pose, groups, results)
            _written[obj.session_uid] = _Written(obj.name, indices, before, _read_channels(obj, indices))
    except LimbError as error:
        problems = {limb.name: str(error) for limb in obj.limb_ik.limbs if limb.enabled}
    for limb in obj.limb_ik.limbs:
        status = problems.get(limb.name, "") if limb.enabled else ""
        if limb.status != status:  # written only on change: every write tags the object
            limb.status = status
