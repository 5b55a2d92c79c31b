# SPDX-License-Identifier: GPL-3.0-or-later
"""Keys of one frame range replaced inside a long F-curve, at a cost in proportion to the range.

Whole-array writes (``foreach_get``/``foreach_set``) cost in proportion to every key of a curve: on a
curve of 100,000 keys, replacing ten of them that way reads and writes all 100,000. Here the keys in
the range are found by bisection, overwritten in place one by one, and the difference in their number
inserted or removed; only the keys near the range are looked at. Blender computes the new keys'
handles on a scratch curve holding them and :data:`WINDOW` keys on each side: an automatic handle
depends on its two neighbours, and the continuous-acceleration smoothing new curves get by default on
a run of automatic handles, whose pull from a key dies away by a factor of about 3.7 per key.
:func:`cheaper` tells which way costs less for given counts.
"""

import numpy as np

#: Every stored attribute of a keyframe, which together restore a key bit for bit; written in this order,
#: so handle types come before the handles.
ATTRIBUTES = (
    "interpolation",
    "handle_left_type",
    "handle_right_type",
    "easing",
    "back",
    "amplitude",
    "period",
    "type",
    "select_control_point",
    "select_left_handle",
    "select_right_handle",
    "co",
    "handle_left",
    "handle_right",
)
SCRATCH = '["limb_ik scratch"]'  #: data path of the scratch curve, removed before the edit returns
WINDOW = 16  #: keys on each side of the range copied to the scratch curve (0.27 ** 16 is about 1e-9)
#: What the handles Blender computes depend on, copied from the neighbouring keys to the scratch curve.
SHAPE = ("interpolation", "handle_left_type", "handle_right_type", "co", "handle_left", "handle_right")
#: Blender merges a key inserted this close to another (frames); placeholders keep further apart.
INSERT_THRESHOLD = 0.01
SAME_FRAME = 1e-3  #: a key this close to a frame is the key at that frame
# Measured costs (microseconds, Blender 5.0 on the benchmark machine), for choosing the cheaper way.
WHOLE_PER_KEY = 1.3  #: reading and writing every attribute of a key in bulk, handles recomputed
SPLICE_PER_KEY = 25.0  #: a key overwritten one attribute at a time, the one it replaces saved
SPLICE_FIXED = 300.0  #: bisection and the scratch curve
SHIFT_PER_KEY = 0.012  #: inserting one key moves every key of the curve (a removal about a tenth of it)


def bounds(points, low: float, high: float) -> tuple[int, int]:
    """The first key at or after frame ``low`` and the first after ``high`` (keys in time order)."""
    return _first(points, low, False), _first(points, high, True)


def _first(points, frame: float, after: bool) -> int:
    lo, hi = 0, len(points)
    while lo < hi:
        mid = (lo + hi) // 2
        x = points[mid].co[0]
        if x < frame or (after and x == frame):
            lo = mid + 1
        else:
            hi = mid
    return lo


def cheaper(fcurve, points, first: int, stop: int, new: int) -> bool:
    """Whether splicing ``new`` keys in place of keys ``first`` to ``stop`` costs less than rewriting the
    whole curve, and gives the same handles: no cycle through the whole curve, and room between the
    neighbouring keys for placeholders."""
    total, replaced = len(points), stop - first
    cost = SPLICE_FIXED + SPLICE_PER_KEY * (new + replaced)
    cost += SHIFT_PER_KEY * total * (max(new - replaced, 0) + 0.1 * max(replaced - new, 0))
    if cost >= WHOLE_PER_KEY * (total - replaced + new):
        return False
    cyclic = len(fcurve.modifiers) and fcurve.modifiers[0].type == "CYCLES" and not fcurve.modifiers[0].mute
    if cyclic:
        return False
    low, high = _gap(points, first, stop, max(new, replaced))
    return (high - low) > 2.0 * INSERT_THRESHOLD * (max(new, replaced) + 1)


def _gap(points, first: int, stop: int, count: int) -> tuple[float, float]:
    """The frames between which keys ``first`` to ``stop`` lie: their neighbours', or as far as needed."""
    inside = [points[i].co[0] for i in range(first, stop)] if stop > first else []
    low = points[first - 1].co[0] if first > 0 else min(inside, default=0.0) - count - 1.0
    high = points[stop].co[0] if stop < len(points) else max(inside, default=low) + count + 1.0
    return low, high


def read(points, first: int, stop: int) -> list[tuple]:
    """The keys ``first`` to ``stop``, every attribute of each."""
    return [tuple(_copy(getattr(points[i], name)) for name in ATTRIBUTES) for i in range(first, stop)]


def _copy(value):
    return tuple(value) if not isinstance(value, (str, bool, float, int)) else value


