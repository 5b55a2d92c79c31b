# SPDX-License-Identifier: GPL-3.0-or-later
"""Keyframes in bulk, in slotted actions (every supported Blender, 4.5 on).

An action's F-curves live in a channelbag per slot (5.0 removed ``Action.fcurves``); all F-curve
access goes through :func:`fcurves`. Keys are written as whole
arrays, and an :class:`ActionEdit` remembers every F-curve it touches so a failure puts the
action back exactly as it was.
"""

import functools
from dataclasses import dataclass, field

import bpy
import numpy as np
from bpy_extras import anim_utils

from ..errors import LimbIKError
from . import splice

#: Every stored attribute of a keyframe, with its width; together they restore a key bit for bit.
KEY_FIELDS = (
    ("co", 2, np.float32),
    ("handle_left", 2, np.float32),
    ("handle_right", 2, np.float32),
    ("interpolation", 1, np.int32),
    ("handle_left_type", 1, np.int32),
    ("handle_right_type", 1, np.int32),
    ("easing", 1, np.int32),
    ("back", 1, np.float32),
    ("amplitude", 1, np.float32),
    ("period", 1, np.float32),
    ("type", 1, np.int32),
    ("select_control_point", 1, bool),
    ("select_left_handle", 1, bool),
    ("select_right_handle", 1, bool),
)
_KEYFRAME = bpy.types.Keyframe.bl_rna.properties
# Values a key inserted in Blender gets; FCurveKeyframePoints.add() leaves some at zero.
NEW_KEY = {
    "interpolation": _KEYFRAME["interpolation"].enum_items["BEZIER"].value,
    "handle_left_type": _KEYFRAME["handle_left_type"].enum_items["AUTO_CLAMPED"].value,
    "handle_right_type": _KEYFRAME["handle_right_type"].enum_items["AUTO_CLAMPED"].value,
    "easing": _KEYFRAME["easing"].enum_items["AUTO"].value,
    "back": _KEYFRAME["back"].default,
    "amplitude": _KEYFRAME["amplitude"].default,
    "period": _KEYFRAME["period"].default,
    "type": _KEYFRAME["type"].enum_items["KEYFRAME"].value,
    "select_control_point": 1,
    "select_left_handle": 1,
    "select_right_handle": 1,
}


def read_keys(fcurve: bpy.types.FCurve) -> dict[str, np.ndarray]:
    points = fcurve.keyframe_points
    keys = {}
    for name, width, dtype in KEY_FIELDS:
        array = np.empty(len(points) * width, dtype)
        points.foreach_get(name, array)
        keys[name] = array.reshape(-1, width) if width > 1 else array
    return keys


def write_keys(fcurve: bpy.types.FCurve, keys: dict[str, np.ndarray]) -> None:
    """Replace all keys of ``fcurve`` by ``keys`` (as from :func:`read_keys`), exactly."""
    points = fcurve.keyframe_points
    points.clear()
    points.add(len(keys["co"]))
    for name, _, dtype in KEY_FIELDS:
        points.foreach_set(name, np.ascontiguousarray(keys[name], dtype=dtype).ravel())


def ensure_action(obj: bpy.types.Object) -> tuple[bpy.types.Action, bool]:
    """The action ``obj`` plays, and its slot, created if it has none; and whether the action was created."""
    data = obj.animation_data or obj.animation_data_create()
    created = data.action is None
    if created:
        data.action = bpy.data.actions.new(f"{obj.name}Action")
    if data.action_slot is None:
        suitable = list(data.action_suitable_slots)
        data.action_slot = suitable[0] if suitable else data.action.slots.new(id_type="OBJECT", name=obj.name)
    return data.action, created


def fcurves(obj: bpy.types.Object, create: bool = False):
    """The F-curve collection of ``obj``'s action (its slot's channelbag); None if there is none,
    unless ``create`` (which needs an action: see :func:`ensure_action`)."""
    data = obj.animation_data
    if data is None or data.action is None:
        return None
    if data.action_slot is None:
        return None
    if create:
        return ensure_channelbag(data.action, data.action_slot).fcurves
    bag = anim_utils.action_get_channelbag_for_slot(data.action, data.action_slot)
    return bag.fcurves if bag is not None else None


def _new_fcurve(obj: bpy.types.Object, curves, path: str, index: int, group: str, groups=None) -> bpy.types.FCurve:
    """A new F-curve in ``curves`` (from :func:`fcurves`), in the channel group ``group``; ``groups``: a dict
    of the channelbag's groups by name, to reuse over many calls."""
    curve = curves.new(path, index=index)  # 4.5 takes no group here
    if groups is None:
        groups = {}
    if group not in groups:
        bag = ensure_channelbag(obj.animation_data.action, obj.animation_data.action_slot)
        groups[group] = bag.groups.get(group) or bag.groups.new(group)
    curve.group = groups[group]
    return curve


