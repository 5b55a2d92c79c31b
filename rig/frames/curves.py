# SPDX-License-Identifier: GPL-3.0-or-later
"""F-curves evaluated at many frames at once, exactly as Blender evaluates them.

Curves of the common kinds (constant, linear and Bézier keys, Blender's handle correction and choice of
cubic root included; constant and linear extrapolation; a Cycles modifier alone on its curve, any mode,
any count of cycles) are evaluated in numpy, all together, when they have no more keys than there are
times to evaluate. Any other curve (easing interpolations, other modifiers, sampled points), and one
whose keys outnumber the times (reading all of them would cost more), is evaluated by Blender's own
``FCurve.evaluate`` at each time. Blender computes in single precision and numpy in float64: values
agree to about 1e-7 of their size.
"""

import bpy
import numpy as np

_KEYFRAME = bpy.types.Keyframe.bl_rna.properties
_IPO = {name: _KEYFRAME["interpolation"].enum_items[name].value for name in ("CONSTANT", "LINEAR", "BEZIER")}
CONSTANT, LINEAR, BEZIER = _IPO["CONSTANT"], _IPO["LINEAR"], _IPO["BEZIER"]
#: Cycles modifier modes, as Blender numbers them: no cycling, repeat, repeat with offset, repeat mirrored.
CYCLE_MODES = {"NONE": 0, "REPEAT": 1, "REPEAT_OFFSET": 2, "MIRROR": 3}
EXACT = 1e-4  #: a time this close to a key takes the key's value (Blender's threshold)
SMALL = -1.0e-10  #: Bézier parameters from here to 1.000001 are on the segment (Blender's bounds)
FLT_EPSILON = float(np.finfo(np.float32).eps)


def evaluated(fcurve: bpy.types.FCurve) -> bool:
    """Whether Blender evaluates ``fcurve`` at all: not muted (itself or its group), valid, not empty."""
    group = fcurve.group
    return not (fcurve.mute or not fcurve.is_valid or (group is not None and group.mute) or fcurve.is_empty)


def evaluate(fcurves, times) -> np.ndarray:
    """(curves, times) values of ``fcurves`` at ``times``."""
    times = np.asarray(times, dtype=np.float64)
    out = np.empty((len(fcurves), len(times)))
    in_numpy = [n for n, curve in enumerate(fcurves) if len(curve.keyframe_points) <= len(times) and _plain(curve)]
    keys = Keys([fcurves[n] for n in in_numpy])
    out[in_numpy] = keys.evaluate(times)
    by_blender = set(range(len(fcurves))).difference(in_numpy)
    by_blender.update(in_numpy[n] for n in np.flatnonzero(~keys.covered))
    for n in by_blender:
        out[n] = [fcurves[n].evaluate(time) for time in times.tolist()]
    return out


def _plain(fcurve: bpy.types.FCurve) -> bool:
    """Whether ``fcurve`` has keys and no modifier but a Cycles one of the kind :class:`Keys` evaluates."""
    if len(fcurve.sampled_points):
        return False
    modifiers = [m for m in fcurve.modifiers if not m.mute]
    if not modifiers:
        return True
    first = modifiers[0]
    return (
        len(modifiers) == 1
        and fcurve.modifiers[0] == first
        and first.type == "CYCLES"
        and not (first.use_restricted_range or first.use_influence)
    )


