# SPDX-License-Identifier: GPL-3.0-or-later
"""The ground a rig stands on: what a collection shows as evaluated (its meshes with their modifiers, and
the instances its objects make), ray cast straight down in world space from above its highest point, so
the topmost surface under a point is found however far above or below the authored floor it lies."""

import bpy
import numpy as np
from mathutils import Vector
from mathutils.bvhtree import BVHTree

from ..errors import LimbIKError

_trees: dict[tuple, tuple[tuple, BVHTree, float]] = {}  # shape's key -> (fingerprint, tree, top height)
SOLID = {"MESH", "CURVE", "SURFACE", "META"}  #: object types with a surface to stand on


class Ground:
    """World-space triangles of what a collection (and its children) shows, as evaluated: its meshes with their
    modifiers, and the instances its objects make (collection instances, Geometry Nodes instances, particles)."""

    def __init__(self, collection: bpy.types.Collection, depsgraph):
        objects = collection.all_objects
        shapes = [_tree((obj.session_uid,), obj.evaluated_get(depsgraph)) for obj in objects if obj.type in SOLID]
        if any(_instances(obj) for obj in objects):
            members = {obj.session_uid for obj in objects}
            for instance in depsgraph.object_instances:
                if instance.is_instance and instance.parent.original.session_uid in members:
                    key = (instance.parent.original.session_uid, *instance.persistent_id)
                    shapes.append(_tree(key, instance.object, instance.matrix_world))
        shapes = [shape for shape in shapes if shape is not None]
        if not shapes:
            raise LimbIKError(f"Ground collection '{collection.name}' has no mesh to stand on.")
        self.name = collection.name
        self.trees = [tree for tree, _, _ in shapes]
        self.top = max(top for _, top, _ in shapes) + 1.0  #: rays start this high: above every surface
        self.fingerprint = tuple(fingerprint for _, _, fingerprint in shapes)

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
        for i, (x, y) in enumerate(points[:, :2].tolist()):
            origin = Vector((x, y, top))
            best = None
            for tree in self.trees:
                location, normal, _, distance = tree.ray_cast(origin, down)
                if location is not None and (best is None or distance < best[2]):
                    best = (location, normal, distance)
            if best is not None:
                heights[i] = best[0].z
                normals[i] = best[1] if best[1].z >= 0.0 else -best[1]
                hit[i] = True
        return heights, normals, hit


def _instances(obj: bpy.types.Object) -> bool:
    """Whether ``obj`` may show instances of other objects or geometry: a collection, vertex or face instancer,
    Geometry Nodes (which may instance) or particles."""
    return obj.instance_type != "NONE" or any(m.type in {"NODES", "PARTICLE_SYSTEM"} for m in obj.modifiers)


def _tree(key: tuple, evaluated: bpy.types.Object, matrix=None) -> tuple[BVHTree, float, tuple] | None:
    """A BVH tree of the evaluated object placed at ``matrix`` (default: its own) in world space, its highest
    point and its fingerprint; rebuilt only when its shape or place changed since it was made for ``key``."""
    if evaluated.type not in SOLID:
        return None
    mesh = evaluated.to_mesh()
    try:
        count = len(mesh.vertices)
        if count == 0:
            return None
        coordinates = np.empty(count * 3, np.float32)
        mesh.vertices.foreach_get("co", coordinates)
        world = np.array(evaluated.matrix_world if matrix is None else matrix, dtype=np.float64)
        fingerprint = (
            count,
            len(mesh.polygons),
            world.tobytes(),
            float(coordinates.sum()),
            float(coordinates[::7].sum()),
        )
        cached = _trees.get(key)
        if cached is not None and cached[0] == fingerprint:
            return cached[1], cached[2], fingerprint
        mesh.calc_loop_triangles()
        triangles = np.empty(len(mesh.loop_triangles) * 3, np.int32)
        mesh.loop_triangles.foreach_get("vertices", triangles)
        vertices = coordinates.reshape(-1, 3).astype(np.float64) @ world[:3, :3].T + world[:3, 3]
        tree = BVHTree.FromPolygons(vertices.tolist(), triangles.reshape(-1, 3).tolist())
        top = float(vertices[:, 2].max())
    finally:
        evaluated.to_mesh_clear()
    _trees[key] = (fingerprint, tree, top)
    return tree, top, fingerprint


def forget_all() -> None:
    _trees.clear()