def ensure_channelbag(action: bpy.types.Action, slot) -> "bpy.types.ActionChannelbag":
    """The channelbag of ``slot`` in the action's first layer and strip, all created as needed
    (what ``anim_utils.action_ensure_channelbag_for_slot`` does from 5.0 on; 4.5 lacks it)."""
    layer = action.layers[0] if action.layers else action.layers.new("Layer")
    strip = layer.strips[0] if layer.strips else layer.strips.new(type="KEYFRAME")
    return strip.channelbag(slot, ensure=True)


def check_editable(obj: bpy.types.Object) -> None:
    """Raise :class:`LimbIKError` if the action ``obj`` plays cannot be changed here: one linked from a library,
    as a library override's is (keys written into it would be lost on saving, and it cannot be put back), or
    one that other objects play too (its keys would move them as well)."""
    data = obj.animation_data
    action = data.action if data is not None else None
    if action is None:
        return
    if action.library is not None:
        raise LimbIKError(
            f"Armature '{obj.name}' plays the action '{action.name}' linked from '{action.library.filepath}', which "
            "cannot be changed here; make the action local (or give the rig a new action) to bake."
        )
    others = sharing(obj)
    if others:
        listed = ", ".join(f"'{other.name}'" for other in others)
        raise LimbIKError(
            f"Armature '{obj.name}' plays the action '{action.name}', which {listed} also play"
            f"{'s' if len(others) == 1 else ''}: keys written into it would move {listed} too; give '{obj.name}' an "
            "action of its own first (the user count beside the action's name makes a single-user copy)."
        )


def sharing(obj: bpy.types.Object) -> list[bpy.types.Object]:
    """The other objects that play the F-curves of the action ``obj`` plays, in the same slot (another slot of
    the action holds other F-curves): as their action or in an NLA strip."""
    data = obj.animation_data
    played = (data.action, data.action_slot)
    out = []
    for other in bpy.data.objects:
        other_data = other.animation_data
        if other == obj or other_data is None:
            continue
        strips = (strip for track in other_data.nla_tracks for strip in track.strips)
        if (other_data.action, other_data.action_slot) == played or any(
            (strip.action, strip.action_slot) == played for strip in strips
        ):
            out.append(other)
    return out


#: New keys' attributes by name, as :mod:`.keys.splice` writes them one key at a time.
NEW_KEY_ATTRIBUTES = {
    name: next(item.identifier for item in _KEYFRAME[name].enum_items if item.value == value)
    if _KEYFRAME[name].type == "ENUM"
    else (bool(value) if _KEYFRAME[name].type == "BOOLEAN" else value)
    for name, value in NEW_KEY.items()
}
RANGE_SLACK = 1e-3  #: keys this close outside a replaced range are replaced too


@functools.lru_cache(maxsize=8)
def _new_key_arrays(count: int) -> tuple[tuple[str, np.ndarray], ...]:
    """What :meth:`ActionEdit._key_new` sets on ``count`` keys besides where they are, made once per count."""
    return tuple((name, np.full(count, NEW_KEY[name], np.float32)) for name in ("back", "amplitude", "period"))


@dataclass(frozen=True)
class _Removed:
    """An F-curve an edit removed: its group and every key, to make it again on rollback."""

    group: str
    keys: dict