class Keys:
    """The keys of several F-curves without sampled points or modifiers other than Cycles, read in bulk;
    ``covered`` tells which of them numpy evaluates (their keys' interpolations are covered, in order)."""

    def __init__(self, fcurves):
        counts = np.array([len(c.keyframe_points) for c in fcurves], int)
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
        self.counts = counts
        total = int(counts.sum())
        co, left, right = (np.empty((total, 2), np.float32) for _ in range(3))
        ipo = np.empty(total, np.int32)
        self.linear = np.zeros(len(fcurves), bool)  #: linear extrapolation (else constant)
        self.cycles = np.zeros((len(fcurves), 4), int)  #: mode and count before, mode and count after
        for n, curve in enumerate(fcurves):
            rows = slice(self.starts[n], self.starts[n] + counts[n])
            points = curve.keyframe_points
            for name, out in (("co", co), ("handle_left", left), ("handle_right", right)):
                points.foreach_get(name, out[rows].reshape(-1))
            points.foreach_get("interpolation", ipo[rows])
            self.linear[n] = curve.extrapolation == "LINEAR"
            for modifier in curve.modifiers:
                if not modifier.mute:
                    self.cycles[n] = (
                        CYCLE_MODES[modifier.mode_before],
                        modifier.cycles_before,
                        CYCLE_MODES[modifier.mode_after],
                        modifier.cycles_after,
                    )
        self.x, self.y = co[:, 0].astype(np.float64), co[:, 1].astype(np.float64)
        self.left, self.right = left.astype(np.float64), right.astype(np.float64)
        self.ipo = ipo
        self.reach = float(np.abs(self.x).max(initial=0.0))  #: the farthest key from frame 0
        self._segments = None
        curve = np.repeat(np.arange(len(fcurves)), counts)
        last = np.zeros(total, bool)
        last[self.starts + counts - 1] = True  # the last key's interpolation is never used
        odd = ~((ipo == CONSTANT) | (ipo == LINEAR) | (ipo == BEZIER)) & ~last
        odd[1:] |= (np.diff(self.x) < 0.0) & (curve[1:] == curve[:-1])
        self.covered = np.bincount(curve[odd], minlength=len(fcurves)) == 0

    def evaluate(self, times) -> np.ndarray:
        """(curves, times) values of every curve at every time of ``times`` (meaningless for curves not
        ``covered``)."""
        times = np.asarray(times, dtype=np.float64)
        covered = np.flatnonzero(self.covered)
        curve = np.repeat(covered, len(times))
        time = np.tile(times, len(covered))
        first, last = self.starts[curve], self.starts[curve] + self.counts[curve] - 1
        time, offset = self._cycle(curve, time, first, last)
        value = np.empty(len(time))
        before, after = time <= self.x[first], time >= self.x[last]
        after &= ~before
        value[before] = self._extrapolate(curve[before], time[before], first[before], +1)
        value[after] = self._extrapolate(curve[after], time[after], last[after], -1)
        inside = ~(before | after)
        value[inside] = self._interpolate(curve[inside], time[inside])
        out = np.full((len(self.counts), len(times)), np.nan)
        out[covered] = (value + offset).reshape(len(covered), len(times))
        return out

    def _cycle(self, curve, time, first, last):
        """The time each curve is read at under its Cycles modifier, and the value offset it adds."""
        offset = np.zeros(len(time))
        cycled = np.flatnonzero(self.cycles.any(axis=1)[curve])
        if not len(cycled):
            return time, offset
        time = time.copy()
        t, c = time[cycled], curve[cycled]
        x0, x1 = self.x[first[cycled]], self.x[last[cycled]]
        dx, dy = x1 - x0, self.y[last[cycled]] - self.y[first[cycled]]
        side = np.where(t < x0, -1, np.where(t > x1, 1, 0))
        mode = np.where(side < 0, self.cycles[c, 0], np.where(side > 0, self.cycles[c, 2], 0))
        cycles = np.where(side < 0, self.cycles[c, 1], self.cycles[c, 3])
        ends = np.where(side < 0, x0, x1)
        safe_dx = np.where(dx == 0.0, 1.0, dx)
        number = side * (t - ends) / safe_dx
        active = (side != 0) & (mode != 0) & (dx != 0.0) & ((cycles == 0) | (number <= cycles))
        within = np.fmod(t - ends, safe_dx)
        mirrored = mode == CYCLE_MODES["MIRROR"]
        on_end = within == 0.0
        reverse_end = mirrored & (number.astype(int) % 2 == 1)
        new = np.where(side > 0, np.where(reverse_end, x0, x1), np.where(reverse_end, x1, x0))
        reverse = ~on_end & mirrored & ((number + 1).astype(int) % 2 == 1)
        new = np.where(reverse, np.where(side < 0, x0, x1) - within, new)
        new = np.where(~on_end & ~reverse, x0 + within, new)
        new = np.where(new < x0, new + dx, new)
        shifted = np.where(side < 0, np.floor((t - ends) / safe_dx), np.ceil((t - ends) / safe_dx)) * dy
        time[cycled] = np.where(active, new, t)
        offset[cycled] = np.where(active & (mode == CYCLE_MODES["REPEAT_OFFSET"]), shifted, 0.0)
        return time, offset

    def _extrapolate(self, curve, time, end, toward):
        """Values beyond the first key (``toward`` +1) or the last (-1)."""
        x, y, ipo = self.x[end], self.y[end], self.ipo[end]
        single = self.counts[curve] == 1
        neighbour = np.where(single, end, end + toward)
        handle = self.left[end] if toward > 0 else self.right[end]
        run = np.where(ipo == LINEAR, self.x[neighbour] - x, x - handle[:, 0])
        rise = np.where(ipo == LINEAR, self.y[neighbour] - y, y - handle[:, 1])
        flat = (ipo == CONSTANT) | ~self.linear[curve] | (run == 0.0) | ((ipo == LINEAR) & single)
        slope = rise / np.where(flat, 1.0, run)
        return np.where(flat, y, y - slope * (x - time))

    def _interpolate(self, curve, time):
        """Values strictly between a curve's first and last keys."""
        # Every curve's keys shifted past the one before, so one sorted search finds each time's segment.
        shift = 2.0 * max(self.reach, np.abs(time).max(initial=0.0)) + 1.0
        order = self.x + shift * np.repeat(np.arange(len(self.counts)), self.counts)
        after = np.searchsorted(order, time + shift * curve, side="left")
        before = after - 1
        out = np.empty(len(time))
        exact_after, exact_before = np.abs(self.x[after] - time) < EXACT, np.abs(self.x[before] - time) < EXACT
        out[exact_before] = self.y[before[exact_before]]
        out[exact_after] = self.y[after[exact_after]]
        rest = np.flatnonzero(~(exact_after | exact_before))
        a, b, t = before[rest], after[rest], time[rest]
        duration = self.x[b] - self.x[a]
        held = (self.ipo[a] == CONSTANT) | (duration == 0.0)
        linear = ~held & (self.ipo[a] == LINEAR)
        out[rest[held]] = self.y[a[held]]
        lin = rest[linear]
        out[lin] = self.y[a[linear]] + (self.y[b[linear]] - self.y[a[linear]]) * (
            (t[linear] - self.x[a[linear]]) / duration[linear]
        )
        bezier = ~held & ~linear
        segment = a[bezier]
        x, y, flat = self._bezier_segments()
        t, found = _first_root(x[segment, 0] - t[bezier], *x[segment, 1:].T)
        c0, c1, c2, c3 = y[segment].T
        value = np.where(found, c0 + t * c1 + t * t * c2 + t * t * t * c3, 0.0)  # Blender gives 0 for no root
        out[rest[bezier]] = np.where(flat[segment], c0, value)
        return out

    def _bezier_segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per key, the Bézier segment to the next key (Blender's handle correction applied): (K, 4)
        coefficients of its frame and of its value in the segment's parameter, and whether it is flat."""
        if self._segments is None:
            following = np.minimum(np.arange(len(self.x)) + 1, len(self.x) - 1)  # a curve's last key: unused
            v1, v4 = np.column_stack([self.x, self.y]), np.column_stack([self.x[following], self.y[following]])
            v2, v3 = self.right, self.left[following]
            flat = (np.abs(v1[:, 1] - v4[:, 1]) < FLT_EPSILON) & (np.abs(v2[:, 1] - v3[:, 1]) < FLT_EPSILON)
            flat &= np.abs(v3[:, 1] - v4[:, 1]) < FLT_EPSILON
            v2, v3 = _corrected(v1, v2, v4, +1), _corrected(v4, v3, v1, -1)
            x, y = (
                np.column_stack([p0, 3.0 * (p1 - p0), 3.0 * (p0 - 2.0 * p1 + p2), p3 - p0 + 3.0 * (p1 - p2)])
                for p0, p1, p2, p3 in ((v[:, i] for v in (v1, v2, v3, v4)) for i in (0, 1))
            )
            self._segments = x, y, flat
        return self._segments


def _corrected(key, handle, other, toward) -> np.ndarray:
    """``handle`` of ``key`` shortened along itself so it reaches no further in time than ``other`` key
    (Blender's ``BKE_fcurve_correct_bezpart``)."""
    span = toward * (other[:, 0] - key[:, 0])
    delta = key - handle
    length = np.abs(delta[:, 0])
    too_long = length > span
    factor = np.where(too_long, span / np.where(length == 0.0, 1.0, length), 1.0)
    return np.where(too_long[:, None], key - factor[:, None] * delta, handle)


def _first_root(c0, c1, c2, c3) -> tuple[np.ndarray, np.ndarray]:
    """The first root in [SMALL, 1.000001] of ``c0 + c1 t + c2 t^2 + c3 t^3``, in the order Blender's
    ``solve_cubic`` tries them, and whether there is one."""
    candidates = np.full((len(c0), 3), np.nan)
    cubic = np.flatnonzero(c3 != 0.0)
    if len(cubic):
        a = c2[cubic] / c3[cubic] / 3.0
        b, c = c1[cubic] / c3[cubic], c0[cubic] / c3[cubic]
        p = b / 3.0 - a * a
        q = (2.0 * a * a * a - a * b + c) / 2.0
        d = q * q + p * p * p
        one = d > 0.0
        t = np.sqrt(d[one])
        candidates[cubic[one], 0] = np.cbrt(-q[one] + t) + np.cbrt(-q[one] - t) - a[one]
        double = d == 0.0
        t = np.cbrt(-q[double])
        candidates[cubic[double], 0] = 2.0 * t - a[double]
        candidates[cubic[double], 1] = -t - a[double]
        three = d < 0.0
        p, q, a = p[three], q[three], a[three]
        phi = np.arccos(np.clip(-q / np.sqrt(-p * p * p), -1.0, 1.0))
        t = np.sqrt(-p)
        cos_third = np.cos(phi / 3.0)
        sin_part = np.sqrt(np.maximum(3.0 - 3.0 * cos_third * cos_third, 0.0))
        rows = cubic[three]
        candidates[rows, 0] = 2.0 * t * cos_third - a
        candidates[rows, 1] = -t * (cos_third + sin_part) - a
        candidates[rows, 2] = -t * (cos_third - sin_part) - a
    lower = c3 == 0.0
    quadratic = np.flatnonzero(lower & (c2 != 0.0))
    if len(quadratic):
        a, b, c = c2[quadratic], c1[quadratic], c0[quadratic]
        discriminant = b * b - 4.0 * a * c
        two = discriminant > 0.0
        root = np.sqrt(discriminant[two])
        candidates[quadratic[two], 0] = (-b[two] - root) / (2.0 * a[two])
        candidates[quadratic[two], 1] = (-b[two] + root) / (2.0 * a[two])
        touching = discriminant == 0.0
        candidates[quadratic[touching], 0] = -b[touching] / (2.0 * a[touching])
    linear = np.flatnonzero(lower & (c2 == 0.0) & (c1 != 0.0))
    candidates[linear, 0] = -c0[linear] / c1[linear]
    candidates[lower & (c2 == 0.0) & (c1 == 0.0) & (c0 == 0.0), 0] = 0.0
    valid = (candidates >= SMALL) & (candidates <= 1.000001)
    found = valid.any(axis=1)
    pick = np.argmax(valid, axis=1)
    return np.where(found, candidates[np.arange(len(c0)), pick], 0.0), found
