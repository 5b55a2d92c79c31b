# SPDX-License-Identifier: GPL-3.0-or-later
"""Which frames of a foot down on the ground hold it on the ground, and which are a swing.

A foot standing, or sliding along the floor without standing (a cycle walked in place), is held: carried by the
ground under it. Some of those frames are a swing all the same: a foot hanging on a point that does not stand (its
toe over a step's edge), one skimming across an edge or through a swing, one landing. Each function takes one
foot's frames, plain arrays.
"""

import numpy as np

from .timeline import intervals


def held_part(hanging, standing) -> np.ndarray:
    """Which frames of one held run (m,) still hold: all but those at its ends where the foot hangs
    on a point that is not standing. A run that hangs throughout holds where the foot stands (``standing`` (m,)):
    there it rests on what holds it up, tipped and lifted, not carried off through the air by its hip (a stance
    on a stair whose toe is over the next tread, where no place along the foot has footing); one that never stands
    (a skim over an edge) is a swing."""
    keep = np.ones(len(hanging), bool)
    if hanging.all():
        return np.asarray(standing, bool).copy()
    keep[: np.argmin(hanging)] = False
    keep[len(hanging) - np.argmin(hanging[::-1]) :] = False
    return keep


def across_edges(edges, standing, from_hip) -> np.ndarray:
    """Which frames of one held run (m,) still hold: not a stretch where the foot slides without standing across an
    edge (``edges`` (m - 1,): its ground changes height between frames i and i + 1 more steeply than a foot
    follows, and by more than the contact height), within it or from the frames on either side, going the other
    way from its hip (``from_hip`` (m, 2): the foot's place from the hip, across the floor) than it goes while it
    stands: a skimming swing over a step's riser, onto the level it lands on. Such a stretch is in the air: the
    swing rises to where it lands, instead of being dragged up or down the edge in a frame. A stretch going the
    way the standing foot goes (the standing foot of a cycle walked in place, sliding back over the edge), and a
    run where the foot never stands, hold."""
    keep = np.ones(len(standing), bool)
    standing = np.asarray(standing, bool)
    stands = _standing_way(standing, from_hip)
    for first, last in intervals(~standing):
        if not edges[max(first - 1, 0) : last + 1].any():
            continue
        moved = from_hip[min(last + 1, len(standing) - 1)] - from_hip[max(first - 1, 0)]
        if moved @ stands < 0.0:
            keep[first : last + 1] = False
    return keep


def landings(held, standing, from_hip, lift, height: float) -> np.ndarray:
    """(F,) the frames of one foot's held runs (``held`` (F,)) that are a swing or a landing, where they go the other
    way from its hip (``from_hip`` (F, 2), across the floor) than the foot goes while it stands anywhere in the take:
    a run that never stands (a skim through a swing, its way read from the frames either side; cut by the take's last
    frame, all but that frame, where it lands) if longer than a frame or on other ground than it next stands on (its
    ``lift`` (F,), the ground's rise under it, off by more than ``height``: a touch on a lower tread it passes, held
    there, would jump the riser to land), the frames before a run's first stance, and those after its last (a toe
    dragged as it leaves, as a walk played backwards lands it). In the air, not a foot sliding on the ground (which,
    dragged over bumps or up a slope as fast as a swing goes, would fold and snap its knee). A run the take's first
    frame cuts is a foot leaving, still carrying."""
    stands = _standing_way(standing, from_hip)
    cut = np.zeros(len(held), bool)
    for first, last in intervals(held):
        stood = np.flatnonzero(standing[first : last + 1])
        if not len(stood) and first > 0:  # skimming the ground in a swing; cut by the take's end, landing on it
            moved = from_hip[min(last + 1, len(held) - 1)] - from_hip[first - 1]
            after = np.flatnonzero(standing[last:])  # the frames it stands on next, from the run's last
            elsewhere = len(after) > 0 and abs(lift[first] - lift[last + after[0]]) > height
            cut[first : last + (last < len(held) - 1)] = (last > first or elsewhere) and moved @ stands < 0.0
        if len(stood) and stood[0] > 0:  # sliding in to its first stance
            lands = first + stood[0]
            cut[first:lands] = (from_hip[lands] - from_hip[first]) @ stands < 0.0
        if len(stood) and first + stood[-1] < last:  # dragged on as it leaves its last one
            leaves = first + stood[-1]
            cut[leaves + 1 : last + 1] = (from_hip[last] - from_hip[leaves]) @ stands < 0.0
    return cut


def _standing_way(standing, from_hip) -> np.ndarray:
    """(2,) where a standing foot goes from its hip (``from_hip`` (m, 2)), summed over the frames it stands on
    (``standing`` (m,)) and the one before."""
    return np.diff(from_hip, axis=0)[standing[1:] & standing[:-1]].sum(axis=0)
