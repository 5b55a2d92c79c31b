# SPDX-License-Identifier: GPL-3.0-or-later
"""The ground a rig stands on: the evaluated meshes of a collection (modifiers applied), ray cast
straight down in world space."""

import bpy
import numpy as np
from mathutils import Vector
from mathutils.bvhtree import BVHTree

from .errors import LimbError

_trees: dict[int, tuple[tuple, BVHTree]] = {}  # Object.session_uid -> (fingerprint, tree)


class Ground:
    """World-space triangles of every mesh object in a collection (and its children), as evaluated."""

    def __init__(self, collection: bpy.types.Collection, depsgraph):
        self.trees = [
            _tree(obj, depsgraph) for obj in collection.all_objects if obj.type in {"MESH", "CURVE", "SURFACE", "META"}
        ]
        self.trees = [tree for tree in self.trees if tree is not None]
        if not self.trees:
            raise LimbError(f"Ground collection '{collection.name}' has no mesh to stand on.")

    def cast_down(self, points, search: float, floor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Surface height and normal straight below (or above, within ``search``) each of the (n, 3) points.

        The ray starts ``search`` above the point and looks ``2 * search`` down, so the first
        surface it meets is the top one. Where it meets none, the floor height and +Z stand in.
        Returns heights (n,), normals (n, 3) pointing up, and which points hit (n,).
        """
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        heights = np.full(len(points), floor, dtype=np.float64)
        normals = np.tile([0.0, 0.0, 1.0], (len(points), 1))
        hit = np.zeros(len(points), bool)
        down = Vector((0.0, 0.0, -1.0))
        for i, (x, y, z) in enumerate(points):
            origin = Vector((x, y, z + search))
            best = None
            for tree in self.trees:
                location, normal, _, distance = tree.ray_cast(origin, down, 2.0 * search)
                if location is not None and (best is None or distance < best[2]):
                    best = (location, normal, distance)
            if best is not None:
                heights[i] = best[0].z
                normals[i] = best[1] if best[1].z >= 0.0 else -best[1]
                hit[i] = True
        return heights, normals, hit


def _tree(obj: bpy.types.Object, depsgraph) -> BVHTree | None:
    """A BVH tree of the evaluated object in world space, rebuilt only when its shape or place changed."""
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        count = len(mesh.vertices)
        if count == 0:
            return None
        coordinates = np.empty(count * 3, np.float32)
        mesh.vertices.foreach_get("co", coordinates)
        world = np.array(evaluated.matrix_world, dtype=np.float64)
        fingerprint = (
            count,
            len(mesh.polygons),
            world.tobytes(),
            float(coordinates.sum()),
            float(coordinates[::7].sum()),
        )
        cached = _trees.get(obj.session_uid)
        if cached is not None and cached[0] == fingerprint:
            return cached[1]
        mesh.calc_loop_triangles()
        triangles = np.empty(len(mesh.loop_triangles) * 3, np.int32)
        mesh.loop_triangles.foreach_get("vertices", triangles)
        vertices = coordinates.reshape(-1, 3).astype(np.float64) @ world[:3, :3].T + world[:3, 3]
        tree = BVHTree.FromPolygons(vertices.tolist(), triangles.reshape(-1, 3).tolist())
    finally:
        evaluated.to_mesh_clear()
    _trees[obj.session_uid] = (fingerprint, tree)
    return tree


def forget_all() -> None:
    _trees.clear()
