# SPDX-License-Identifier: GPL-3.0-or-later
"""What a planting bake says of the pose it keyed (``rig/planting/limits.py``), on measurements made up here: each
limit names the legs with frames beyond it, and those frames; a take where no foot stands is named whole."""

import math

import numpy as np
import pytest

LEGS = ["leg.L", "leg.R"]
FRAMES = list(range(101, 141))


def _found(lik, travels=True, **changes):
    """Measurements of two legs standing on every frame but the first, all within the limits, but for ``changes``."""
    count = len(FRAMES)
    contact = np.ones((count, 2), bool)
    contact[0] = False
    values = {
        "contact": contact,
        "height": np.where(contact, 0.001, np.nan),
        "pitch": np.where(contact, math.radians(1.0), np.nan),
        "sink": np.zeros((count, 2)),
        "turn": np.zeros((count, 2)),
        "slide": np.zeros((count, 2)),
        "without_ground": np.zeros((count, 2), bool),
        "travels": travels,
        "under": np.zeros((count, 2)),
        "tilt": np.zeros((count, 2)),
        "elsewhere": np.zeros((count, 2)),
    }
    for name, (rows, leg, value) in changes.items():
        values[name][rows, leg] = value
    return lik.rig.planting.measured.Measured(**values)


def test_a_take_within_every_limit_names_no_leg(lik):
    assert lik.rig.planting.limits.beyond(LEGS, _found(lik), FRAMES) == {}


def test_a_height_beyond_its_limit_names_the_leg_the_frames_and_the_figure(lik):
    said = lik.rig.planting.limits.beyond(LEGS, _found(lik, height=(slice(20, 26), 1, 0.025)), FRAMES)
    assert list(said) == ["leg.R"]
    assert "its sole is up to 25.0 mm off its height" in said["leg.R"] and "6 frames from 121 to 126" in said["leg.R"]


def test_a_few_frames_beyond_the_95th_percentile_name_nothing(lik):
    """One frame of 78 standing ones beyond 10 mm is within the 95th percentile."""
    assert lik.rig.planting.limits.beyond(LEGS, _found(lik, height=(slice(30, 31), 0, 0.025)), FRAMES) == {}


@pytest.mark.parametrize(
    "change,text",
    [
        ({"pitch": (slice(1, 40), 0, math.radians(7.0))}, "its pitch up to 7.0° off"),
        ({"sink": (slice(5, 6), 0, 0.012)}, "goes up to 12.0 mm into the ground (beyond 5.0 mm at frame 106)"),
        ({"slide": (slice(10, 12), 0, 0.02)}, "slides up to 20.0 mm as it stands"),
    ],
)
def test_each_limit_names_the_leg_beyond_it(lik, change, text):
    said = lik.rig.planting.limits.beyond(LEGS, _found(lik, **change), FRAMES)
    assert list(said) == ["leg.L"] and text in said["leg.L"], said


def test_a_cycle_walked_in_place_may_slide(lik):
    slide = {"slide": (slice(10, 12), 0, 0.02)}
    assert lik.rig.planting.limits.beyond(LEGS, _found(lik, travels=False, **slide), FRAMES) == {}


def test_a_take_where_no_foot_stands_names_every_leg(lik):
    found = _found(lik, contact=(slice(None), slice(None), False))
    said = lik.rig.planting.limits.beyond(LEGS, found, FRAMES)
    assert list(said) == LEGS and all(
        "No planted foot stands on any frame as the figures count it" in text for text in said.values()
    )


def test_the_cause_is_named_where_the_take_or_the_settings_show_it(lik):
    """A sole the take digs under its floor; ground steeper than the Max Foot Angle; a slide where planting did not
    stand the foot."""
    beyond = lik.rig.planting.limits.beyond
    rows = slice(20, 26)
    dug = _found(lik, height=(rows, 0, 0.03), under=(rows, 0, 0.03))
    assert "the take has it up to 30.0 mm under its floor there" in beyond(LEGS, dug, FRAMES)["leg.L"]
    steep = _found(lik, pitch=(slice(1, 40), 0, math.radians(9.0)), tilt=(slice(1, 40), 0, math.radians(45.0)))
    assert (
        "tilts up to 45.0°, more than the Max Foot Angle (40.0°)"
        in beyond(LEGS, steep, FRAMES, max_tilt=math.radians(40.0))["leg.L"]
    )
    slid, held = _found(lik, slide=(rows, 1, 0.02)), np.ones((len(FRAMES), 2), bool)
    assert "force it down" not in beyond(LEGS, slid, FRAMES, held)["leg.R"]  # held, and slid: no cause shows
    assert "Foot Lock is off; force it down under Contacts" in beyond(LEGS, slid, FRAMES, held, locked=False)["leg.R"]
    held[rows, 1] = False
    assert "planting does not stand it there" in beyond(LEGS, slid, FRAMES, held)["leg.R"]
    assert "under its floor" not in beyond(LEGS, _found(lik, height=(rows, 0, 0.03)), FRAMES)["leg.L"]


