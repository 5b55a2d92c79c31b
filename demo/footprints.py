# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's picture of the viewport overlay: the footprints where each stance plants and each foot's path
through the air, on the demo's ramp and step, rendered with Workbench.

The lines are the overlay's own geometry (:func:`rig.planting.overlay.footing`), made into curves in a scene
of their own that holds only them and the ground; the scene and everything made for it are removed after.
"""

import math
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix, Vector

FOOTPRINT, PATH, EDGE = 0.008, 0.005, 0.004  #: curve radii (metres)
EDGE_COLOUR = (0.25, 0.25, 0.25, 1.0)  #: the ground's edges: where the ramp and the step begin and end
MARGIN = 0.25  #: metres around the footprints


def render(lik, path: Path, rig: bpy.types.Object, ground: bpy.types.Collection, width: int = 1200) -> Path:
    """Render the footprints and paths of ``rig``'s last planting on ``ground`` into the PNG ``path``."""
    footing = lik.rig.planting.overlay.footing(rig, bpy.context.evaluated_depsgraph_get())
    if not footing:
        raise RuntimeError(f"'{rig.name}' has no planting to draw")
    scene = bpy.data.scenes.new("Footprints")
    made: list = []
    try:
        scene.collection.children.link(ground)
        scene.world = bpy.context.scene.world
        for n, leg in enumerate(footing):
            colour = lik.viewport.LEG_COLOURS[n % len(lik.viewport.LEG_COLOURS)]
            _curve(scene, f"{leg.limb} footprints", leg.footprints, FOOTPRINT, colour, made)
            _curve(scene, f"{leg.limb} paths", leg.paths, PATH, colour, made)
        _curve(scene, "ground edges", _edges(ground), EDGE, EDGE_COLOUR, made)
        points = np.concatenate([line for leg in footing for line in (*leg.footprints, *leg.paths)])
        _camera(scene, points, width, made)
        shading = scene.display.shading
        scene.render.engine = "BLENDER_WORKBENCH"
        shading.light, shading.color_type = "STUDIO", "OBJECT"
        shading.show_cavity, shading.cavity_type = True, "BOTH"
        shading.show_shadows, shading.shadow_intensity = True, 0.6
        scene.display.light_direction = (-0.3, -0.6, 0.75)  # from the camera's side, so the ramp and the step shade
        scene.view_settings.view_transform, scene.view_settings.exposure = "Standard", 0.6
        scene.render.dither_intensity = 0.0  # smooth shades compress well
        settings = scene.render.image_settings
        settings.file_format, settings.color_mode, settings.compression = "PNG", "RGB", 100
        scene.render.filepath = str(path)
        bpy.ops.render.render(write_still=True, scene=scene.name)
    finally:
        bpy.data.batch_remove(made)
        bpy.data.scenes.remove(scene)
    return Path(path)


def _curve(scene, name: str, lines, radius: float, colour, made) -> None:
    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions, curve.bevel_depth, curve.bevel_resolution = "3D", radius, 2
    for line in lines:
        spline = curve.splines.new("POLY")
        spline.points.add(len(line) - 1)
        spline.points.foreach_set("co", np.column_stack([line, np.ones(len(line))]).astype(np.float32).ravel())
    obj = bpy.data.objects.new(name, curve)
    obj.color = colour
    scene.collection.objects.link(obj)
    made += [curve, obj]


def _edges(ground: bpy.types.Collection) -> list[np.ndarray]:
    """The edges of the ground's meshes as (2, 3) world lines."""
    lines = []
    for obj in ground.all_objects:
        if obj.type != "MESH":
            continue
        world = np.array(obj.matrix_world)
        vertices = np.array([v.co for v in obj.data.vertices]) @ world[:3, :3].T + world[:3, 3]
        lines += [vertices[list(edge.vertices)] for edge in obj.data.edges]
    return lines


def _camera(scene, points: np.ndarray, width: int, made) -> None:
    """An orthographic camera over the walk's right side, 65° down, framing ``points``."""
    along = points[:, :2].max(axis=0) - points[:, :2].min(axis=0)
    along = Vector((1.0, 0.0, 0.0)) if along[0] >= along[1] else Vector((0.0, 1.0, 0.0))
    up = Vector((0.0, 0.0, 1.0))
    elevation = math.radians(65.0)
    view = (up.cross(along) * math.cos(elevation) - up * math.sin(elevation)).normalized()
    right, high = np.array(along), np.array(along.cross(view).normalized())
    across, height = points @ right, points @ high
    span = np.array([np.ptp(across), np.ptp(height)]) + 2 * MARGIN
    centre = Vector(right * (across.min() + across.max()) / 2 + high * (height.min() + height.max()) / 2)
    data = bpy.data.cameras.new("Footprints")
    data.type, data.ortho_scale, data.clip_end = "ORTHO", float(span[0]), 1000.0
    camera = bpy.data.objects.new("Footprints", data)
    scene.collection.objects.link(camera)
    made += [data, camera]
    depth = float((points @ np.array(view)).min()) - 10.0
    camera.matrix_world = Matrix.LocRotScale(centre + view * depth, view.to_track_quat("-Z", "Y"), None)
    scene.camera = camera
    scene.render.resolution_x, scene.render.resolution_y = width, int(round(width * span[1] / span[0] / 2)) * 2
    scene.render.resolution_percentage = 100
