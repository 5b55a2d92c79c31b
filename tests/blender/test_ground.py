# SPDX-License-Identifier: GPL-3.0-or-later
"""The ground's ray casts (``rig/planting/ground.py``) against Blender's own ray cast on the evaluated objects:
the same heights and the same normals (the hit triangle's, as Blender's ``Object.ray_cast`` gives), for the
ground's meshes with their modifiers, its other solid objects and the instances it shows, however they are
placed; and the trees follow the shape when it changes."""

import math

import bpy
import numpy as np
import pytest
from mathutils import Matrix, Vector

HEIGHT = 0.3  #: Displace strength: quads far from flat, whose triangles' normals differ from the faces'


def _ground(*objects) -> bpy.types.Collection:
    ground = bpy.data.collections.new("Ground")
    bpy.context.scene.collection.children.link(ground)
    for obj in objects:
        for collection in obj.users_collection:
            collection.objects.unlink(obj)
        ground.objects.link(obj)
    return ground


def _rough_grid(location=(0.0, 0.0, 0.0), turn=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0), quads=40) -> bpy.types.Object:
    """A 4 m grid of ``quads`` x ``quads`` faces, tilted, scaled and moved, whose shape only its Displace modifier
    makes."""
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=quads, y_subdivisions=quads, size=4.0)
    grid = bpy.context.object
    texture = bpy.data.textures.new("Bumps", "CLOUDS")
    texture.noise_scale = 0.4
    displace = grid.modifiers.new("Bumps", "DISPLACE")
    displace.texture, displace.strength = texture, HEIGHT
    grid.location, grid.rotation_euler, grid.scale = location, turn, scale
    return grid


def _points(count: int = 300, half: float = 1.6) -> np.ndarray:
    xy = np.random.default_rng(7).uniform(-half, half, (count, 2))
    return np.column_stack([xy, np.zeros(count)])


def _reference(objects, points: np.ndarray):
    """Heights, upward normals and hits of the topmost surface under each point, from Blender's ``ray_cast``
    on each evaluated object (in its own space) and instance."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    shapes = [(obj.evaluated_get(depsgraph), obj.matrix_world.copy()) for obj in objects if obj.type == "MESH"]
    heights, normals, hit = np.zeros(len(points)), np.zeros((len(points), 3)), np.zeros(len(points), bool)
    for i, point in enumerate(points):
        best = None
        for obj, world in shapes:
            inverse = world.inverted()
            origin = inverse @ Vector((point[0], point[1], 3.0))  # near where the ground casts from: float32
            found, location, normal, _ = obj.ray_cast(origin, inverse.to_3x3() @ Vector((0.0, 0.0, -1.0)))
            if found:
                location = world @ location
                if best is None or location.z > best[0].z:
                    best = (location, (inverse.to_3x3().transposed() @ normal).normalized())
        if best is not None:
            heights[i], hit[i] = best[0].z, True
            normals[i] = best[1] if best[1].z >= 0.0 else -best[1]
    return heights, normals, hit


def _cast(lik, ground, points):
    return lik.rig.planting.ground.Ground(ground, bpy.context.evaluated_depsgraph_get()).cast_down(points)


def _assert_same(found, expected):
    heights, normals, hit = found
    assert hit.tolist() == expected[2].tolist()
    assert hit.sum() > 0.8 * len(hit)
    assert heights[hit] == pytest.approx(expected[0][hit], abs=1e-5)
    assert np.abs(normals[hit] - expected[1][hit]).max() < 1e-5


#: Grids of many faces are cast through a BVH tree, those of few (a plane, a ramp) in numpy: both are checked.
SIZES = pytest.mark.parametrize("quads", [40, 4], ids=["many faces", "few faces"])


@SIZES
@pytest.mark.parametrize(
    "place",
    [
        {},
        {"location": (0.3, -0.2, 0.5), "turn": (math.radians(12.0), math.radians(-7.0), 0.6), "scale": (1.3, 0.8, 1.1)},
    ],
    ids=["in place", "moved, turned and scaled"],
)
def test_heights_and_normals_are_blenders_on_the_evaluated_mesh(lik, place, quads):
    """A grid that only its modifier makes rough, and a flat plane beside and below it: the topmost surface's
    height and its triangle's normal, as Blender casts them."""
    grid = _rough_grid(**place, quads=quads)
    bpy.ops.mesh.primitive_plane_add(size=6.0, location=(0.0, 0.0, -0.6))
    ground = _ground(grid, bpy.context.object)
    points = _points()
    expected = _reference(ground.objects, points)
    assert np.ptp(expected[1][:, 0]) > 0.1  # the surface is rough: normals far apart
    _assert_same(_cast(lik, ground, points), expected)
    grid_caster = lik.rig.planting.ground._trees[(grid.session_uid,)][1]
    assert isinstance(grid_caster, np.ndarray) == (quads <= 5)  # the way it was cast: both are checked


