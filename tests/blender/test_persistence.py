# SPDX-License-Identifier: GPL-3.0-or-later
"""Limbs and live solving survive saving and reloading the file, and disabling and enabling the extension."""

import importlib

import addon_utils
import bpy
import numpy as np
import rigs
from mathutils import Vector

MODULE = "bl_ext.limb_ik_dev.limb_ik"
HANDLER_LISTS = ("frame_change_pre", "frame_change_post", "save_pre", "save_post", "load_post", "undo_post")
REACHED = 1e-5


def test_save_and_reload_keeps_limbs_and_live_solving(tmp_path):
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    limbs = rig.limb_ik.limbs
    target = rigs.target_at_tip(rig, limbs["leg.L"])
    target.keyframe_insert("location", frame=1)
    target.location += Vector((0.1, -0.2, 0.25))
    target.keyframe_insert("location", frame=9)
    rigs.target_at_tip(rig, limbs["arm.R"], (0.15, -0.1, -0.1))
    limbs["arm.R"].influence = 0.75
    animator = rigs.channels(rig)
    rig.limb_ik.live = True
    scene = bpy.context.scene
    scene.frame_set(5)
    assert rigs.goal_error(rig, limbs["leg.L"]) <= REACHED

    path = tmp_path / "limbs.blend"
    assert bpy.ops.wm.save_as_mainfile(filepath=str(path)) == {"FINISHED"}
    assert rigs.goal_error(rig, limbs["leg.L"]) <= REACHED  # still solved after saving

    assert bpy.ops.wm.open_mainfile(filepath=str(path)) == {"FINISHED"}
    rig = bpy.data.objects["metarig"]
    limbs = rig.limb_ik.limbs
    assert [limb.name for limb in limbs] == ["leg.L", "leg.R", "arm.L", "arm.R"]
    assert limbs["leg.L"].target.name == "leg.L_target" and limbs["arm.R"].influence == 0.75
    assert rig.limb_ik.live and bpy.context.scene.frame_current == 5
    assert rigs.goal_error(rig, limbs["leg.L"]) <= REACHED  # solved on load, before any frame change
    for frame in (6, 9, 2):
        bpy.context.scene.frame_set(frame)
        assert rigs.goal_error(rig, limbs["leg.L"]) <= REACHED, frame
    # The file held the animator's pose, not a solve result: switched off, that pose comes back.
    rig.limb_ik.live = False
    np.testing.assert_array_equal(rigs.channels(rig), animator)


def handler_counts(handlers) -> dict[tuple[str, str], int]:
    """How many times each of our handlers is registered in its list, by list and function name."""
    counts = {}
    for handler_list, function in handlers._HANDLERS:
        list_name = next(n for n in dir(bpy.app.handlers) if getattr(bpy.app.handlers, n) is handler_list)
        counts[list_name, function.__name__] = sum(
            getattr(h, "__name__", "") == function.__name__ for h in handler_list
        )
    return counts


def our_handlers_anywhere() -> list[tuple[str, str]]:
    """Every handler of this extension in any of Blender's handler lists."""
    return sorted(
        (list_name, h.__name__)
        for list_name in dir(bpy.app.handlers)
        if isinstance(getattr(bpy.app.handlers, list_name), list)
        for h in getattr(bpy.app.handlers, list_name)
        if getattr(h, "__module__", "").startswith(MODULE)
    )


def test_enable_disable_enable_registers_each_handler_once():
    handlers = importlib.import_module(f"{MODULE}.handlers")
    registered = handler_counts(handlers)
    assert set(registered.values()) == {1}
    assert {name for name, _ in registered} >= set(HANDLER_LISTS)
    assert our_handlers_anywhere() == sorted(registered)
    try:
        addon_utils.disable(MODULE, default_set=True)
        assert our_handlers_anywhere() == []
        assert not hasattr(bpy.types.Object, "limb_ik")
        assert not hasattr(bpy.types, "LIMB_IK_OT_solve")
    finally:
        addon_utils.enable(MODULE, default_set=True)
        addon_utils.enable(MODULE, default_set=True)  # a second enable must not add handlers twice
    handlers = importlib.import_module(f"{MODULE}.handlers")
    counts = handler_counts(handlers)
    assert counts == registered
    assert our_handlers_anywhere() == sorted(registered)

    # And it works as before.
    rig = rigs.leg_armature()
    assert bpy.ops.limb_ik.detect_limbs() == {"FINISHED"}
    limb = rig.limb_ik.limbs["leg.L"]
    rigs.target_at_tip(rig, limb, (0.0, -0.1, 0.1))
    rig.limb_ik.live = True
    bpy.context.scene.frame_set(2)
    assert rigs.goal_error(rig, limb) <= REACHED


def test_a_file_saved_before_planting_times_keeps_its_release_and_smoothing(tmp_path):
    """Release Frames (``lock_release``) and Pelvis Smoothing (``pelvis_smoothing``), both in frames, became
    times (Release, Smoothing): a file saved with the old settings reset them to their defaults. They are read
    on load, converted at the scene's frame rate, and the settings marked as upgraded."""
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    bpy.ops.object.mode_set(mode="OBJECT")
    plain = bpy.data.objects.new("Plain", bpy.data.armatures.new("Plain"))  # never had planting settings
    bpy.context.scene.collection.objects.link(plain)
    plain.limb_ik.floor_height = 0.1
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 30, 1.001  # 29.97 frames per second
    settings = rig.limb_ik
    settings["lock_release"] = 6  # as the old Release Frames stored it: an int, in frames
    settings["pelvis_smoothing"] = 9.0
    for obj in (rig, plain):
        if "version" in obj.limb_ik:  # what an old file holds: no version
            del obj.limb_ik["version"]
    path = tmp_path / "old_planting.blend"
    assert bpy.ops.wm.save_as_mainfile(filepath=str(path)) == {"FINISHED"}

    assert bpy.ops.wm.open_mainfile(filepath=str(path)) == {"FINISHED"}
    settings, plain = bpy.data.objects["metarig"].limb_ik, bpy.data.objects["Plain"].limb_ik
    frame = 1.001 / 30
    assert abs(settings.release_time - 6 * frame) <= 1e-6 and abs(settings.smoothing_time - 9 * frame) <= 1e-6
    assert "lock_release" not in settings and "pelvis_smoothing" not in settings
    assert settings.version == plain.version >= 1
    release, smoothing = (plain.bl_rna.properties[name].default for name in ("release_time", "smoothing_time"))
    assert (plain.release_time, plain.smoothing_time) == (release, smoothing)
    assert abs(plain.floor_height - 0.1) <= 1e-6
    # Saved and loaded again, the converted values are kept, not converted twice.
    settings.release_time = 0.25
    assert bpy.ops.wm.save_as_mainfile(filepath=str(path)) == {"FINISHED"}
    assert bpy.ops.wm.open_mainfile(filepath=str(path)) == {"FINISHED"}
    assert abs(bpy.data.objects["metarig"].limb_ik.release_time - 0.25) <= 1e-6
