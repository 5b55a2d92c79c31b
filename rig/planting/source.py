# SPDX-License-Identifier: GPL-3.0-or-later
"""The animator's own keys under a planting, kept apart so that planting again starts from them.

A planting bake keys the limb bones' rotations (and stretch) and the pelvis. The first one on a rig
copies every channel it may key into an action of its own, the rig's *planting source*
(``obj.limb_ik.planting_source``), before it reads the take; every later one first puts those keys
back, so it reads the animator's motion and never what planting wrote: planting twice keys what
planting once does. Outside the range baked, the keys an earlier planting wrote stay. :func:`remove`
puts the source back for good. A channel the animator had not keyed is kept as its value, and comes
back unkeyed.
"""

from contextlib import contextmanager

import bpy
import numpy as np
from bpy_extras import anim_utils

from .. import animator
from ..errors import LimbIKError
from ..keys.actions import (
    KEY_FIELDS,
    RANGE_SLACK,
    ActionEdit,
    check_editable,
    ensure_channelbag,
    fcurves,
    read_keys,
    write_keys,
)
from ..keys.bones import rotation_path
from . import limits

UNKEYED = "limb_ik_unkeyed"  #: the source action's ID property: the values of channels that had no F-curve


def kept(obj: bpy.types.Object) -> bool:
    """Whether ``obj``'s keys hold a planting whose source is kept."""
    return obj.limb_ik.planting_source is not None


def channels(obj: bpy.types.Object, bones, located) -> list[tuple[str, int, str]]:
    """(data path, index, group) of every channel a planting bake of ``bones`` (pose bone indices) and
    ``located`` (the pelvis, end bones outside their chains) may key: rotation in the bone's own mode and
    stretch, and the location of those ``located`` too."""
    located = set(map(int, located))
    out = []
    for index in sorted({*map(int, bones), *located}):
        bone = obj.pose.bones[index]
        path = f'pose.bones["{bpy.utils.escape_identifier(bone.name)}"]'
        rotation = rotation_path(bone.rotation_mode)
        out += [(f"{path}.{rotation}", i, bone.name) for i in range(3 if rotation == "rotation_euler" else 4)]
        out.append((f"{path}.scale", 1, bone.name))
        if index in located:
            out += [(f"{path}.location", i, bone.name) for i in range(3)]
    return out


class Planting:
    """One planting bake's hold on the source: :meth:`start` before the take is read, :meth:`finish`
    once the planted keys are written, :meth:`undo` if anything failed (with the edit's rollback)."""

    def __init__(self, obj: bpy.types.Object, edit: ActionEdit, wanted: list[tuple[str, int, str]]):
        self.obj, self.edit, self.wanted = obj, edit, wanted
        self.created: bpy.types.Action | None = None
        self.before: dict[tuple[str, int], dict | None] = {}  #: the keys there were, by channel

    def start(self) -> None:
        """Keep the channels not kept yet, and put the kept ones back: the take now plays the source."""
        animator.restore(self.obj)  # the animator's values, not a live write, are an unkeyed channel's source
        store = self.obj.limb_ik.planting_source
        if store is None:
            store = self.created = _new_store(self.obj)
        bag = _bag(store, create=True)
        stored = {(c.data_path, c.array_index): c for c in bag.fcurves}
        current = fcurves(self.obj)
        present = {(c.data_path, c.array_index): c for c in current} if current is not None else {}
        unkeyed = store.get(UNKEYED, {})
        for path, index, group in self.wanted:
            channel, curve = (path, index), present.get((path, index))
            self.before[channel] = read_keys(curve) if curve is not None else None
            if channel not in stored:  # never planted: what is there is the animator's
                _keep(store, bag, path, index, group, curve, self.obj)
                continue
            source = stored[channel]
            if len(source.keyframe_points):
                self.edit.set_keys(path, index, group, read_keys(source))
            else:
                self.edit.set_keys(path, index, group, None)
                _set_value(self.obj, path, index, unkeyed[_name(path, index)])
        _changed(self.obj)

    def finish(self, start: float, end: float) -> None:
        """Outside [start, end], put back the keys an earlier planting wrote there."""
        current = fcurves(self.obj)
        for (path, index), before in self.before.items():
            curve = current.find(path, index=index) if current is not None else None
            if before is None or curve is None or len(before["co"]) == 0:
                continue
            now = read_keys(curve)
            outside = (before["co"][:, 0] < start - RANGE_SLACK) | (before["co"][:, 0] > end + RANGE_SLACK)
            inside = ~((now["co"][:, 0] < start - RANGE_SLACK) | (now["co"][:, 0] > end + RANGE_SLACK))
            merged = {name: np.concatenate([before[name][outside], now[name][inside]]) for name, _, _ in KEY_FIELDS}
            order = np.argsort(merged["co"][:, 0], kind="stable")
            merged = {name: values[order] for name, values in merged.items()}
            if any(not np.array_equal(merged[name], now[name]) for name, _, _ in KEY_FIELDS):
                self.edit.set_keys(path, index, curve.group.name if curve.group else "", merged)

    def undo(self) -> None:
        """Forget a source this bake started (the edit's rollback puts the keys back)."""
        if self.created is not None:
            self.obj.limb_ik.planting_source = None
            bpy.data.actions.remove(self.created)


