# SPDX-License-Identifier: GPL-3.0-or-later
"""Why planting cannot keep a take as it is, in sentences naming the limb, the frames and the cause: a knee turning
fast (a take walked in place over ground that rises or falls, a foot the take keys into its floor, or ground that
asks more of the leg than its motion gives), a body moved further than its legs reach, and legs of a size no body
has, in metres."""

import numpy as np

from ...solvers.planting import Legs, Planted, travelling
from ...solvers.planting.knees import KNEE_POP, knee_turns
from ...solvers.planting.pelvis import moved_with
from ...solvers.planting.timeline import intervals

#: Metres a foot's ground rises or falls under it in one contact of a take walked in place beyond which a knee that
#: pops is said to pop for that: the foot slides back a stride over it.
IN_PLACE_RISE = 0.05
#: Metres under its floor that a take keys a mesh sole, beyond which a knee turning fast there is said to come from
#: planting standing that foot on the ground.
KEYED_UNDER = 0.005
#: Hip-to-ankle lengths (metres, one a Blender unit) outside which a leg is not the size of any body that walks: a take
#: in centimetres or inches imported at scale 1, or a rig scaled down twice. Planting's distances are metres. A
#: dinosaur at full size stands on legs up to 9 m long (Quaternius' T-rex).
LEG_SIZES = (0.01, 20.0)


#: A frame where planting turns a knee fast (the later of the two), how far (radians) and why, in a clause.
KneeCause = tuple[int, float, str]


def knee_causes(limbs: list[str], frames: range, legs: Legs, planted: Planted) -> dict[str, list[KneeCause]]:
    """Per planted limb, each frame where planting turns its knee by more than :data:`.knees.KNEE_POP` beyond the
    animation's turn since the frame before (the IK bends the knee to the hip-to-ankle distance planting gives, or
    leaves it straight where that is out of reach): the frame, the turn (radians) and a clause saying whether the
    foot stands, lands, leaves, is down without standing (sliding, or landing) or is in the air there, and why.
    Whether the keys turn it so, where and how far, is for the bake's read-back to say (:func:`.limits.beyond`),
    which names the cause of the frames it finds: a rig whose bones are not joined head to tail turns its bones
    otherwise than planting places its joints."""
    hips = moved_with(planted.body, legs.hip)
    turns = knee_turns(hips, planted.foot[..., :3, 3], legs.hip, legs.foot[..., :3, 3], legs.thigh, legs.shin)
    standing, down = planted.contacts.stance.any(axis=2), planted.contacts.down
    in_place = not travelling(legs)
    where = {(True, True): "while its foot stands", (False, True): "as its foot lands"}
    where |= {(True, False): "as its foot leaves", (False, False): "with its foot in the air"}
    causes = {}
    for n, limb in enumerate(limbs):
        rises = _rise_while_down(planted, n) if in_place else 0.0
        in_place_cause = (
            "the take walks in place: its feet slide back along the ground while down, and the ground under this one "
            f"rises or falls up to {1000 * rises:.0f} mm as it does, which no height of a body that stays follows for "
            "every leg; a take that travels, or flat ground, plants without it"
        )
        said = []
        for frame in np.flatnonzero(turns[:, n] > KNEE_POP) + 1:  # the later frame of each pair
            stands = bool(standing[frame - 1, n]), bool(standing[frame, n])
            foot_there = where[stands] if any(stands) or not down[frame, n] else "with its foot down but not standing"
            cause = in_place_cause if rises > IN_PLACE_RISE else _keyed_cause(planted, legs.girdle, limbs, n, frame)
            clause = f"planting turns it most at frame {frames[frame]}, {foot_there}: {cause}"
            said.append((frames[frame], float(turns[frame - 1, n]), clause))
        if said:
            causes[limb] = said
    return causes


