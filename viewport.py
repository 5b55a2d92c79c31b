# SPDX-License-Identifier: GPL-3.0-or-later
"""The 3D Viewport overlay: the active armature's footprints, its feet's paths through the air and the active
limb's circle of knees, drawn with ``gpu`` where the rig's Overlay setting is on.

The geometry is :mod:`.rig.planting.overlay`'s; here it is only kept and drawn. Footprints are kept until
the rig's planting is analysed anew, so a redraw lays nothing on the ground. The draw callback never raises
and never calls an operator: a rig it cannot draw shows nothing.
"""

import contextlib

import bpy
import gpu
from gpu_extras.batch import batch_for_shader

from .rig.planting import legs, overlay

#: One colour per planted leg (RGBA), in the order the rig's legs come; the knee circle's colour.
LEG_COLOURS = ((0.95, 0.45, 0.15, 1.0), (0.2, 0.6, 1.0, 1.0), (0.35, 0.8, 0.3, 1.0), (0.85, 0.3, 0.75, 1.0))
KNEE_COLOUR = (1.0, 0.9, 0.2, 1.0)

_footing: dict[int, tuple[object, list[overlay.Footing]]] = {}  # by Object.session_uid: (analysis, its footing)
_handle = None


def segments(polylines) -> list[tuple[float, float, float]]:
    """The points of ``polylines`` as pairs of line ends, as a LINES batch takes them."""
    out = []
    for line in polylines:
        points = [tuple(map(float, p)) for p in line]
        for start, end in zip(points[:-1], points[1:]):
            out += [start, end]
    return out


def lines(obj: bpy.types.Object, depsgraph=None) -> list[tuple[tuple, list]]:
    """(colour, line ends) of everything the overlay draws for ``obj`` now. The depsgraph (default: the
    context's) is asked for only where the footprints are laid on the ground anew."""
    last = legs.last_planted(obj)
    kept = _footing.get(obj.session_uid)
    if last is None:
        _footing.pop(obj.session_uid, None)
        found = []
    elif kept is not None and kept[0] is last[1]:
        found = kept[1]
    else:
        found = overlay.footing(obj, depsgraph or bpy.context.evaluated_depsgraph_get())
        _footing[obj.session_uid] = (last[1], found)
    out = [(LEG_COLOURS[n % len(LEG_COLOURS)], segments([*leg.footprints, *leg.paths])) for n, leg in enumerate(found)]
    knee = overlay.knee_circle(obj)
    if knee is not None:
        out.append((KNEE_COLOUR, segments([knee.points, knee.pole])))
    return [(colour, ends) for colour, ends in out if ends]


def draw() -> None:
    context = bpy.context
    obj = context.view_layer.objects.active if context.view_layer else None
    if obj is None or obj.type != "ARMATURE" or not obj.limb_ik.show_overlay:
        return
    space = context.space_data
    if space is not None and not space.overlay.show_overlays:  # the viewport's overlays are off
        return
    drawn = lines(obj)
    shader = gpu.shader.from_builtin("POLYLINE_UNIFORM_COLOR")
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("LESS_EQUAL")
    try:
        shader.uniform_float("viewportSize", tuple(map(float, gpu.state.viewport_get()[2:])))
        shader.uniform_float("lineWidth", 2.0)
        for colour, ends in drawn:
            batch = batch_for_shader(shader, "LINES", {"pos": ends})
            shader.uniform_float("color", colour)
            batch.draw(shader)
    finally:
        gpu.state.depth_test_set("NONE")
        gpu.state.blend_set("NONE")


def _draw() -> None:
    # A rig mid-edit (bones renamed, ground emptied) draws nothing this time; a draw callback never raises.
    with contextlib.suppress(Exception):
        draw()


def register():
    global _handle
    if _handle is None:
        _handle = bpy.types.SpaceView3D.draw_handler_add(_draw, (), "WINDOW", "POST_VIEW")


def unregister():
    global _handle
    if _handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_handle, "WINDOW")
        _handle = None
    _footing.clear()
