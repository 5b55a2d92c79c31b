# SPDX-License-Identifier: GPL-3.0-or-later
"""The Python API (``limb_ik.api``): each function does its job, and bad input raises ``LimbIKError``
with a sentence naming what is wrong, leaving the scene exactly as it was."""

import traceback
from contextlib import contextmanager

import bpy
import numpy as np
import pytest
import rigs

LEG = ["thigh.L", "shin.L", "foot.L"]


def key_table(lik, obj) -> dict:
    curves = lik.rig.keys.actions.fcurves(obj) or []
    return {(c.data_path, c.array_index): lik.rig.keys.actions.read_keys(c)["co"].tolist() for c in curves}


@contextmanager
def unchanged(lik, rig):
    """The block must leave the rig's pose, limbs and keys, the objects and the frame as they were."""
    scene = bpy.context.scene

    def state():
        return (
            rigs.limbs_table(rig),
            key_table(lik, rig),
            sorted(bpy.data.objects.keys()),
            sorted(bpy.data.actions.keys()),
            scene.frame_current,
            rig.limb_ik.live,
        )

    pose, before = rigs.pose_snapshot(rig), state()
    yield
    np.testing.assert_array_equal(rigs.pose_snapshot(rig), pose)
    assert state() == before


@pytest.fixture
def leg(lik):
    """The test leg with its limb and a target a little in front of and above the foot."""
    rig = rigs.leg_armature()
    bpy.ops.object.mode_set(mode="OBJECT")
    lik.api.add_limb(rig, LEG)
    rigs.target_at_tip(rig, rig.limb_ik.limbs["leg.L"], (0.0, -0.1, 0.1))
    return rig


def test_detect_limbs_returns_what_it_added(lik):
    rig = rigs.human_metarig()
    assert lik.api.detect_limbs(rig) == {"leg.L": "name", "leg.R": "name", "arm.L": "name", "arm.R": "name"}
    assert lik.api.detect_limbs(rig) == {}
    assert [limb.name for limb in rig.limb_ik.limbs] == ["leg.L", "leg.R", "arm.L", "arm.R"]


def test_add_and_remove_a_limb(lik):
    rig = rigs.leg_armature()
    assert lik.api.add_limb(rig, ["thigh.L", "shin.L"], with_target=True) == "leg.L"
    target = rig.limb_ik.limbs["leg.L"].target
    assert target is not None and target.name in bpy.context.scene.objects
    assert lik.api.add_limb(rig, ["foot.L", "toe.L"], name="toes") == "toes"
    lik.api.remove_limb(rig, "leg.L")
    assert [limb.name for limb in rig.limb_ik.limbs] == ["toes"]
    assert target.name in bpy.data.objects, "removing a limb keeps its target"


def test_check_lists_limbs_that_cannot_be_solved(lik, leg):
    assert lik.api.check(leg) == {}
    leg.data.bones["shin.L"].name = "shin_renamed.L"
    assert lik.api.check(leg) == {"leg.L": "Limb 'leg.L': bone 'shin.L' does not exist in armature 'Leg'."}


def test_check_names_what_solve_and_bake_would_refuse(lik, leg, tmp_path):
    """A rig Blender does not evaluate, an uneven scale inherited as the solve does not model, and a
    linked action that cannot take keys: each refused by Solve or Bake, each named by check."""
    leg.hide_viewport = True
    assert "is disabled in viewports" in lik.api.check(leg)["leg.L"]
    leg.hide_viewport = False
    assert lik.api.check(leg) == {}

    leg.data.bones["shin.L"].inherit_scale = "NONE"
    leg.pose.bones["hips"].scale = (1.0, 1.0, 1.5)
    bpy.context.view_layer.update()
    problem = lik.api.check(leg)["leg.L"]
    with pytest.raises(lik.api.LimbIKError) as refused:
        lik.api.solve(leg)
    assert problem == str(refused.value)

    rig = rigs.leg_armature("Character")
    bpy.ops.object.mode_set(mode="OBJECT")
    lik.api.add_limb(rig, LEG)
    rig.pose.bones["hips"].keyframe_insert("location", frame=1)
    rigs.save_library(tmp_path / "characters.blend", rig)
    bpy.ops.wm.read_homefile(app_template="")
    rig = rigs.library_override(tmp_path / "characters.blend")
    assert "plays the action 'CharacterAction' linked" in lik.api.check(rig)["leg.L"]


