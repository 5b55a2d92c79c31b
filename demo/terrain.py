# SPDX-License-Identifier: GPL-3.0-or-later
"""Ground for the gaits of :mod:`demo.motion` to cross: a course with a ramp and a step, and rough ground.

The course runs along -Y, the way the metarig walks: flat floor at height 0, a 15° ramp up, a
flat top, a 20 cm step up and flat again. :func:`surface_height` and :func:`surface_normal` give
its exact shape. The rough ground is a displaced grid whose shape only its evaluated mesh knows
(the displacement is a modifier): :func:`ground_hit` measures any ground the way planting must,
by casting a ray on the evaluated mesh.
"""

import math
from dataclasses import dataclass

import bpy
import numpy as np
from mathutils import Vector


@dataclass(frozen=True)
class Course:
    """The course's profile along the walk: distances ``d = -y`` in metres, angles in radians."""

    start: float = -1.0  #: behind the rig at rest
    ramp_start: float = 1.0
    ramp_end: float = 2.5
    ramp_angle: float = math.radians(15)
    step_at: float = 3.6  #: the riser is vertical, facing the walker
    step_height: float = 0.2  #: negative for a step down
    end: float = 7.0
    width: float = 3.0  #: across X, centred on 0

    @property
    def top(self) -> float:
        """Height of the flat top between the ramp and the step."""
        return (self.ramp_end - self.ramp_start) * math.tan(self.ramp_angle)

    def profile(self) -> list[tuple[float, float]]:
        """``(d, height)`` corners of the surface from start to end; the riser's two share a ``d``."""
        top, step = self.top, self.top + self.step_height
        return [
            (self.start, 0.0),
            (self.ramp_start, 0.0),
            (self.ramp_end, top),
            (self.step_at, top),
            (self.step_at, step),
            (self.end, step),
        ]


COURSE = Course()


def surface_height(x: float, y: float, course: Course = COURSE) -> float:
    """Height of the course's surface above ``(x, y)``; on the riser line, the height above it."""
    d = -y
    if d < course.ramp_start:
        return 0.0
    if d < course.ramp_end:
        return (d - course.ramp_start) * math.tan(course.ramp_angle)
    if d < course.step_at:
        return course.top
    return course.top + course.step_height


def surface_normal(x: float, y: float, course: Course = COURSE) -> tuple[float, float, float]:
    """Upward unit normal of the course's surface at ``(x, y)``; the ramp faces the walker (+Y)."""
    if course.ramp_start <= -y < course.ramp_end:
        return (0.0, math.sin(course.ramp_angle), math.cos(course.ramp_angle))
    return (0.0, 0.0, 1.0)


def build_terrain(collection: bpy.types.Collection | None = None, course: Course = COURSE) -> bpy.types.Object:
    """A mesh object "Terrain" of ``course`` (one quad per stretch, riser included) in ``collection``
    (the scene's by default)."""
    half = course.width / 2
    profile = course.profile()
    vertices = [(x, -d, z) for d, z in profile for x in (-half, half)]
    # vertices 2i and 2i + 1 are the left and right ends of corner i; this winding faces up and back (+Y)
    faces = [(2 * i, 2 * i + 2, 2 * i + 3, 2 * i + 1) for i in range(len(profile) - 1)]
    mesh = bpy.data.meshes.new("Terrain")
    mesh.from_pydata(vertices, [], faces)
    mesh.validate()
    return _link(bpy.data.objects.new("Terrain", mesh), collection)


def build_rough(
    collection: bpy.types.Collection | None = None,
    size: tuple[float, float] = (3.0, 8.0),
    centre: tuple[float, float] = (0.0, -3.0),
    spacing: float = 0.05,
    relief: float = 0.25,
    noise_size: float = 0.6,
) -> bpy.types.Object:
    """A mesh object "Rough" in ``collection``: a flat grid at height 0 raised and lowered by a Displace
    modifier with a Clouds texture (deterministic), by up to about ``relief`` / 2 either way.

    Its default extent holds the walk of :func:`demo.motion.key_walk` and more. The shape exists only
    in the evaluated mesh; measure it with :func:`ground_hit`. Its faces face down, as an imported or
    mirrored ground's may: what stands on it must not depend on which side a face shows.
    """
    columns, rows = (round(extent / spacing) + 1 for extent in size)
    xs = np.linspace(-size[0] / 2, size[0] / 2, columns) + centre[0]
    ys = np.linspace(size[1] / 2, -size[1] / 2, rows) + centre[1]
    vertices = [(x, y, 0.0) for y in ys for x in xs]
    faces = [
        (r * columns + c, r * columns + c + 1, (r + 1) * columns + c + 1, (r + 1) * columns + c)
        for r in range(rows - 1)
        for c in range(columns - 1)
    ]
    mesh = bpy.data.meshes.new("Rough")
    mesh.from_pydata(vertices, [], faces)
    mesh.validate()
    obj = _link(bpy.data.objects.new("Rough", mesh), collection)
    texture = bpy.data.textures.new("RoughNoise", type="CLOUDS")
    texture.noise_scale = noise_size
    texture.noise_depth = 2
    displace = obj.modifiers.new("Displace", "DISPLACE")
    displace.texture = texture
    displace.texture_coords = "GLOBAL"
    displace.direction = "Z"
    displace.strength = relief
    displace.mid_level = 0.5
    return obj


def ground_hit(obj: bpy.types.Object, x: float, y: float) -> tuple[float, Vector] | None:
    """World height and upward unit normal of the evaluated surface of ``obj`` seen from straight above
    ``(x, y)``; None if the vertical line misses it."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    # start just above the surface: single-precision hits lose millimetres when cast from far away
    above = max((obj.matrix_world @ Vector(corner)).z for corner in evaluated.bound_box) + 1.0
    inverse = obj.matrix_world.inverted()
    origin = inverse @ Vector((x, y, above))
    direction = inverse.to_3x3() @ Vector((0.0, 0.0, -1.0))
    hit, location, normal, _ = obj.ray_cast(origin, direction, depsgraph=depsgraph)
    if not hit:
        return None
    world_normal = (inverse.to_3x3().transposed() @ normal).normalized()
    return (obj.matrix_world @ location).z, world_normal if world_normal.z >= 0.0 else -world_normal


def _link(obj: bpy.types.Object, collection: bpy.types.Collection | None) -> bpy.types.Object:
    (collection or bpy.context.scene.collection).objects.link(obj)
    return obj
