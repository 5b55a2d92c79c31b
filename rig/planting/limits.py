# SPDX-License-Identifier: GPL-3.0-or-later
"""The planting limits, held to the pose a planting bake keyed: the legs it missed them on, in sentences.

After the keys are written, the bake reads them back as they play and measures them against the take it
read (:func:`.measured.measure`, which calls nothing of the planting solver): its feet's height above the
ground where they stand, their pitch against it, how far they sink into it and slide over it, and how fast its
knees turn beyond the take's. The standing
frames of all the planted legs are pooled, as the limits are stated; where a figure is beyond its limit,
each leg with frames beyond it is named with them, and with the cause where the take or the settings show
it. A take where no foot stands by the figures' rule is named too: nothing can then be said of how it stands.
"""

import math

import numpy as np

from ...solvers.planting.knees import KNEE_POP
from .causes import KneeCause, frames_text
from .measured import CONTACT_HEIGHT, CONTACT_SPEED, Measured, percentile

SAID = "limb_ik_said"  #: the rig's custom property holding what its last planting bake said, per limb
HEIGHT_P95 = 0.01  #: metres a standing point may be off its authored height above the ground, 95th percentile
HEIGHT_MEDIAN = 0.005  #: and at the median
DEEPEST = 0.005  #: metres an ankle or standing point may go into the ground
PITCH_P95 = math.radians(5.0)  #: how far a standing foot's pitch may be off its authored one, 95th percentile
SLIDE = 0.005  #: metres a standing foot may slide, in a take whose body travels
ELSEWHERE = 0.01  #: metres from the point of a foot the take stands on beyond which it stands on another


