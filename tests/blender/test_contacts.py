# SPDX-License-Identifier: GPL-3.0-or-later
"""Contacts the animator forces: a foot forced down stands locked where the motion swings it, one forced up
is free; the ranges are saved in the file, survive undo and a planting setting changed, and live shows what
the bake writes. On the DeepMimic walk up a 10° slope, measured with bone positions."""

import json

import bpy
import numpy as np
import pytest

from takes import clips
from takes import measure as mocap

LEG = "leg.L"


def balls(rig: bpy.types.Object, frames) -> np.ndarray:
    """(F, 3) the left foot's tail (the walk has no toe bones: its ball), in world space, as it plays."""
    ankle = rig.limb_ik.limbs[LEG].end_bone
    out = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        out.append(rig.matrix_world @ rig.pose.bones[ankle].tail)
    return np.array(out, dtype=np.float64)


def slide(points: np.ndarray, axes=slice(None)) -> float:
    """The farthest a point strays from where it is on the first frame (metres), along ``axes`` (default: all)."""
    return float(np.linalg.norm(points[:, axes] - points[0, axes], axis=1).max())


def across(points: np.ndarray) -> float:
    """The farthest a point strays across the ground (horizontally) from where it is on the first frame."""
    return slide(points, slice(0, 2))


@pytest.fixture
def walk(lik):
    """The walk on the slope, its legs set up to plant there, its left foot's automatic stances, and the
    first frames of a swing, where the foot lifts: (first, last) a sixth of a second from the end of a stance."""
    rig, frames, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.name.startswith("leg")
    rig.limb_ik.ground = ground
    stances = [s for s in lik.api.contacts(rig)[LEG] if s[2] == "auto"]
    assert len(stances) >= 3
    swing = (stances[1][1] + 1, stances[1][1] + 5)
    return rig, ground, stances, swing


@pytest.mark.parametrize("verb", ["plant", "bake"])
def test_a_foot_forced_down_over_its_swing_stands_locked_and_is_baked(lik, walk, verb):
    rig, _, _, (first, last) = walk
    frames = range(first, last + 1)
    swung = balls(rig, frames)
    assert slide(swung) > 0.05, "the motion swings the foot"
    getattr(lik.api, verb)(rig, contacts={LEG: [(first, last, "down")]})
    assert slide(balls(rig, frames)) <= 0.005
    assert (first, last, "down") in lik.api.contacts(rig)[LEG]
    assert [(c.frame_start, c.frame_end, c.state) for c in rig.limb_ik.limbs[LEG].contacts] == [(first, last, "DOWN")]


def test_a_contact_forced_up_frees_the_foot(lik, walk):
    """Forced up over a stance, the foot is no longer held across the ground: it moves as the motion has it."""
    rig, ground, stances, _ = walk
    first, last, _ = stances[2]
    frames = range(first, last + 1)
    assert across(balls(rig, frames)) > 0.01, "the captured stance slides (1.7 cm)"
    lik.api.plant(rig, ground)
    assert across(balls(rig, frames)) <= 0.005  # held
    lik.api.plant(rig, ground, contacts={LEG: [(first, last, "up")]})
    assert across(balls(rig, frames)) > 0.01  # free: 6.6 cm, the leg bending in the air as it was animated
    assert (first, last, "up") in lik.api.contacts(rig)[LEG]
    assert not [s for s in lik.api.contacts(rig)[LEG] if s[2] != "up" and s[0] <= last and s[1] >= first]


def forced_ranges(rig: bpy.types.Object) -> list[tuple[int, int, str]]:
    return [(c.frame_start, c.frame_end, c.state) for c in rig.limb_ik.limbs[LEG].contacts]


