# SPDX-License-Identifier: GPL-3.0-or-later
"""Grounds to plant a clip on, laid out under wherever its feet go.

Every ground is a mesh object in the given collection, level with the authored floor where the
clip starts, and reaching at least 1.5 m beyond its feet on every side (further for a long leg, or a
skinned mesh reaching further from the feet: :func:`takes.clips.footprint`). "Along" is the way the clip
travels (or, for a clip that stays in place, the way its feet spread most).

* ``slope``: a plane rising 10° along;
* ``step``: a 20 cm step up, with a vertical riser, halfway along;
* ``rough``: walkable rough ground, a grid raised and lowered by a Displace modifier (about 5 cm
  either way, bumps a metre apart): only the evaluated mesh has the shape;
* ``boulders``: the same, about 12 cm either way, bumps 0.6 m apart;
* ``stairs``: 15 cm steps up with 30 cm treads, from 60 cm before halfway along to beyond the feet;
* ``descent``, ``step_down``, ``steep``, ``across``: grounds the planting was not developed on: the slope going down,
  the step going down, a 20° slope up, and the 10° slope rising across the way instead of along it;
* ``course``: the demo's: flat, a 15° ramp up, a flat top, a 20 cm step up, flat;
* ``flat``: a plane at the authored floor.
"""

import math

import bpy
import numpy as np

KINDS = ("slope", "step", "rough", "boulders", "stairs", "course", "flat", "descent", "step_down", "steep", "across")
MARGIN = 1.5  #: metres beyond the feet
SLOPE = math.radians(10.0)
STEEP = math.radians(20.0)
STEP = 0.2  #: metres
STAIRS = (0.15, 0.3)  #: a stair's rise and tread (metres)
RAMP = math.radians(15.0)
ROUGH = {"rough": (0.1, 1.0), "boulders": (0.25, 0.6)}  #: Displace strength and noise size (metres)
SPACING = 0.05  #: rough grid spacing (metres)


def build(
    kind: str,
    path: np.ndarray,
    feet: np.ndarray,
    collection: bpy.types.Collection,
    floor: float = 0.0,
    leg: float = 0.0,
):
    """A ground of ``kind`` under a clip whose feet's middle follows ``path`` (F, 3) and whose feet
    are ever at ``feet`` (k, 3), in ``collection``, reaching :data:`MARGIN` or a ``leg``'s length beyond them,
    whichever is more. Returns its object."""
    start = path[0, :2]
    along = path[-1, :2] - start
    if np.linalg.norm(along) < 0.3:  # in place: the way the feet spread most
        spread = feet[:, :2] - feet[:, :2].mean(axis=0)
        along = np.linalg.svd(spread, full_matrices=False)[2][0]
    along = along / np.linalg.norm(along)
    across = np.array([-along[1], along[0]])
    reach = (feet[:, :2] - start) @ np.column_stack([along, across])
    margin = max(MARGIN, leg)
    (a0, c0), (a1, c1) = reach.min(axis=0) - margin, reach.max(axis=0) + margin
    middle = float(((path[:, :2] - start) @ along).mean())

    def corner(a, c, z):
        xy = start + a * along + c * across
        return (float(xy[0]), float(xy[1]), float(floor + z))

    if kind in ROUGH:
        return _rough(kind, corner, (a0, a1), (c0, c1), collection)
    if kind == "flat":
        profile = [(a0, 0.0), (a1, 0.0)]
    elif kind in ("slope", "descent", "steep"):
        rise = {"slope": math.tan(SLOPE), "descent": -math.tan(SLOPE), "steep": math.tan(STEEP)}[kind]
        profile = [(a0, a0 * rise), (a1, a1 * rise)]
    elif kind in ("step", "step_down"):
        height = STEP if kind == "step" else -STEP
        profile = [(a0, 0.0), (middle, 0.0), (middle, height), (a1, height)]
    elif kind == "across":
        vertices = [corner(a, c, c * math.tan(SLOPE)) for a in (a0, a1) for c in (c0, c1)]
        return _mesh(kind.capitalize(), vertices, [(0, 1, 3, 2)], collection)
    elif kind == "stairs":
        rise, tread = STAIRS
        edges = np.arange(middle - 2.0 * tread, a1, tread)
        edges = edges[edges > a0]
        profile = [(a0, 0.0), *((a, z) for k, a in enumerate(edges) for z in (k * rise, (k + 1) * rise))]
        profile.append((a1, len(edges) * rise))
    elif kind == "course":
        length = float((path[-1, :2] - start) @ along)
        ramp = (0.2 * length, 0.5 * length)
        top = (ramp[1] - ramp[0]) * math.tan(RAMP)
        step = 0.7 * length
        profile = [(a0, 0.0), (ramp[0], 0.0), (ramp[1], top), (step, top), (step, top + STEP), (a1, top + STEP)]
    else:
        raise ValueError(f"ground kind must be one of {KINDS}, not {kind!r}")
    vertices = [corner(a, c, z) for a, z in profile for c in (c0, c1)]
    faces = [(2 * i, 2 * i + 1, 2 * i + 3, 2 * i + 2) for i in range(len(profile) - 1)]
    return _mesh(kind.capitalize(), vertices, faces, collection)


def _rough(kind: str, corner, along: tuple[float, float], across: tuple[float, float], collection):
    strength, size = ROUGH[kind]
    columns, rows = (int(round((high - low) / SPACING)) + 1 for low, high in (along, across))
    grid = [corner(a, c, 0.0) for c in np.linspace(*across, rows) for a in np.linspace(*along, columns)]
    # Triangles, not quads: displaced, a quad is not flat, and readers split it differently (Blender's render and
    # ray casts through the evaluated mesh, a BVH tree built from its polygons), each seeing another surface.
    quads = [
        (r * columns + k, r * columns + k + 1, (r + 1) * columns + k + 1, (r + 1) * columns + k)
        for r in range(rows - 1)
        for k in range(columns - 1)
    ]
    faces = [triangle for a, b, c, d in quads for triangle in ((a, b, c), (a, c, d))]
    obj = _mesh(kind.capitalize(), grid, faces, collection)
    texture = bpy.data.textures.new(f"{obj.name}Noise", type="CLOUDS")
    texture.noise_scale, texture.noise_depth = size, 2
    displace = obj.modifiers.new("Displace", "DISPLACE")
    displace.texture, displace.texture_coords, displace.direction = texture, "GLOBAL", "Z"
    displace.strength, displace.mid_level = strength, 0.5
    return obj


def _mesh(name: str, vertices, faces, collection) -> bpy.types.Object:
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(vertices, [], faces)
    mesh.validate()
    obj = bpy.data.objects.new(name, mesh)
    collection.objects.link(obj)
    return obj
