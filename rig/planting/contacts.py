# SPDX-License-Identifier: GPL-3.0-or-later
"""The animator's word on where each planted foot stands: forced ranges, saved on the limb, and the stances.

Each limb keeps a list of frame ranges forced DOWN (the foot stands and is locked there, whatever the
motion shows) or UP (it neither stands nor is locked); every other frame is automatic (Contact Height and
Contact Speed decide). Planting takes them as a (F, n) array (:func:`forced`), the bake and live alike, and
live's cached analysis keys on them (:func:`key`). :func:`stances` reads an analysis back as frame ranges.
"""

import numbers
from contextlib import contextmanager

import bpy
import numpy as np

from ...solvers.planting.contacts import AUTO, DOWN, UP
from ...solvers.planting.timeline import intervals
from ..errors import LimbIKError

#: The forced states, by the setting's identifiers; AUTO is no range at all.
STATES = {"DOWN": DOWN, "UP": UP}
#: How stances are named to scripts: the automatic ones, those forced down, the ranges forced up.
KINDS = {AUTO: "auto", DOWN: "down", UP: "up"}


def _limb(obj: bpy.types.Object, name: str):
    limb = obj.limb_ik.limbs.get(name)
    if limb is None:
        raise LimbIKError(f"Armature '{obj.name}' has no limb named '{name}' to force contacts on.")
    return limb


def force(obj: bpy.types.Object, name: str, start: int, end: int, state: str) -> None:
    """Force the foot of limb ``name`` ``state`` ("DOWN", "UP", or "AUTO": back to automatic) from frame
    ``start`` to ``end``, inclusive; ranges of that limb it overlaps are cut back to the frames outside it."""
    state = state.upper()
    if state not in (*STATES, "AUTO"):
        raise LimbIKError(f"A contact is forced DOWN, UP or back to AUTO, not '{state}'.")
    whole = all(isinstance(f, numbers.Integral) and not isinstance(f, bool) for f in (start, end))
    if not whole or end < start:
        raise LimbIKError(f"Limb '{name}': the frames to force must be whole numbers, {start} to {end}, in order.")
    limb, start, end = _limb(obj, name), int(start), int(end)
    kept = []
    for item in limb.contacts:
        first, last = item.frame_start, item.frame_end
        if last < start or first > end:
            kept.append((first, last, item.state))
            continue
        if first < start:
            kept.append((first, start - 1, item.state))
        if last > end:
            kept.append((end + 1, last, item.state))
    if state != "AUTO":
        kept.append((start, end, state))
    limb.contacts.clear()
    for first, last, kind in sorted(kept):
        item = limb.contacts.add()
        item.frame_start, item.frame_end, item.state = first, last, kind
    limb.active_contact_index = min(limb.active_contact_index, max(len(limb.contacts) - 1, 0))


def _given(obj: bpy.types.Object, given: dict) -> list[tuple[str, int, int, str]]:
    """``{limb: [(start, end, "down"|"up"|"auto"), …]}`` as (limb, start, end, STATE), checked."""
    if not isinstance(given, dict):
        raise LimbIKError(f"Contacts are given as {{limb: [(start, end, 'down'|'up'|'auto'), …]}}, not {given!r}.")
    out = []
    for name, ranges in given.items():
        _limb(obj, name)
        for item in ranges:
            if len(item) != 3 or not isinstance(item[2], str):
                raise LimbIKError(f"Limb '{name}': a forced contact is (start, end, 'down'|'up'|'auto'), not {item!r}.")
            out.append((name, item[0], item[1], item[2]))
    return out


@contextmanager
def forcing(obj: bpy.types.Object, given: dict | None):
    """Force the contacts ``given`` (as :func:`force` takes them, by limb) for what runs inside, and keep them;
    if that fails, every limb's forced ranges are put back as they were."""
    if not given:
        yield
        return
    before = {limb.name: saved(limb) for limb in obj.limb_ik.limbs}
    try:
        for name, start, end, state in _given(obj, given):
            force(obj, name, start, end, state)
        yield
    except Exception:
        for limb in obj.limb_ik.limbs:
            limb.contacts.clear()
            for first, last, state in before.get(limb.name, ()):
                item = limb.contacts.add()
                item.frame_start, item.frame_end, item.state = first, last, state
        raise


def saved(limb) -> tuple[tuple[int, int, str], ...]:
    """The forced ranges of ``limb`` as (start, end, STATE)."""
    return tuple((item.frame_start, item.frame_end, item.state) for item in limb.contacts)


def key(obj: bpy.types.Object, feet) -> tuple:
    """What the planting of ``feet`` (:class:`.legs.Foot`) depends on among the forced ranges."""
    limbs = obj.limb_ik.limbs
    return tuple(saved(limbs[foot.limb]) if foot.limb in limbs else () for foot in feet)


def forced(obj: bpy.types.Object, feet, frames: range) -> np.ndarray | None:
    """(F, n) the forced state of each of ``feet`` over ``frames`` (:data:`DOWN`, :data:`UP` or :data:`AUTO`);
    None when nothing is forced. Where ranges overlap, the later in the list wins."""
    ranges = key(obj, feet)
    if not any(ranges):
        return None
    out = np.full((len(frames), len(feet)), AUTO, np.int8)
    for n, limb_ranges in enumerate(ranges):
        for first, last, state in limb_ranges:
            out[max(first - frames.start, 0) : max(last - frames.start + 1, 0), n] = STATES[state]
    return out


def stances(feet, frames: range, standing: np.ndarray, forced_states: np.ndarray | None) -> dict[str, list]:
    """Per limb of ``feet``, its stances over ``frames`` as (start, end, kind): the runs of ``standing``
    (F, n), "down" where forced down and "auto" where the motion has them, and the ranges forced "up"."""
    if forced_states is None:
        forced_states = np.zeros(np.shape(standing), np.int8)
    out = {}
    for n, foot in enumerate(feet):
        found = []
        for state in (AUTO, DOWN):
            runs = intervals(standing[:, n] & (forced_states[:, n] == state))
            found += [(frames[a], frames[b], KINDS[state]) for a, b in runs]
        found += [(frames[a], frames[b], "up") for a, b in intervals(forced_states[:, n] == UP)]
        out[foot.limb] = sorted(found)
    return out