def test_check_names_a_limb_the_mesh_does_not_follow(lik, generated_rig):
    rig = rigs.open_generated(generated_rig)
    lik.api.detect_limbs(rig)
    problems = lik.api.check(rig)
    assert set(problems) == {"leg.L", "leg.R", "arm.L", "arm.R"}
    assert "leg.L (thigh_parent.L IK_FK = 0)" in problems["leg.L"]
    lik.api.switch_to_fk(rig)
    assert lik.api.check(rig) == {}


def test_solve_reaches_the_target(lik, leg):
    report = lik.api.solve(leg)
    assert report.solved == ["leg.L"] and report.unreached == []
    assert rigs.goal_error(leg, leg.limb_ik.limbs["leg.L"]) < 1e-4


def test_bake_keys_the_limb_bones(lik, leg):
    report = lik.api.bake(leg, frame_start=1, frame_end=5)
    assert (report.frames, report.limbs, report.keys) == (5, ["leg.L"], 5 * 3 * 4)
    keys = key_table(lik, leg)
    assert {path for path, _ in keys} == {f'pose.bones["{bone}"].rotation_quaternion' for bone in LEG}
    assert all([frame for frame, _ in points] == [1, 2, 3, 4, 5] for points in keys.values())
    bpy.context.scene.frame_set(3)
    assert rigs.goal_error(leg, leg.limb_ik.limbs["leg.L"]) < 1e-3


FUNCTIONS = ["detect_limbs", "add_limb", "remove_limb", "check", "solve", "bake", "plant", "foot_report"]
ARGUMENTS = {"add_limb": (LEG,), "remove_limb": ("leg.L",)}


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize(
    ("rig", "message"),
    [
        ("Cube", r"^'Cube' is a mesh, not an armature\.$"),
        ("Gone", r"^There is no object named 'Gone'\.$"),
        (None, r"^Expected an armature object or its name, not None\.$"),
    ],
    ids=["mesh", "unknown name", "None"],
)
def test_every_function_rejects_what_is_not_an_armature(lik, leg, function, rig, message):
    with unchanged(lik, leg), pytest.raises(lik.api.LimbIKError, match=message):
        getattr(lik.api, function)(rig, *ARGUMENTS.get(function, ()))


def test_a_rig_and_a_limb_may_be_given_by_name(lik, leg):
    assert lik.api.solve("Leg", limbs="leg.L").solved == ["leg.L"]
    assert rigs.goal_error(leg, leg.limb_ik.limbs["leg.L"]) < 1e-4