def _keyed_cause(planted: Planted, girdle, limbs: list[str], n: int, frame: int) -> str:
    """Why leg ``n``'s knee turns fast at ``frame`` of a take that does not walk in place over rising or falling
    ground: a foot the take keys into its floor there, which planting stands on the ground, else the ground."""
    keyed, deepest = _keyed_under(planted, girdle, n, int(frame))
    if keyed is None:
        return "the ground there asks more of the leg than its motion gives"
    whose = "this foot" if keyed == n else f"the foot of '{limbs[keyed]}'"
    return (
        f"the take keys {whose} up to {1000 * deepest:.0f} mm into its floor there, and planting stands it on the "
        "ground: the legs it carries the body with bend for it"
    )


def _keyed_under(planted: Planted, girdle, n: int, frame: int) -> tuple[int | None, float]:
    """The foot that leg ``n``'s knee turns for, at ``frame`` or the one before, where planting raises a foot the take
    keys more than :data:`KEYED_UNDER` into its floor (:attr:`..solvers.planting.Planted.raised`): this one, else the
    most raised of its ``girdle`` (n,) (None: one for all); and how far. None where no foot is so raised."""
    raised = planted.raised[max(frame - 1, 0) : frame + 1].max(axis=0)
    if raised[n] > KEYED_UNDER:
        return n, float(raised[n])
    girdle = np.zeros(len(raised), int) if girdle is None else np.asarray(girdle)
    mates = np.flatnonzero(girdle == girdle[n])
    most = int(mates[np.argmax(raised[mates])])
    return (most, float(raised[most])) if raised[most] > KEYED_UNDER else (None, 0.0)


def _rise_while_down(planted: Planted, n: int) -> float:
    """The most the ground under foot ``n``'s ball rises or falls in one contact (its frames down), world units."""
    ground, contacts_of = planted.ground[:, n], intervals(planted.contacts.down[:, n])
    return max((float(np.ptp(ground[first : last + 1])) for first, last in contacts_of), default=0.0)


def body_moved(name: str, frames: range, least: float, reach: float, ground: str) -> str | None:
    """A sentence when planting moves the body of the armature ``name`` further than the take explains, else None.

    The rule: the pelvis is raised or lowered by more than the longest planted leg (hip to ankle,
    ``reach``) at every frame of the take (``least``: where it moves least). A leg bends or stretches by
    less than its length, so a ground that far from the authored floor everywhere is not the ground the
    take was made on; a slope or stairs climbing further over the take pass, as the body is near its
    authored height somewhere.
    """
    if abs(least) <= reach:
        return None
    return (
        f"Planting moves the body of '{name}' {abs(least):.2f} m {'up' if least > 0 else 'down'} or more on "
        f"every frame of the take it plants ({frames[0]} to {frames[-1]}), further than its legs reach "
        f"({reach:.2f} m): the ground collection '{ground}' is not where the take was made; move it "
        "under the feet, or set the Floor Height to the floor the take stands on."
    )


def unsized(limbs: list[str], lengths: np.ndarray) -> dict[str, str]:
    """Per limb whose leg (hip to ankle, ``lengths`` (n,) in world units, as the take holds it) is outside
    :data:`LEG_SIZES`, a sentence saying so: planting reads a Blender unit as a metre, so it finds stances and holds
    its limits by distances meant for a body of a real size."""
    low, high = LEG_SIZES
    return {
        limb: (
            f"Limb '{limb}' is {length:.3g} m from hip to ankle, reading a Blender unit as a metre as planting "
            f"does whatever the scene's Unit Scale, a size no leg that walks has ({low * 100:.0f} cm to {high:.0f} "
            "m): planting finds its stances and holds its limits by distances meant for a real body (a few "
            "centimetres), so what it keys for this leg is not to be trusted. Scale a rig made in centimetres by 0.01 "
            "(its object, or its import); plant a giant or a miniature scaled to a walking body's size, with its "
            "ground, then scale both back."
        )
        for limb, length in zip(limbs, map(float, lengths))
        if not low <= length <= high
    }


def frames_text(frames: range, missing: np.ndarray) -> str:
    first, last = frames[int(missing[0])], frames[int(missing[-1])]
    return f"frame {first}" if len(missing) == 1 else f"{len(missing)} frames from {first} to {last}"