@contextmanager
def playing(obj: bpy.types.Object):
    """Within this block the rig's keys are its kept source where it has one (for a check of the planting,
    which reads the take as the animator made it); every key is put back after."""
    if not kept(obj):
        yield
        return
    edit = ActionEdit(obj)
    try:
        _put_back(obj, edit)
        yield
    finally:
        edit.rollback()
        _changed(obj)


def remove(obj: bpy.types.Object) -> int:
    """Put the animator's keys back on every channel planting keyed, forget the source; returns the number
    of channels put back. Raises :class:`LimbIKError`, changing nothing, where there is no planting to remove."""
    store = obj.limb_ik.planting_source
    if store is None:
        raise LimbIKError(f"Armature '{obj.name}' has no planting to remove: it was not planted by a bake.")
    check_editable(obj)
    animator.restore(obj)
    edit = ActionEdit(obj)
    try:
        count = _put_back(obj, edit)
    except Exception:
        edit.rollback()
        raise
    obj.limb_ik.planting_source = None
    bpy.data.actions.remove(store)
    limits.forget(obj)
    _changed(obj)
    return count


def _put_back(obj: bpy.types.Object, edit: ActionEdit) -> int:
    """Every kept channel as the source has it, through ``edit``; returns how many."""
    store = obj.limb_ik.planting_source
    bag = _bag(store, create=False)
    unkeyed = store.get(UNKEYED, {})
    curves = list(bag.fcurves) if bag is not None else []
    for curve in curves:
        path, index = curve.data_path, curve.array_index
        group = curve.group.name if curve.group else ""
        if len(curve.keyframe_points):
            edit.set_keys(path, index, group, read_keys(curve))
        else:
            edit.set_keys(path, index, group, None)
            _set_value(obj, path, index, unkeyed[_name(path, index)])
    return len(curves)


def _changed(obj: bpy.types.Object) -> None:
    """Have Blender evaluate the rig's keys anew."""
    if obj.animation_data is not None and obj.animation_data.action is not None:
        obj.animation_data.action.update_tag()


def _new_store(obj: bpy.types.Object) -> bpy.types.Action:
    store = bpy.data.actions.new(f"{obj.name} planting source")
    store.use_fake_user = True  # referenced only from the rig's settings: kept with the file
    store.slots.new(id_type="OBJECT", name=obj.name)
    obj.limb_ik.planting_source = store
    return store


def _bag(store: bpy.types.Action, create: bool):
    slot = store.slots[0] if len(store.slots) else None
    if slot is None:
        return None
    if create:
        return ensure_channelbag(store, slot)
    return anim_utils.action_get_channelbag_for_slot(store, slot)


def _keep(store, bag, path: str, index: int, group: str, curve, obj) -> None:
    """Copy ``path[index]`` as it is into the source: its keys, or its value where it has none."""
    kept_curve = bag.fcurves.new(path, index=index)
    kept_curve.group = bag.groups.get(group) or bag.groups.new(group)
    if curve is not None and len(curve.keyframe_points):
        write_keys(kept_curve, read_keys(curve))
        return
    if UNKEYED not in store:
        store[UNKEYED] = {}
    store[UNKEYED][_name(path, index)] = float(obj.path_resolve(path)[index])


def _name(path: str, index: int) -> str:
    return f"{path}[{index}]"


def _set_value(obj: bpy.types.Object, path: str, index: int, value: float) -> None:
    obj.path_resolve(path)[index] = value