@dataclass
class ActionEdit:
    """Key edits on one object's action that can be undone as a whole if anything fails midway."""

    obj: bpy.types.Object
    _created_action: bool = False
    _previous_slot: object = None
    _created: dict = field(default_factory=dict)  #: (data path, index) of F-curves this edit created, as keys
    #: (data path, index, what to put back), in the order the edits were made: every key before the edit (None
    #: for none), (first index, keys there now, keys there before) for a range spliced in place, or the
    #: F-curve removed
    _undo: list = field(default_factory=list)
    _curves: dict | None = None  #: (data path, index) -> F-curve, once looked up
    _collection: object = None  #: the F-curves of the action (the slot's channelbag's)
    _groups: dict = field(default_factory=dict)  #: channel groups by name, once looked up

    def __post_init__(self):
        data = self.obj.animation_data
        self._previous_slot = data.action_slot if data is not None else None

    def fcurve(self, path: str, index: int, group: str) -> bpy.types.FCurve:
        """The F-curve for ``path[index]``, created in ``group`` if missing."""
        self._lookup()
        curve = self._curves.get((path, index))
        if curve is None:
            curve = _new_fcurve(self.obj, self._collection, path, index, group, self._groups)
            self._curves[(path, index)] = curve
            self._created[(path, index)] = None
        return curve

    def replace_range(self, fcurve: bpy.types.FCurve, frames: np.ndarray, values: np.ndarray, start, end) -> None:
        """Key ``values`` at ``frames``, replacing the keys in [start, end]; all other keys stay bit-identical.

        New keys interpolate as the keys they replace did (:func:`.splice.held_interpolation`: a blocking
        pass's constant keys stay constant; Bézier on a curve that had none), with auto-clamped handles,
        which Blender computes; keys outside the range keep every attribute, their handles included. The cost is
        in proportion to the range and the keys it replaces, or to the whole curve when that is less.
        """
        points, channel = fcurve.keyframe_points, (fcurve.data_path, fcurve.array_index)
        if len(points) == 0:
            if channel not in self._created:  # a created curve goes as a whole
                self._undo.append((*channel, None))
            self._key_new(fcurve, frames, values)
            return
        first, stop = splice.bounds(points, start - RANGE_SLACK, end + RANGE_SLACK)
        if splice.cheaper(fcurve, points, first, stop, len(frames)):
            keys = splice.new_keys(fcurves(self.obj), fcurve, points, first, stop, frames, values, NEW_KEY_ATTRIBUTES)
            self._undo.append((*channel, (first, len(keys), splice.read(points, first, stop))))
            splice.write(points, first, stop - first, keys)
            return
        old = read_keys(fcurve)
        self._undo.append((*channel, old))
        frame_of = old["co"][:, 0]
        keep = (frame_of < start - RANGE_SLACK) | (frame_of > end + RANGE_SLACK)
        count = int(keep.sum()) + len(frames)
        merged = {}
        for name, width, dtype in KEY_FIELDS:
            shape = (count, width) if width > 1 else (count,)
            merged[name] = np.empty(shape, dtype)
        new_co = np.column_stack([frames, values]).astype(np.float32)
        order = np.argsort(np.concatenate([frame_of[keep], new_co[:, 0]]), kind="stable")
        is_new = np.concatenate([np.zeros(int(keep.sum()), bool), np.ones(len(frames), bool)])[order]
        interpolation = old["interpolation"][splice.in_effect(frame_of, frames)]
        for name, _, _ in KEY_FIELDS:
            fresh = new_co if name in ("co", "handle_left", "handle_right") else np.full(len(frames), NEW_KEY[name])
            fresh = interpolation if name == "interpolation" else fresh
            merged[name][:] = np.concatenate([old[name][keep], fresh.astype(old[name].dtype)])[order]
        write_keys(fcurve, merged)
        fcurve.update()  # Blender computes the new keys' handles...
        computed = read_keys(fcurve)
        for name in ("handle_left", "handle_right"):  # ...and the kept keys get theirs back
            computed[name][~is_new] = merged[name][~is_new]
            fcurve.keyframe_points.foreach_set(name, computed[name].ravel())

    def set_keys(self, path: str, index: int, group: str, keys: dict[str, np.ndarray] | None) -> None:
        """Make ``path[index]`` hold exactly ``keys`` (as from :func:`read_keys`), every attribute; None: no
        F-curve at all."""
        self._lookup()
        channel = (path, index)
        curve = self.fcurve(path, index, group) if keys is not None else self._curves.get(channel)
        if curve is None:
            return
        if channel not in self._created:  # a created curve goes as a whole
            self._undo.append((*channel, read_keys(curve) if keys is not None else _Removed(group, read_keys(curve))))
        if keys is not None:
            write_keys(curve, keys)
            return
        self._collection.remove(curve)
        del self._curves[channel]
        self._created.pop(channel, None)

    def _lookup(self) -> None:
        """The action's F-curves by channel, looked up once (finding a curve by path searches them all); the
        action is made here, at the first key written, so reading the take before sees none."""
        if self._curves is None:
            _, self._created_action = ensure_action(self.obj)
            self._collection = fcurves(self.obj, create=True)
            self._curves = {(c.data_path, c.array_index): c for c in self._collection}

    @staticmethod
    def _key_new(fcurve: bpy.types.FCurve, frames: np.ndarray, values: np.ndarray) -> None:
        """Key an F-curve that has no keys yet: the same keys, without merging. A key added in bulk is
        already Bézier, auto-clamped, eased automatically, of type Keyframe and selected."""
        points = fcurve.keyframe_points
        points.add(len(frames))
        co = np.empty((len(frames), 2), np.float32)
        co[:, 0], co[:, 1] = frames, values
        points.foreach_set("co", co.ravel())
        for name, array in _new_key_arrays(len(frames)):
            points.foreach_set(name, array)
        fcurve.update()

    def rollback(self) -> None:
        """Put the action back as it was before this edit."""
        curves = fcurves(self.obj)
        for path, index, before in reversed(self._undo):
            if isinstance(before, _Removed):
                write_keys(_new_fcurve(self.obj, curves, path, index, before.group), before.keys)
                continue
            curve = curves.find(path, index=index)
            if before is None:
                curve.keyframe_points.clear()
            elif isinstance(before, dict):
                write_keys(curve, before)
            else:
                first, count, keys = before
                splice.write(curve.keyframe_points, first, count, keys)
        for path, index in self._created:
            curve = curves.find(path, index=index)
            if curve is not None:
                curves.remove(curve)
        data = self.obj.animation_data
        if self._created_action:
            action = data.action
            data.action = None
            bpy.data.actions.remove(action)
        elif data is not None:
            data.action_slot = self._previous_slot