def beyond(
    limbs: list[str],
    found: Measured,
    frames,
    held: np.ndarray | None = None,
    max_tilt: float = math.pi / 2,
    locked: bool = True,
    lowered: np.ndarray | None = None,
    keyed: bool = True,
    knee_causes: dict[str, list[KneeCause]] | None = None,
) -> dict[str, str]:
    """Per leg (``limbs``, the columns of ``found``, measured at ``frames``) beyond a planting limit, a sentence
    naming the figure, how far, the frames and what causes it where that shows: ``held`` (F, n), where planting
    stood each foot; ``max_tilt``, the steepest ground a foot tips to follow (radians); ``locked``, whether the
    foot lock held standing feet; ``lowered`` (F, n), how far under its floor the take stands each foot (metres,
    the level planting read from its stances, which it keeps under the ground it plants on); ``keyed``, whether
    what was measured is keys a bake wrote, else the rig as it plays (a foot report); ``knee_causes``: per leg whose
    knee planting turned fast, the frames and why (:attr:`.legs.Analysis.knee_causes`), the worst of them within a frame
    of where its bones turn beyond the limit said there."""
    standing = found.contact & ~np.isnan(found.height)
    if not standing.any():
        return dict.fromkeys(limbs, _no_stance(found.travels))
    said: dict[str, list[str]] = {limb: [] for limb in limbs}

    def name(values: np.ndarray, limit: float, text: str, unit, cause) -> None:
        for n, limb in enumerate(limbs):
            over = np.flatnonzero(np.nan_to_num(values[:, n]) > limit)
            if len(over):
                worst = unit(float(np.nanmax(values[over, n])))
                because = cause(n, over)
                said[limb].append(
                    f"{text.format(worst)} (beyond {unit(limit)} at {frames_text(frames, over)}"
                    + (f": {because})" if because else ")")
                )

    def dug_in(n: int, over: np.ndarray) -> str | None:
        if np.median(found.under[over, n]) <= HEIGHT_MEDIAN:
            return None
        deepest = _mm(float(found.under[over, n].max()))
        return f"the take has it up to {deepest} under its floor there"

    def elsewhere(n: int, over: np.ndarray) -> str | None:
        away = found.elsewhere[over, n] > ELSEWHERE
        if not away.any():
            return None
        where = "there" if away.all() else f"at {np.count_nonzero(away)} of those frames"
        return (
            f"{where} it stands on another point of its foot than the take does, up to "
            f"{_mm(float(found.elsewhere[over, n].max()))} from it, and is measured there"
        )

    def steep(n: int, over: np.ndarray) -> str | None:
        if np.median(found.tilt[over, n]) <= max_tilt:
            return None
        return (
            f"the ground there tilts up to {_degrees(float(found.tilt[over, n].max()))}, more than the Max Foot Angle "
            f"({_degrees(max_tilt)}) lets a foot follow"
        )

    def loose(n: int, over: np.ndarray) -> str | None:
        if held is not None and held[over, n].mean() <= 0.5:
            why = "planting does not stand it there, as the rig's Contact Height and Contact Speed read the take"
        elif not locked:
            why = "Foot Lock is off"
        else:
            return None
        return f"{why}; force it down under Contacts to hold it"

    opening = (
        "is keyed beyond the planting limits (measured on the keys as they play"
        if keyed
        else "plays beyond the planting limits (measured as it plays"
    )
    heights = found.height[standing]
    if percentile(heights, 95) > HEIGHT_P95 or percentile(heights, 50) > HEIGHT_MEDIAN:
        limit = HEIGHT_P95 if percentile(heights, 95) > HEIGHT_P95 else HEIGHT_MEDIAN
        name(found.height, limit, "where it stands, its sole is up to {} off its height", _mm, _all(dug_in, elsewhere))
    if percentile(found.pitch[standing], 95) > PITCH_P95:
        name(found.pitch, PITCH_P95, "its pitch up to {} off", _degrees, _all(steep, elsewhere))
    name(found.sink, DEEPEST, "it goes up to {} into the ground", _mm, lambda n, over: None)
    if lowered is not None and percentile(lowered[standing], 95) > HEIGHT_P95:
        text = "the take stands it up to {} under its floor, which planting reads as lower ground and keeps under the"
        name(np.where(standing, lowered, 0.0), HEIGHT_P95, text + " ground it plants on", _mm, lambda n, over: None)
    if found.travels:
        name(found.slide, SLIDE, "it slides up to {} as it stands", _mm, loose)
    # As the bones turn, not as planting placed the joints: a shin turned about its length against the thigh where
    # the leg is straight turns the bones of a rig whose bones are not joined head to tail (a glTF import) apart,
    # though its joints keep their bend. Where the joints turn no faster than the limit, the sentence says so.
    bones = (
        f"planting turns its joints no more than {_degrees(KNEE_POP)} a frame beyond the take's there: its bones, read "
        "head to tail, turn further"
    )

    def knee(n: int, over: np.ndarray) -> str | None:
        if knee_causes is None:
            return None
        keyed = {int(frames[i]) for i in over}
        causes = knee_causes.get(limbs[n], ())
        near = [(turn, why) for frame, turn, why in causes if keyed & {frame - 1, frame, frame + 1}]
        return max(near)[1] if near else bones

    name(found.turn, KNEE_POP, "its knee turns up to {} more in one frame than the animation turns it", _degrees, knee)
    return {
        limb: f"Limb '{limb}' {opening}, at the lowest point of its sole, against the take as authored): "
        f"{'; '.join(parts)}; look at those frames."
        for limb, parts in said.items()
        if parts
    }


def remember(obj, said: dict[str, str]) -> None:
    """Keep on ``obj`` what its planting bake said (limb -> sentence), for the sidebar to show until the next one."""
    obj[SAID] = dict(said)


def remembered(obj) -> dict[str, str] | None:
    """What the last planting bake of ``obj`` said, per limb (:func:`remember`: empty where it said nothing); None
    before one."""
    said = obj.get(SAID)
    return None if said is None else {str(limb): str(text) for limb, text in said.items()}


def forget(obj) -> None:
    """Drop what the last planting bake of ``obj`` said: its planting was removed."""
    if SAID in obj:
        del obj[SAID]


def _no_stance(travels: bool) -> str:
    rule = f"within {CONTACT_HEIGHT * 100:.0f} cm of its lowest" + (
        f" and slower than {CONTACT_SPEED} m/s" if travels else ""
    )
    return (
        f"No planted foot stands on any frame as the figures count it (its sole {rule}), so the bake cannot tell how "
        "the planted feet stand: look at the keyed take before using it."
    )


def _all(*causes):
    """A cause (leg, frames) -> sentence or None that names each of ``causes`` that shows there."""

    def named(n: int, over: np.ndarray) -> str | None:
        return "; ".join(text for cause in causes if (text := cause(n, over))) or None

    return named


def _mm(metres: float) -> str:
    return f"{metres * 1e3:.1f} mm"


def _degrees(radians: float) -> str:
    return f"{math.degrees(radians):.1f}°"