def test_forced_contacts_are_saved_in_the_file(lik, walk, tmp_path):
    rig, ground, _, (first, last) = walk
    lik.api.force_contact(rig, LEG, first, last, "down")
    lik.api.force_contact(rig, "leg.R", 5, 9, "up")
    path, name = tmp_path / "forced.blend", rig.name
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    rig = bpy.data.objects[name]
    assert forced_ranges(rig) == [(first, last, "DOWN")]
    assert [(c.frame_start, c.frame_end, c.state) for c in rig.limb_ik.limbs["leg.R"].contacts] == [(5, 9, "UP")]
    lik.api.plant(rig)
    assert slide(balls(rig, range(first, last + 1))) <= 0.005


def test_undo_takes_a_forced_contact_back_and_redo_brings_it_again(lik, walk):
    rig, _, _, (first, last) = walk
    name = rig.name
    assert bpy.ops.ed.undo_push(message="Set up") == {"FINISHED"}
    done = bpy.ops.limb_ik.force_contact("EXEC_DEFAULT", True, limb=LEG, frame_start=first, frame_end=last)
    assert done == {"FINISHED"}
    assert (first, last, "down") in lik.api.contacts(rig)[LEG]
    assert bpy.ops.ed.undo() == {"FINISHED"}
    rig = bpy.data.objects[name]  # undo reloads the data
    assert forced_ranges(rig) == []
    assert (first, last, "down") not in lik.api.contacts(rig)[LEG]  # live's analysis made again
    assert bpy.ops.ed.redo() == {"FINISHED"}
    rig = bpy.data.objects[name]
    assert forced_ranges(rig) == [(first, last, "DOWN")]
    assert (first, last, "down") in lik.api.contacts(rig)[LEG]


def test_forced_contacts_hold_after_a_planting_setting_changes(lik, walk):
    rig, ground, _, (first, last) = walk
    lik.api.force_contact(rig, LEG, first, last)
    before = lik.api.contacts(rig)[LEG]
    rig.limb_ik.contact_speed = 0.15
    after = lik.api.contacts(rig)[LEG]
    assert after != before, "the automatic stances were found again"
    assert (first, last, "down") in after
    lik.api.plant(rig, ground)
    assert slide(balls(rig, range(first, last + 1))) <= 0.005


def test_forcing_back_to_automatic_cuts_a_forced_range(lik, walk):
    rig, _, _, _ = walk
    lik.api.force_contact(rig, LEG, 10, 30, "down")
    lik.api.force_contact(rig, LEG, 15, 20, "auto")
    lik.api.force_contact(rig, LEG, 28, 40, "up")
    assert forced_ranges(rig) == [(10, 14, "DOWN"), (21, 27, "DOWN"), (28, 40, "UP")]
    with pytest.raises(lik.api.LimbIKError, match="no limb named 'leg.X'"):
        lik.api.force_contact(rig, "leg.X", 1, 2)
    with pytest.raises(lik.api.LimbIKError, match="DOWN, UP or back to AUTO"):
        lik.api.force_contact(rig, LEG, 1, 2, "sideways")
    with pytest.raises(lik.api.LimbIKError, match="in order"):
        lik.api.force_contact(rig, LEG, 5, 2)
    assert forced_ranges(rig) == [(10, 14, "DOWN"), (21, 27, "DOWN"), (28, 40, "UP")]


def test_a_planting_that_fails_puts_the_forced_contacts_back(lik, walk):
    rig, ground, _, _ = walk
    ground.objects[0].location.y += 50.0  # no ground under the feet
    with pytest.raises(lik.api.LimbIKError, match="no ground under its foot"):
        lik.api.plant(rig, ground, contacts={LEG: [(5, 9, "down")]})
    assert forced_ranges(rig) == []


def test_live_re_analyses_when_a_contact_is_forced_and_shows_what_the_bake_writes(lik, walk):
    rig, ground, stances, (first, last) = walk
    frames = range(1, stances[3][1] + 1)
    rig.limb_ik.live = True
    unforced = mocap.play(rig, frames)
    lik.api.force_contact(rig, LEG, first, last, "down")
    lik.api.force_contact(rig, LEG, *stances[2][:2], "up")
    live = mocap.play(rig, frames)
    assert np.linalg.norm(live - unforced, axis=-1).max() > 0.01
    assert slide(balls(rig, range(first, last + 1))) <= 0.005
    lik.api.plant(rig)
    assert not rig.limb_ik.live
    assert np.linalg.norm(mocap.play(rig, frames) - live, axis=-1).max() <= 0.001


