# SPDX-License-Identifier: GPL-3.0-or-later
"""The pose over many frames, read by letting Blender evaluate the scene at each one."""

import contextlib
from collections.abc import Callable

import bpy

from . import animator


def evaluated(view_layer: bpy.types.ViewLayer):
    """The dependency graph of ``view_layer``, built if it has none and brought up to date now; its
    results are copied back to the original data, as those of the context's graph are."""
    view_layer.update()
    return view_layer.depsgraph


def step(
    depsgraph,
    frames,
    read: Callable,
    progress: Callable[[float], None] | None = None,
    paused: bool = True,
) -> list:
    """``read(depsgraph)`` at each of ``frames``, the scene of ``depsgraph`` evaluated there (in its view
    layer's own graph: a render's is not stepped); the scene's frame is put back afterwards.
    ``progress`` is called with the fraction done.

    ``paused``: live solving is paused and the animator's values are back in unkeyed channels,
    so what is read is the animation; the frame is put back still paused, so no handler of this
    extension runs for it, which makes this safe inside a frame-change handler. Otherwise what
    is read is what plays back, live solving included.
    """
    scene, layer = depsgraph.scene, depsgraph.view_layer
    if paused:
        for obj in scene.objects:
            animator.restore(obj)
    current = (scene.frame_current, scene.frame_subframe)
    evaluated(layer)  # on 4.2, frame_set() does not animate a scene whose graph was never evaluated
    out = []
    with animator.suspended() if paused else contextlib.nullcontext():
        try:
            for n, frame in enumerate(frames):
                scene.frame_set(frame)
                out.append(read(evaluated(layer)))
                if progress is not None:
                    progress((n + 1) / len(frames))
        finally:
            scene.frame_set(current[0], subframe=current[1])
    return out


def frame_range(scene: bpy.types.Scene, start: int | None = None, end: int | None = None) -> tuple[int, int]:
    """``start`` and ``end``, each the scene's own where not given."""
    return (scene.frame_start if start is None else start, scene.frame_end if end is None else end)
