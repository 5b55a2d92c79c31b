# SPDX-License-Identifier: GPL-3.0-or-later
"""The stances of the active armature's planted legs as bars along the Dope Sheet and the Timeline: a row per
leg above the markers, automatic stances in blue, forced down in orange, forced up in grey. Drawn from the
rig's last planting analysis; the geometry comes from :func:`layout`, which needs no GPU."""

import blf
import bpy
import gpu
from gpu_extras.batch import batch_for_shader

from ..rig.planting import legs

#: Pixels (at a UI scale of 1): a leg's bar, the space between two (its label's), under the first (the markers').
ROW, GAP, BOTTOM = 5.0, 11.0, 26.0
#: RGBA of each kind of stance.
COLORS = {"auto": (0.30, 0.60, 0.95, 0.85), "down": (0.95, 0.55, 0.15, 0.95), "up": (0.55, 0.55, 0.55, 0.6)}

_handle = None


def layout(found: dict[str, list], to_x, width: float, scale: float = 1.0) -> tuple[list, list]:
    """Where the stances ``found`` (per leg, (start, end, kind)) are drawn in a region ``width`` pixels wide,
    ``to_x`` turning a frame into a pixel column: ([((x0, y0, x1, y1), rgba), …] a bar per stance seen, a
    frame's cell from its start to the end's; [(leg, x, y), …] a label per row, on its left)."""
    bars, labels = [], []
    for row, (leg, stances) in enumerate(found.items()):
        y0 = (BOTTOM + row * (ROW + GAP)) * scale
        y1 = y0 + ROW * scale
        labels.append((leg, 4.0 * scale, y1 + 1.0 * scale))
        for start, end, kind in stances:
            x0, x1 = to_x(start - 0.5), to_x(end + 0.5)
            if x1 < 0.0 or x0 > width:
                continue
            bars.append(((max(x0, 0.0), y0, min(x1, width), y1), COLORS[kind]))
    return bars, labels


def _draw() -> None:
    context = bpy.context
    obj = context.object
    if obj is None or obj.type != "ARMATURE":
        return
    found = legs.stances_found(obj)
    region = context.region
    if not found or region is None:
        return
    view = region.view2d
    scale = context.preferences.system.ui_scale
    bars, labels = layout(found, lambda frame: view.view_to_region(frame, 0.0, clip=False)[0], region.width, scale)
    shader = gpu.shader.from_builtin("UNIFORM_COLOR")
    gpu.state.blend_set("ALPHA")
    for color in COLORS.values():
        quads = [rect for rect, rgba in bars if rgba == color]
        if not quads:
            continue
        corners = [(x, y) for x0, y0, x1, y1 in quads for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        indices = [(4 * i + a, 4 * i + b, 4 * i + c) for i in range(len(quads)) for a, b, c in ((0, 1, 2), (0, 2, 3))]
        batch = batch_for_shader(shader, "TRIS", {"pos": corners}, indices=indices)
        shader.uniform_float("color", color)
        batch.draw(shader)
    gpu.state.blend_set("NONE")
    blf.size(0, 10.0 * scale)
    blf.color(0, 0.9, 0.9, 0.9, 0.9)
    for text, x, y in labels:
        blf.position(0, x, y, 0.0)
        blf.draw(0, text)


def register():
    global _handle
    if _handle is None:
        _handle = bpy.types.SpaceDopeSheetEditor.draw_handler_add(_draw, (), "WINDOW", "POST_PIXEL")


def unregister():
    global _handle
    if _handle is not None:
        bpy.types.SpaceDopeSheetEditor.draw_handler_remove(_handle, "WINDOW")
        _handle = None