def write(points, first: int, replaced: int, keys: list[tuple]) -> None:
    """Put ``keys`` (as from :func:`read`, in time order) in place of the ``replaced`` keys from ``first``,
    between the same neighbours."""
    extra = len(keys) - replaced
    if extra > 0:  # placeholders, evenly between the neighbours, then new keys among them
        low, high = _gap(points, first, first + replaced, len(keys))
        spots = np.linspace(low, high, len(keys) + 2)[1:-1]
        for i in range(replaced):
            points[first + i].co = (spots[i], 0.0)
        # Inserting splits the neighbours' handles to keep the curve's shape: they get theirs back.
        neighbours = [
            (i, tuple(points[i].handle_left), tuple(points[i].handle_right))
            for i in (first - 1, first + replaced)
            if 0 <= i < len(points)
        ]
        for spot in spots[replaced:]:
            points.insert(float(spot), 0.0, options={"FAST"})
        for i, left, right in neighbours:
            point = points[i if i < first else i + extra]
            point.handle_left, point.handle_right = left, right
    for _ in range(-extra):
        points.remove(points[first + len(keys)], fast=True)
    for i, key in enumerate(keys):
        point = points[first + i]
        for name, value in zip(ATTRIBUTES, key):
            setattr(point, name, value)


def held_interpolation(points, first: int, stop: int, frames) -> list[str]:
    """Per frame of ``frames`` (in time order), the interpolation of the key of ``points`` in effect there
    (:func:`in_effect`), looking only at the keys ``first`` to ``stop`` and their neighbours: what replaces keys
    ``first`` to ``stop`` interpolates as they did (a blocking pass's constant keys stay constant)."""
    low = max(min(first, len(points)) - 1, 0)
    high = min(max(stop, low + 1), len(points))
    index = in_effect([points[i].co[0] for i in range(low, high)], frames, low, len(points))
    return [points[i].interpolation for i in index]


def in_effect(key_frames, frames, offset: int = 0, count: int | None = None) -> np.ndarray:
    """Per frame of ``frames``, the index of the key whose interpolation holds there, in a curve of ``count`` keys
    (default: just these) whose keys from ``offset`` on are at ``key_frames`` (time order): the last at or before
    the frame, else the first; for the curve's last key, whose own interpolation Blender never uses, the one before."""
    count = offset + len(key_frames) if count is None else count
    at = np.searchsorted(key_frames, np.asarray(frames) + SAME_FRAME, side="right") - 1
    at = np.clip(at, 0, len(key_frames) - 1) + offset
    return np.where((at == count - 1) & (count > 1), at - 1, at)


def new_keys(curves, fcurve, points, first: int, stop: int, frames, values, defaults: dict) -> list[tuple]:
    """Keys at ``frames`` with ``values`` (attributes ``defaults``, by name, but for the interpolation: the replaced
    keys', :func:`held_interpolation`) to go in place of keys ``first`` to ``stop`` of ``fcurve``, with the handles
    Blender gives them there. ``curves``: the collection ``fcurve`` is in, where the scratch curve is made."""
    interpolation = held_interpolation(points, first, stop, frames)
    before = [[getattr(points[i], name) for name in SHAPE] for i in range(max(first - WINDOW, 0), first)]
    after = [[getattr(points[i], name) for name in SHAPE] for i in range(stop, min(stop + WINDOW, len(points)))]
    co = np.column_stack([frames, values]).astype(np.float32)
    scratch = curves.new(SCRATCH, index=0)
    try:
        scratch.extrapolation, scratch.auto_smoothing = fcurve.extrapolation, fcurve.auto_smoothing
        keys = scratch.keyframe_points
        keys.add(len(before) + len(co) + len(after))
        for n, shape in (*enumerate(before), *enumerate(after, len(before) + len(co))):
            for name, value in zip(SHAPE, shape):
                setattr(keys[n], name, value)
        for n, (frame, value) in enumerate(co.tolist(), len(before)):
            keys[n].co = (frame, value)
            keys[n].interpolation = interpolation[n - len(before)]
        scratch.update()
        handles = {}
        for name in ("handle_left", "handle_right"):
            array = np.empty(2 * len(keys), np.float32)
            keys.foreach_get(name, array)
            handles[name] = array.reshape(-1, 2)[len(before) : len(before) + len(co)]
    finally:
        curves.remove(scratch)
    own = {"co": co, **handles, "interpolation": interpolation}
    return [
        tuple(_value(own[name][n]) if name in own else defaults[name] for name in ATTRIBUTES)
        for n in range(len(frames))
    ]


def _value(value):
    """A key attribute as :func:`write` sets it: a pair as a tuple, anything else as it is."""
    return tuple(value.tolist()) if isinstance(value, np.ndarray) else value
