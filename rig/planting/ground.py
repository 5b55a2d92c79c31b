# SPDX-License-Identifier: GPL-3.0-or-later
"""The ground a rig stands on: what a collection shows as evaluated (its meshes with their modifiers, and
the instances its objects make), ray cast straight down in world space from above its highest point, so
the topmost surface under a point is found however far above or below the authored floor it lies."""

import bpy
import numpy as np
from mathutils import Matrix, Vector
from mathutils.bvhtree import BVHTree

from ..errors import LimbIKError

_trees: dict[tuple, tuple[tuple, BVHTree, np.ndarray]] = {}  # shape's key -> (shape, tree, bounding box corners)
SOLID = {"MESH", "CURVE", "SURFACE", "META"}  #: object types with a surface to stand on


class Ground:
    """World-space triangles of what a collection (and its children) shows, as evaluated: its meshes with their
    modifiers, and the instances its objects make (collection instances, Geometry Nodes instances, particles)."""

    def __init__(self, collection: bpy.types.Collection, depsgraph):
        objects = collection.all_objects
        shapes = [
            _tree((obj.session_uid,), obj.evaluated_get(depsgraph), depsgraph) for obj in objects if obj.type in SOLID
        ]
        if any(_instances(obj) for obj in objects):
            members = {obj.session_uid for obj in objects}
            for instance in depsgraph.object_instances:
                if instance.is_instance and instance.parent.original.session_uid in members:
                    key = (instance.parent.original.session_uid, *instance.persistent_id)
                    shapes.append(_tree(key, instance.object, depsgraph, instance.matrix_world))
        shapes = [shape for shape in shapes if shape is not None]
        if not shapes:
            raise LimbIKError(f"Ground collection '{collection.name}' has no mesh to stand on.")
        self.name = collection.name
        self.shapes = [(tree, world, world.inverted()) for tree, _, _, world in shapes]
        self.top = max(top for _, top, _, _ in shapes) + 1.0  #: rays start this high: above every surface
        self.fingerprint = tuple(fingerprint for _, _, fingerprint, _ in shapes)

    def cast_down(self, points) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The topmost surface straight below (or above) each of the (n, 3) world points: heights (n,),
        upward normals (n, 3) and which points have ground under them at all (n,); where a point
        has none, its height and normal mean nothing."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        heights = np.zeros(len(points))
        normals = np.tile([0.0, 0.0, 1.0], (len(points), 1))
        hit = np.zeros(len(points), bool)
        down = Vector((0.0, 0.0, -1.0))
        top = self.top
        # Each tree is in its object's own space: the rays go there, what they hit comes back.
        shapes = [(tree, world, inverse, inverse.to_3x3() @ down) for tree, world, inverse in self.shapes]
        for i, (x, y) in enumerate(points[:, :2].tolist()):
            origin = Vector((x, y, top))
            best = None
            for tree, world, inverse, local_down in shapes:
                location, normal, _, _ = tree.ray_cast(inverse @ origin, local_down)
                if location is None:
                    continue
                location = world @ location
                if best is None or location.z > best[0].z:
                    best = (location, inverse.to_3x3().transposed() @ normal)
            if best is not None:
                normal = best[1].normalized()
                heights[i] = best[0].z
                normals[i] = normal if normal.z >= 0.0 else -normal
                hit[i] = True
        return heights, normals, hit


def _instances(obj: bpy.types.Object) -> bool:
    """Whether ``obj`` may show instances of other objects or geometry: a collection, vertex or face instancer,
    Geometry Nodes (which may instance) or particles."""
    return obj.instance_type != "NONE" or any(m.type in {"NODES", "PARTICLE_SYSTEM"} for m in obj.modifiers)


def _tree(
    key: tuple, evaluated: bpy.types.Object, depsgraph, matrix=None
) -> tuple[BVHTree, float, tuple, Matrix] | None:
    """A BVH tree of the evaluated object in its own space, its highest point in world space once placed at
    ``matrix`` (an instance's; None: the object where it is), its fingerprint (shape and place) and that matrix.
    The tree is rebuilt only when the shape changed since it was made for ``key``: moving the object costs
    nothing."""
    if evaluated.type not in SOLID:
        return None
    world = Matrix(evaluated.matrix_world if matrix is None else matrix)
    mesh = evaluated.to_mesh()
    try:
        count = len(mesh.vertices)
        if count == 0:
            return None
        coordinates = np.empty(count * 3, np.float32)
        mesh.vertices.foreach_get("co", coordinates)
        shape = (count, len(mesh.polygons), float(coordinates.sum()), float(coordinates[::7].sum()))
        cached = _trees.get(key)
        if cached is None or cached[0] != shape:
            vertices = coordinates.reshape(-1, 3)
            if matrix is None and evaluated.type == "MESH":
                # The evaluated mesh's loop triangles, read by Blender itself: the same tree as below without
                # turning millions of numbers into Python objects (benchmarks/long_take.py: a million faces).
                tree = BVHTree.FromObject(evaluated.original, depsgraph)
            else:
                mesh.calc_loop_triangles()
                triangles = np.empty(len(mesh.loop_triangles) * 3, np.int32)
                mesh.loop_triangles.foreach_get("vertices", triangles)
                tree = BVHTree.FromPolygons(vertices.tolist(), triangles.reshape(-1, 3).tolist(), all_triangles=True)
            corners = np.array(
                [[x, y, z] for x in _span(vertices[:, 0]) for y in _span(vertices[:, 1]) for z in _span(vertices[:, 2])]
            )
            cached = _trees[key] = (shape, tree, corners)
    finally:
        evaluated.to_mesh_clear()
    _, tree, corners = cached
    world_array = np.array(world, dtype=np.float64)
    top = float((corners @ world_array[:3, :3].T + world_array[:3, 3])[:, 2].max())  # above every vertex
    return tree, top, (*shape, world_array.tobytes()), world


def _span(values: np.ndarray) -> tuple[float, float]:
    return float(values.min()), float(values.max())


def forget_all() -> None:
    _trees.clear()