def test_the_command_line_forces_contacts_through_the_api(lik, walk, tmp_path):
    rig, _, _, (first, last) = walk
    path, name = tmp_path / "walk.blend", rig.name
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    argv = ["plant", str(path), "--force-down", f"{LEG}:{first}-{last}", "--force-up", "leg.R:5-9"]
    report = tmp_path / "report.json"
    # Held down through the first frames of its swing, the foot leaves late: the knee turns faster than planting is
    # held to, and the command line says so, the file written all the same.
    assert lik.cli.main([*argv, "--output-dir", str(tmp_path / "out"), "--json", str(report)]) == 0
    part = json.loads(report.read_text())["files"][0]["armatures"][0]
    assert not part["problems"] and list(part["warnings"]) == [LEG], part
    assert "its knee turns up to" in part["warnings"][LEG]
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "walk.blend"))
    rig = bpy.data.objects[name]
    assert forced_ranges(rig) == [(first, last, "DOWN")]
    assert [(c.frame_start, c.frame_end, c.state) for c in rig.limb_ik.limbs["leg.R"].contacts] == [(5, 9, "UP")]
    assert slide(balls(rig, range(first, last + 1))) <= 0.005


def test_the_dope_sheet_draws_a_bar_per_stance_in_a_row_per_leg(lik, walk):
    """The bars' geometry (the GPU cannot draw without a window): a row per leg, each stance from its first
    frame's cell to its last's, those off the region left out and the rest cut at its edges."""
    rig, _, _, (first, last) = walk
    dopesheet = lik.panels.dopesheet
    lik.api.force_contact(rig, LEG, first, last)
    found = lik.api.contacts(rig)
    assert lik.rig.planting.legs.stances_found(rig) == found

    def to_x(frame):  # frames 0 to 100 across 1000 pixels
        return 10.0 * frame

    bars, labels = dopesheet.layout(found, to_x, 1000.0)
    assert [leg for leg, _, _ in labels] == ["leg.L", "leg.R"]
    rows = {leg: y for leg, _, y in labels}
    inside = {leg: [s for s in stances if s[0] <= 100] for leg, stances in found.items()}
    assert len(bars) == sum(map(len, inside.values()))
    expected = [
        ((max(10.0 * start - 5.0, 0.0), min(10.0 * end + 5.0, 1000.0)), dopesheet.COLORS[kind], leg)
        for leg, stances in inside.items()
        for start, end, kind in stances
    ]
    for ((x0, y0, x1, y1), color), ((ex0, ex1), ecolor, leg) in zip(bars, expected):
        assert (x0, x1, color) == (ex0, ex1, ecolor)
        assert y0 < y1 < rows[leg]  # under its leg's label
    assert ((10.0 * first - 5.0, 10.0 * last + 5.0), dopesheet.COLORS["down"], LEG) in expected
    assert dopesheet.layout({}, to_x, 1000.0) == ([], [])


def test_forcing_a_contact_with_live_on_shows_it_at_once(lik, walk):
    rig, _, _, (first, last) = walk
    rig.limb_ik.live = True
    bpy.context.scene.frame_set(last)
    ankle = rig.pose.bones[rig.limb_ik.limbs[LEG].end_bone]
    lifted = np.array(rig.matrix_world @ ankle.tail)
    assert bpy.ops.limb_ik.force_contact(limb=LEG, frame_start=first, frame_end=last) == {"FINISHED"}
    bpy.context.view_layer.update()
    shown = np.array(rig.matrix_world @ ankle.tail)
    assert np.linalg.norm(shown - lifted) > 0.05
    np.testing.assert_allclose(balls(rig, [last])[0], shown, atol=1e-6)  # what the frame change shows
