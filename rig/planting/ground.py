# SPDX-License-Identifier: GPL-3.0-or-later
"""The ground a rig stands on: what a collection shows as evaluated (its meshes with their modifiers, and
the instances its objects make), ray cast straight down in world space from above its highest point, so
the topmost surface under a point is found however far above or below the authored floor it lies."""

import bpy
import numpy as np
from mathutils import Matrix, Vector
from mathutils.bvhtree import BVHTree

from ..errors import LimbIKError

_trees: dict[tuple, tuple[tuple, BVHTree | np.ndarray, np.ndarray]] = {}  # shape's key -> (shape, caster, corners)
SOLID = {"MESH", "CURVE", "SURFACE", "META"}  #: object types with a surface to stand on
#: A shape of at most this many faces and triangles (a plane, a ramp, a step) is cast in numpy, every ray at once,
#: rather than through a tree one Python call per ray: a long take casts hundreds of thousands.
FEW = 32


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
        self.shapes = [(caster, world, world.inverted()) for caster, _, _, world in shapes]
        self.top = max(top for _, top, _, _ in shapes) + 1.0  #: rays start this high: above every surface
        self.fingerprint = tuple(fingerprint for _, _, fingerprint, _ in shapes)

    def cast_down(self, points) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The topmost surface straight below (or above) each of the (n, 3) world points: heights (n,),
        upward normals (n, 3) and which points have ground under them at all (n,); where a point
        has none, its height and normal mean nothing."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        heights = np.full(len(points), -np.inf)
        normals = np.tile([0.0, 0.0, 1.0], (len(points), 1))
        for caster, world, inverse in self.shapes:
            # Each shape is in its object's own space: the rays go there, what they hit comes back.
            cast = _cast_tree if isinstance(caster, BVHTree) else _cast_triangles
            z, turned = cast(caster, world, inverse, points[:, :2], self.top)
            higher = z > heights
            heights[higher], normals[higher] = z[higher], turned[higher]
        hit = heights > -np.inf
        heights[~hit] = 0.0
        normals[hit] /= np.linalg.norm(normals[hit], axis=1)[:, None]
        normals[hit & (normals[:, 2] < 0.0)] *= -1.0
        return heights, normals, hit


def _cast_tree(tree: BVHTree, world: Matrix, inverse: Matrix, xy: np.ndarray, top: float):
    """World heights (n,), -inf where missed, and world normals (n, 3), not unit, of rays cast down from ``top``
    at ``xy`` (n, 2) onto ``tree``, in its object's space (``inverse`` of its ``world`` matrix)."""
    heights, normals = np.full(len(xy), -np.inf), np.zeros((len(xy), 3))
    local_down, turn = inverse.to_3x3() @ Vector((0.0, 0.0, -1.0)), inverse.to_3x3().transposed()
    for i, (x, y) in enumerate(xy.tolist()):
        location, normal, _, _ = tree.ray_cast(inverse @ Vector((x, y, top)), local_down)
        if location is not None:
            heights[i], normals[i] = (world @ location).z, turn @ normal
    return heights, normals


def _cast_triangles(triangles: np.ndarray, world: Matrix, inverse: Matrix, xy: np.ndarray, top: float):
    """As :func:`_cast_tree`, onto the (t, 3, 3) ``triangles`` in their object's space, every ray at once
    (Möller and Trumbore's test; Blender's ray cast, the same in single precision, keeps the nearest hit)."""
    world, inverse = np.array(world, dtype=np.float64), np.array(inverse, dtype=np.float64)
    heights, normals = np.full(len(xy), -np.inf), np.zeros((len(xy), 3))
    direction = -inverse[:3, 2]  # straight down, in the object's space
    origins = np.column_stack([xy, np.full(len(xy), top)]) @ inverse[:3, :3].T + inverse[:3, 3]
    corner, along, across = triangles[:, 0], triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]
    p = np.cross(direction, across)
    det = np.einsum("ti,ti->t", along, p)
    facing = det != 0.0  # not edge-on to the rays, nor degenerate
    inv = np.where(facing, 1.0 / np.where(facing, det, 1.0), 0.0)
    face_normals = np.cross(along, across)
    block = max(1, 2**16 // len(triangles))
    for start in range(0, len(xy), block):
        rows = slice(start, start + block)
        s = origins[rows, None, :] - corner
        u = np.einsum("nti,ti->nt", s, p) * inv
        q = np.cross(s, along)
        v = (q @ direction) * inv
        t = np.einsum("nti,ti->nt", q, across) * inv
        inside = facing & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (t >= 0.0)
        t = np.where(inside, t, np.inf)
        nearest = np.argmin(t, axis=1)
        distance = t[np.arange(len(t)), nearest]
        found = np.isfinite(distance)
        location = origins[rows][found] + distance[found, None] * direction
        heights[rows][found] = location @ world[2, :3] + world[2, 3]
        normals[rows][found] = face_normals[nearest[found]] @ inverse[:3, :3]  # the inverse transpose
    return heights, normals


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
            triangles = _few_triangles(mesh, vertices)
            if triangles is not None:
                tree = triangles
            elif matrix is None and evaluated.type == "MESH":
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


def _few_triangles(mesh: bpy.types.Mesh, vertices: np.ndarray) -> np.ndarray | None:
    """The (t, 3, 3) loop triangles of a ``mesh`` of at most :data:`FEW` faces and triangles, else None."""
    if len(mesh.polygons) > FEW:
        return None
    mesh.calc_loop_triangles()
    if len(mesh.loop_triangles) > FEW or not len(mesh.loop_triangles):
        return None
    corners = np.empty(len(mesh.loop_triangles) * 3, np.int32)
    mesh.loop_triangles.foreach_get("vertices", corners)
    return vertices[corners].reshape(-1, 3, 3).astype(np.float64)


def _span(values: np.ndarray) -> tuple[float, float]:
    return float(values.min()), float(values.max())


def forget_all() -> None:
    _trees.clear()