def test_a_foot_standing_on_another_point_of_it_says_so(lik):
    """A foot whose pitch or height is read at another point of it than the one the take stands on (a hoof on a bump
    touching with its heel where the take has its toe down) is named with how far that point is from the take's, at
    the frames it does; a point within 1 cm of the take's is the same."""
    beyond = lik.rig.planting.limits.beyond
    rows = slice(1, 40)
    pitched = _found(lik, pitch=(rows, 0, math.radians(9.0)), elsewhere=(slice(1, 11), 0, 0.061))
    said = beyond(LEGS, pitched, FRAMES)["leg.L"]
    assert (
        "its pitch up to 9.0° off (beyond 5.0° at 39 frames from 102 to 140: at 10 of those frames it stands on "
        "another point of its foot than the take does, up to 61.0 mm from it, and is measured there)" in said
    )
    dug = _found(lik, height=(rows, 1, 0.03), under=(rows, 1, 0.03), elsewhere=(rows, 1, 0.02))
    assert (
        "the take has it up to 30.0 mm under its floor there; there it stands on another point of its foot than the "
        "take does, up to 20.0 mm from it" in beyond(LEGS, dug, FRAMES)["leg.R"]
    )
    near = _found(lik, pitch=(rows, 0, math.radians(9.0)), elsewhere=(rows, 0, 0.009))
    assert "another point" not in beyond(LEGS, near, FRAMES)["leg.L"]


def test_a_take_standing_under_its_floor_is_named(lik):
    """Planting reads a stance under the floor as lower ground and keeps it under the ground it plants on: right for
    a take made on lower ground, wrong for one that digs into its floor, so it is said either way."""
    beyond, found = lik.rig.planting.limits.beyond, _found(lik)
    lowered = np.zeros((len(FRAMES), 2))
    lowered[10:30, 1] = 0.08
    said = beyond(LEGS, found, FRAMES, lowered=lowered)
    assert list(said) == ["leg.R"] and "the take stands it up to 80.0 mm under its floor" in said["leg.R"], said
    lowered[10:30, 1] = 0.004
    assert beyond(LEGS, found, FRAMES, lowered=lowered) == {}


def test_a_knee_is_said_to_turn_for_the_cause_planting_gives_at_its_frames(lik):
    """The bones of the left knee turn 15° beyond the take's at frames 111-112 (made up). Planting's own reading of
    its joints gives causes by frame: the worst of those within a frame of the keyed ones is said; one far from them
    (frame 130) is not, and with none near, the sentence says the joints turn no faster than the limit there, the
    bones further. Without planting's reading (a foot report), no cause."""
    beyond = lik.rig.planting.limits.beyond
    found = _found(lik, turn=(slice(10, 12), 0, math.radians(15.0)))
    near = {"leg.L": [(113, 0.3, "the near one"), (112, 0.2, "the smaller one"), (130, 0.9, "the far one")]}
    said = beyond(LEGS, found, FRAMES, knee_causes=near)["leg.L"]
    assert "(beyond 10.0° at 2 frames from 111 to 112: the near one)" in said, said
    far = {"leg.L": [(130, 0.9, "the far one")]}
    said = beyond(LEGS, found, FRAMES, knee_causes=far)["leg.L"]
    assert "planting turns its joints no more than 10.0° a frame beyond the take's there" in said, said
    assert "the far one" not in said
    assert "planting turns its joints" in beyond(LEGS, found, FRAMES, knee_causes={})["leg.L"]
    assert "(beyond 10.0° at 2 frames from 111 to 112)" in beyond(LEGS, found, FRAMES)["leg.L"]
