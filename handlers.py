# SPDX-License-Identifier: GPL-3.0-or-later
"""Application handlers: live solving on frame change and file load, settings saved by an older version
upgraded on load, a clean pose in saved files, and the animator's pose kept across undo.

Each handler is persistent (it survives loading files), added once and removed on unregister.
None of them calls an operator or raises: a rig that cannot be solved is marked in its limbs'
status by the rig layer.
"""

import bpy
from bpy.app.handlers import persistent

from . import properties
from .rig import animator
from .rig.live import frame as live


@persistent
def limb_ik_depsgraph_update_post(scene, depsgraph):
    # A live rig's target or pole was moved by hand: solve again once the update is over.
    moved = not animator.is_suspended() and live.note_moved_goals(scene, depsgraph)
    if moved and not bpy.app.timers.is_registered(_solve_moved):
        bpy.app.timers.register(_solve_moved, first_interval=0.0)


def _solve_moved():
    live.solve_moved(bpy.context)
    return None  # once


@persistent
def limb_ik_frame_change_pre(scene, depsgraph=None):
    live.before_frame_change(scene)


@persistent
def limb_ik_frame_change_post(scene, depsgraph):
    # Never step the scene inside a frame change, but where nothing else can: a render without a window.
    again = live.frame_changed(scene, depsgraph, may_step=bpy.app.background)
    if again and not bpy.app.timers.is_registered(_solve_moved):
        bpy.app.timers.register(_solve_moved, first_interval=0.0)


def _solve_current_scene() -> None:
    context = bpy.context
    if context.scene is None or context.view_layer is None:
        return
    depsgraph = context.evaluated_depsgraph_get()
    for obj in live.live_rigs(context.scene):
        live.solve_live(obj, depsgraph)


@persistent
def limb_ik_save_pre(*_args):
    # The file keeps the animator's pose, not a solve result baked into unkeyed channels.
    for scene in bpy.data.scenes:
        animator.restore_scene(scene)


@persistent
def limb_ik_save_post(*_args):
    _solve_current_scene()


@persistent
def limb_ik_undo_post(*_args):
    # The restored channels may hold values a live solve wrote at another frame.
    live.forget_plans()
    for scene in bpy.data.scenes:
        animator.recall_scene(scene)


@persistent
def limb_ik_load_post(*_args):
    properties.upgrade(bpy.data.objects)  # before anything reads the settings
    live.forget_all()
    _solve_current_scene()


_HANDLERS = (
    (bpy.app.handlers.frame_change_pre, limb_ik_frame_change_pre),
    (bpy.app.handlers.frame_change_post, limb_ik_frame_change_post),
    (bpy.app.handlers.depsgraph_update_post, limb_ik_depsgraph_update_post),
    (bpy.app.handlers.save_pre, limb_ik_save_pre),
    (bpy.app.handlers.save_post, limb_ik_save_post),
    (bpy.app.handlers.load_post, limb_ik_load_post),
    (bpy.app.handlers.undo_post, limb_ik_undo_post),
    (bpy.app.handlers.redo_post, limb_ik_undo_post),
)


def _remove(handler_list, function) -> None:
    # Match by name as well as identity: a reloaded module brings new function objects.
    for existing in [h for h in handler_list if getattr(h, "__name__", None) == function.__name__]:
        handler_list.remove(existing)


def register():
    for handler_list, function in _HANDLERS:
        _remove(handler_list, function)
        handler_list.append(function)


def unregister():
    for handler_list, function in _HANDLERS:
        _remove(handler_list, function)
    if bpy.app.timers.is_registered(_solve_moved):
        bpy.app.timers.unregister(_solve_moved)
    live.forget_all()