BAD_CALLS = {
    "one bone": (lambda api, rig: api.add_limb(rig, ["thigh.L"]), r"A limb has two or three bones, not 1\."),
    "four bones": (lambda api, rig: api.add_limb(rig, [*LEG, "toe.L"]), r"two or three bones, not 4"),
    "missing bone": (
        lambda api, rig: api.add_limb(rig, ["toe.L", "calf.L"]),
        r"bone 'calf\.L' does not exist in armature 'Leg'\.",
    ),
    "not a chain": (lambda api, rig: api.add_limb(rig, ["toe.L", "hips"]), r"'hips' is not a child of 'toe\.L'"),
    "bone taken": (
        lambda api, rig: api.add_limb(rig, ["shin.L", "foot.L"], with_target=True),
        r"^Bone 'shin\.L' already belongs to limb 'leg\.L'\.$",
    ),
    "remove unknown": (
        lambda api, rig: api.remove_limb(rig, "arm.L"),
        r"^Armature 'Leg' has no limb named 'arm\.L'\.$",
    ),
    "solve unknown": (
        lambda api, rig: api.solve(rig, limbs=["arm.L"]),
        r"^Armature 'Leg' has no limb named 'arm\.L'\.$",
    ),
    "bake unknown": (lambda api, rig: api.bake(rig, limbs=["arm.L"]), r"^Armature 'Leg' has no limb named 'arm\.L'\.$"),
    "bake backwards": (
        lambda api, rig: api.bake(rig, frame_start=10, frame_end=2),
        r"^The bake range ends \(frame 2\) before it starts \(frame 10\)\.$",
    ),
    "bake step": (lambda api, rig: api.bake(rig, step=0), r"^The bake step must be 1 or more, not 0\.$"),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_bad_calls(lik, leg, case):
    call, message = BAD_CALLS[case]
    with unchanged(lik, leg), pytest.raises(lik.api.LimbIKError, match=message):
        call(lik.api, leg)


@pytest.mark.parametrize("function", ["solve", "bake"])
def test_one_broken_limb_stops_solve_and_bake_before_anything_changes(lik, function):
    rig = rigs.human_metarig()
    lik.api.detect_limbs(rig)
    rigs.target_at_tip(rig, rig.limb_ik.limbs["leg.L"], (0.0, -0.1, 0.1))  # would move if solved
    rig.limb_ik.limbs["arm.R"].lower_bone = "forearm_gone.R"
    message = r"^Limb 'arm\.R': bone 'forearm_gone\.R' does not exist in armature 'metarig'\.$"
    with unchanged(lik, rig), pytest.raises(lik.api.LimbIKError, match=message):
        getattr(lik.api, function)(rig)


def test_bake_without_enabled_limbs(lik, leg):
    leg.limb_ik.limbs["leg.L"].enabled = False
    with (
        unchanged(lik, leg),
        pytest.raises(lik.api.LimbIKError, match=r"^Armature 'Leg' has no enabled limbs to bake\.$"),
    ):
        lik.api.bake(leg)


def test_bake_of_an_armature_in_another_scene(lik, leg):
    away = rigs.leg_armature("Away")
    bpy.ops.object.mode_set(mode="OBJECT")
    lik.api.add_limb(away, LEG)
    bpy.context.scene.collection.objects.unlink(away)
    bpy.data.scenes.new("Other").collection.objects.link(away)
    with unchanged(lik, leg), pytest.raises(lik.api.LimbIKError, match=r"^Armature 'Away' is not in the scene 'Scene'"):
        lik.api.bake(away)
    current = bpy.context.scene
    report = lik.api.bake(away, frame_start=1, frame_end=3, scene=bpy.data.scenes["Other"])
    assert report.keys > 0 and bpy.context.scene == current  # baked there, without switching scenes


class Halt(Exception):
    pass


@pytest.mark.parametrize("function", ["bake", "plant"])
def test_bake_and_plant_call_progress_and_stop_when_it_raises(lik, leg, function):
    ground = rigs.plane_ground() if function == "plant" else None
    bake = getattr(lik.api, function)
    where = {"ground": ground} if ground else {}

    def halt_at_the_third_frame(fraction):
        if fraction >= 3 / 8:
            raise Halt

    with unchanged(lik, leg), pytest.raises(Halt):
        bake(leg, **where, frame_start=1, frame_end=8, progress=halt_at_the_third_frame)
    assert leg.limb_ik.ground is None and not leg.limb_ik.limbs["leg.L"].plant
    done = []
    report = bake(leg, **where, frame_start=1, frame_end=8, progress=done.append)
    assert report.frames == 8 and report.keys > 0
    assert report.path == "bulk" and done == [1.0]  # the animation read at once: one step
    leg.pose.bones["hips"].constraints.new("COPY_LOCATION")  # now the scene is stepped through
    done.clear()
    report = bake(leg, **where, frame_start=1, frame_end=8, progress=done.append)
    assert report.path == "stepped"
    if function == "bake":
        assert done == [n / 8 for n in range(1, 9)]
    else:  # planting reads the whole take (the scene's 250 frames), not only the baked ones
        assert len(done) == 250 and done == sorted(done) and done[-1] == 1.0


@pytest.mark.parametrize("value", [1.5, 2.0, "1", True])
def test_frames_are_whole_numbers(lik, leg, value):
    """A frame like 1.5 or '1' used to raise a TypeError from deep inside the bake."""
    with unchanged(lik, leg):
        calls = (
            lambda: lik.api.bake(leg, frame_start=value),
            lambda: lik.api.bake(leg, frame_end=value),
            lambda: lik.api.bake(leg, step=value),
            lambda: lik.api.foot_report(leg, frame_start=value),
        )
        for call in calls:
            with pytest.raises(lik.api.LimbIKError, match=r"must be a whole frame number, not "):
                call()
    assert lik.api.bake(leg, frame_start=np.int64(2), frame_end=3).frames == 2  # numpy's integers are whole numbers


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_function_refuses_edit_mode_as_the_operators_do(lik, leg, function):
    """solve and bake used to run in Edit Mode, where the operators refuse."""
    bpy.context.view_layer.objects.active = leg
    bpy.ops.object.mode_set(mode="EDIT")
    with pytest.raises(lik.api.LimbIKError, match=r"^Armature 'Leg' is in Edit Mode; leave it first"):
        getattr(lik.api, function)(leg, *ARGUMENTS.get(function, ()))
    bpy.ops.object.mode_set(mode="OBJECT")
    assert [limb.name for limb in leg.limb_ik.limbs] == ["leg.L"]


@pytest.mark.parametrize("function", ["solve", "bake"])
def test_solve_and_bake_refuse_a_rig_without_enabled_limbs_alike(lik, leg, function):
    """solve used to return an empty report where bake raised."""
    leg.limb_ik.limbs["leg.L"].enabled = False
    message = rf"^Armature 'Leg' has no enabled limbs to {function}\.$"
    with unchanged(lik, leg), pytest.raises(lik.api.LimbIKError, match=message):
        getattr(lik.api, function)(leg)


def test_the_error_class_is_called_as_the_readme_names_it(lik):
    """It used to print as LimbIKError, the rig layer's name for it."""
    assert lik.api.LimbIKError.__name__ == "LimbIKError"
    assert "LimbIKError: " in "".join(traceback.format_exception_only(lik.api.LimbIKError("A sentence.")))


@pytest.mark.parametrize("function", ["solve", "bake"])
def test_solve_refuses_a_rig_outside_the_scene_as_bake_does(lik, leg, function):
    """solve used to accept it and solve from a pose Blender no longer evaluates."""
    away = rigs.leg_armature("Away")
    bpy.ops.object.mode_set(mode="OBJECT")
    lik.api.add_limb(away, LEG)
    bpy.context.scene.collection.objects.unlink(away)
    bpy.data.scenes.new("Other").collection.objects.link(away)
    message = r"^Armature 'Away' is not in the scene 'Scene'"
    with unchanged(lik, leg), pytest.raises(lik.api.LimbIKError, match=message):
        getattr(lik.api, function)(away)


def test_a_step_of_zero_is_refused_by_the_operator_as_by_the_api(lik, leg):
    """The operator used to raise it to 1 quietly and bake."""
    bpy.context.view_layer.objects.active = leg
    message = r"The bake step must be 1 or more, not 0\."
    with unchanged(lik, leg):
        with pytest.raises(RuntimeError, match=message):
            bpy.ops.limb_ik.bake(step=0)
        with pytest.raises(lik.api.LimbIKError, match=message):
            lik.api.bake(leg, step=0)


def test_a_limb_name_asked_for_is_kept_or_refused(lik, leg):
    """An explicit name used to become 'leg.L.001' when taken."""
    with unchanged(lik, leg), pytest.raises(lik.api.LimbIKError, match=r"already has a limb named 'leg\.L'"):
        lik.api.add_limb(leg, ["hips", "toe.L"], name="leg.L")
    assert lik.api.add_limb(leg, ["hips", "toe.L"]) not in ("", "leg.L")  # a name made up is made unique


def _planted_leg(lik):
    rig = rigs.leg_armature()
    bpy.ops.object.mode_set(mode="OBJECT")
    lik.api.add_limb(rig, LEG)
    ground = rigs.plane_ground()  # 2 cm below the sole
    bpy.context.view_layer.objects.active = rig
    return rig, ground


def test_the_plant_operator_keys_what_the_api_keys(lik):
    """There was no Plant operator: the sidebar could not choose the legs or the ground api.plant takes."""
    rig, ground = _planted_leg(lik)
    assert bpy.ops.limb_ik.plant(ground="Ground", frame_start=1, frame_end=5) == {"FINISHED"}
    assert rig.limb_ik.ground == ground and rig.limb_ik.limbs["leg.L"].plant
    by_operator = key_table(lik, rig)
    assert by_operator
    lik.api.remove_planting(rig)
    rig.limb_ik.ground, rig.limb_ik.limbs["leg.L"].plant = None, False
    lik.api.plant(rig, "Ground", frame_start=1, frame_end=5)
    assert key_table(lik, rig) == by_operator


def test_the_plant_operator_puts_the_settings_back_when_it_fails(lik):
    """Through the same code as api.plant: the legs chosen and the ground are the rig's only once it is planted."""
    rig = rigs.human_metarig()
    lik.api.detect_limbs(rig)
    rigs.plane_ground()
    bpy.context.view_layer.objects.active = rig
    with unchanged(lik, rig):
        with pytest.raises(RuntimeError, match=r"There is no collection named 'Nowhere' to use as ground\."):
            bpy.ops.limb_ik.plant(ground="Nowhere")
        rig.limb_ik.active_limb_index = rig.limb_ik.limbs.find("arm.L")
        with pytest.raises(RuntimeError, match=r"Limb 'arm\.L' has no foot on the ground side"):
            bpy.ops.limb_ik.plant(ground="Ground", legs="ACTIVE")
        assert rig.limb_ik.ground is None
        rig.limb_ik.active_limb_index = 0


def test_the_check_operator_reports_what_check_finds(lik, generated_rig):
    """There was no Check operator; it names the limbs held on IK as check does (held_by_ik's twin)."""
    rig = rigs.open_generated(generated_rig)
    lik.api.detect_limbs(rig)
    bpy.context.view_layer.objects.active = rig
    held = lik.api.held_by_ik(rig)
    assert set(held) == set(lik.api.check(rig)) == {"leg.L", "leg.R", "arm.L", "arm.R"}
    with unchanged(lik, rig), pytest.raises(RuntimeError) as refused:
        bpy.ops.limb_ik.check()
    assert all(f"{limb} ({bone} IK_FK = 0)" in str(refused.value) for limb, bone in held.items())
    lik.api.switch_to_fk(rig)
    assert bpy.ops.limb_ik.check() == {"FINISHED"}


def test_match_fk_keys_the_pose_and_switches_the_limb_off_as_the_operator_does(lik, leg):
    """Match FK had no verb in the API."""
    bpy.context.scene.frame_set(3)
    report = lik.api.match_fk(leg, "leg.L")
    assert report.solved == ["leg.L"] and not leg.limb_ik.limbs["leg.L"].enabled
    assert rigs.goal_error(leg, leg.limb_ik.limbs["leg.L"]) < 1e-4
    keys = key_table(lik, leg)
    assert {path for path, _ in keys} == {f'pose.bones["{bone}"].rotation_quaternion' for bone in LEG}
    assert all([frame for frame, _ in points] == [3] for points in keys.values())


def test_legs_and_the_frame_range_are_what_plant_and_bake_take(lik):
    rig = rigs.human_metarig()
    lik.api.detect_limbs(rig)
    assert lik.api.legs(rig) == ["leg.L", "leg.R"]
    rig.limb_ik.limbs["leg.L"].enabled = False
    assert lik.api.legs(rig) == ["leg.L", "leg.R"]  # plant takes the enabled ones among them
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 3, 40
    assert lik.api.frame_range() == (3, 40) and lik.api.frame_range(frame_end=12) == (3, 12)
    assert lik.api.frame_range(5, None, bpy.data.scenes.new("Other")) == (5, 250)
    with pytest.raises(lik.api.LimbIKError, match=r"^frame_start must be a whole frame number, not 1\.5\.$"):
        lik.api.frame_range(1.5)
