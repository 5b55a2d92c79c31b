# SPDX-License-Identifier: GPL-3.0-or-later
"""The pose over many frames, read by letting Blender evaluate the scene at each one."""

import contextlib
from collections.abc import Callable

import bpy

from . import animator


def step(
    scene: bpy.types.Scene,
    frames,
    read: Callable,
    progress: Callable[[float], None] | None = None,
    paused: bool = True,
) -> list:
    """``read(depsgraph)`` at each of ``frames``, the scene evaluated there; the scene's frame is
    put back afterwards. ``progress`` is called with the fraction done.

    ``paused``: live solving is paused and the animator's values are back in unkeyed channels,
    so what is read is the animation; the frame is put back still paused, so no handler of this
    extension runs for it, which makes this safe inside a frame-change handler. Otherwise what
    is read is what plays back, live solving included.
    """
    if paused:
        for obj in scene.objects:
            animator.restore(obj)
    current = (scene.frame_current, scene.frame_subframe)
    bpy.context.evaluated_depsgraph_get()  # on 4.2, frame_set() does not animate a scene with no depsgraph yet
    out = []
    with animator.suspended() if paused else contextlib.nullcontext():
        try:
            for n, frame in enumerate(frames):
                scene.frame_set(frame)
                out.append(read(bpy.context.evaluated_depsgraph_get()))
                if progress is not None:
                    progress((n + 1) / len(frames))
        finally:
            scene.frame_set(current[0], subframe=current[1])
    return out