@SIZES
def test_the_tree_follows_the_evaluated_shape(lik, quads):
    """Changing the modifier changes the evaluated mesh (not the object's own): the next cast sees the new shape,
    and moving the ground is seen without rebuilding its tree."""
    grid = _rough_grid(quads=quads)
    ground = _ground(grid)
    points = _points()
    _assert_same(_cast(lik, ground, points), _reference(ground.objects, points))
    grid.modifiers["Bumps"].strength = -HEIGHT
    _assert_same(_cast(lik, ground, points), _reference(ground.objects, points))
    trees = {key: cached[1] for key, cached in lik.rig.planting.ground._trees.items()}
    grid.matrix_world = Matrix.Translation((0.2, 0.1, 0.4)) @ Matrix.Rotation(0.3, 4, "Z")
    _assert_same(_cast(lik, ground, points), _reference(ground.objects, points))
    assert {key: cached[1] for key, cached in lik.rig.planting.ground._trees.items()} == trees


@SIZES
def test_instances_are_cast_as_placed(lik, quads):
    """A collection instance of the rough grid, turned and raised: the instance's heights and normals, as
    Blender casts on the grid where the instance puts it."""
    grid = _rough_grid(quads=quads)
    source = bpy.data.collections.new("Source")
    for collection in grid.users_collection:
        collection.objects.unlink(grid)
    source.objects.link(grid)
    instancer = bpy.data.objects.new("Instancer", None)
    instancer.instance_type, instancer.instance_collection = "COLLECTION", source
    instancer.location, instancer.rotation_euler = (0.2, 0.0, 0.4), (0.0, 0.0, 0.5)
    ground = _ground()
    ground.objects.link(instancer)
    points = _points()
    found = _cast(lik, ground, points)
    bpy.context.scene.collection.objects.link(grid)  # where the instance is, to cast on it with Blender
    grid.matrix_world = instancer.matrix_world.copy()
    _assert_same(found, _reference([grid], points))


@pytest.mark.parametrize("levels", [3, 0], ids=["many faces", "few faces"])
def test_the_topmost_layer_of_one_object_is_found(lik, levels):
    """One object holding two layers (a floor and a shelf above part of it), turned: a ray finds the shelf
    where it is over the floor, the floor elsewhere."""
    mesh = bpy.data.meshes.new("Layers")
    mesh.from_pydata(
        [(-2, -2, 0), (2, -2, 0), (2, 2, 0), (-2, 2, 0), (-1, -1, 0.5), (1, -1, 0.6), (1, 1, 0.5), (-1, 1, 0.4)],
        [],
        [(0, 1, 2, 3), (4, 5, 6, 7)],
    )
    layers = bpy.data.objects.new("Layers", mesh)
    bpy.context.scene.collection.objects.link(layers)
    subdivide = layers.modifiers.new("Subdivide", "SUBSURF")
    subdivide.subdivision_type, subdivide.levels = "SIMPLE", levels
    layers.rotation_euler = (0.1, -0.15, 0.7)
    ground = _ground(layers)
    points = _points()
    expected = _reference(ground.objects, points)
    assert len(set(np.round(expected[0], 2))) > 10
    _assert_same(_cast(lik, ground, points), expected)
