# SPDX-License-Identifier: GPL-3.0-or-later
"""The demo's picture for people who would rather look than read: a simple body walking over the
ground at a few contact frames, as animated (above) and as planted (below), in one Cycles render.

The body is capsules built in code around the skeleton's bones; each row is a strip of the ground
under the walk, ray cast from the scene and given a front face, so a foot that sinks into it is
hidden behind that face as it would be in the ground. Poses are read with :func:`snapshot` (the
scene is left as it was) and :func:`render` builds its objects, renders and removes them again.

    shown = contact_frames(rig, legs, frames)
    animated = snapshot(rig, shown)      # before planting
    ...                                  # plant and bake
    planted = snapshot(rig, shown)
    render(path, [("As animated", animated), ("Planted by Limb IK", planted)], ground_collection)
"""

import math
import time
from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix, Vector

#: The body of the DeepMimic humanoid (the demo's walk): capsules from one point to another, with a
#: radius in metres. A point is a bone's head (``bone``), tail (``bone>``) or a fraction along it
#: (``bone@0.8``). Sides are drawn in two shades, so the legs can be told apart from the side.
BODY = (
    ("left_hip", "right_hip", 0.095, "body"),  # pelvis
    ("root", "chest", 0.10, "body"),  # belly
    ("chest", "neck", 0.125, "body"),  # chest
    ("left_shoulder", "right_shoulder", 0.06, "body"),
    ("neck", "neck@0.5", 0.045, "body"),
    ("neck@0.85", "neck@0.85", 0.105, "body"),  # head
    *(
        part
        for side in ("left", "right")
        for part in (
            (f"{side}_shoulder", f"{side}_shoulder>", 0.047, side),
            (f"{side}_elbow", f"{side}_elbow>", 0.04, side),
            (f"{side}_elbow>", f"{side}_elbow>", 0.046, side),  # hand
            (f"{side}_hip", f"{side}_hip>", 0.072, side),
            (f"{side}_knee", f"{side}_knee>", 0.054, side),
            (f"{side}_ankle", f"{side}_ankle>", 0.042, side),  # foot
        )
    ),
)
#: The camera looks at the walker's right side: the far (left) limbs are drawn darker.
SHADES = {"body": 1.0, "right": 1.0, "left": 0.6}
COLOURS = ((0.80, 0.22, 0.17), (0.10, 0.33, 0.78))  #: one per row: red as animated, blue planted (as in the plot)
SLAB = 0.2  #: metres: thickness of the ground's strip, seen from the front
MARGIN = 0.08  #: metres around the picture
LABEL = 0.17  #: metres: height of a row's label
BAND = LABEL + 0.12  #: metres: room for a label between rows


@dataclass
class Snapshot:
    """The body's capsules at a few frames, in world space."""

    frames: list[int]
    heads: np.ndarray  #: (frames, capsules, 3)
    tails: np.ndarray  #: (frames, capsules, 3)


@dataclass
class Rendered:
    """What :func:`render` wrote and what it took."""

    path: Path
    seconds: float  #: the render alone
    size: tuple[int, int]  #: pixels
    bytes: int  #: of the file


def contact_frames(
    rig: bpy.types.Object, feet: list[str], frames: range, count: int = 5, floor: float = 0.0, height: float = 0.03
) -> list[int]:
    """``count`` frames spread along the walk, each in the middle of a stance of one of the ``feet``
    (bone names) as animated: its tail within ``height`` of the authored ``floor`` and at its slowest."""
    scene = bpy.context.scene
    tips, middle = [], []
    for frame in frames:
        scene.frame_set(frame)
        points = [rig.matrix_world @ rig.pose.bones[foot].tail for foot in feet]
        tips.append(points)
        middle.append(sum(points, Vector()) / len(points))
    tips, middle = np.array(tips), np.array(middle)
    along = middle[-1, :2] - middle[0, :2]
    along /= np.linalg.norm(along)
    distance = (middle[:, :2] - middle[0, :2]) @ along
    speed = np.linalg.norm(np.gradient(tips[:, :, :2], axis=0), axis=2)
    stances = []  # (frame index, distance along): the slowest frame of each stance of each foot
    for foot in range(len(feet)):
        down = tips[:, foot, 2] <= floor + height
        edges = np.flatnonzero(np.diff(np.concatenate([[0], down.astype(int), [0]])))
        for start, end in zip(edges[::2], edges[1::2]):
            index = start + int(np.argmin(speed[start:end, foot]))
            stances.append((index, distance[index]))
    wanted = np.linspace(distance[0], distance[-1], count + 2)[1:-1]
    chosen = []
    for goal in wanted:
        free = [s for s in stances if s[0] not in chosen]
        if free:
            chosen.append(min(free, key=lambda s: abs(s[1] - goal))[0])
    return sorted(frames[i] for i in chosen)


def snapshot(rig: bpy.types.Object, frames: list[int], body=BODY) -> Snapshot:
    """The body's capsules at ``frames`` as the rig plays back now; the current frame is put back."""
    scene = bpy.context.scene
    current = scene.frame_current
    heads, tails = [], []
    try:
        for frame in frames:
            scene.frame_set(frame)
            world = rig.matrix_world
            heads.append([world @ _point(rig, start) for start, _, _, _ in body])
            tails.append([world @ _point(rig, end) for _, end, _, _ in body])
    finally:
        scene.frame_set(current)
    return Snapshot(list(frames), np.array(heads), np.array(tails))


def _point(rig: bpy.types.Object, spec: str) -> Vector:
    if spec.endswith(">"):
        return rig.pose.bones[spec[:-1]].tail.copy()
    name, _, fraction = spec.partition("@")
    bone = rig.pose.bones[name]
    return bone.head.lerp(bone.tail, float(fraction or 0.0))


def render(
    path: Path,
    rows: list[tuple[str, Snapshot]],
    ground: bpy.types.Collection,
    width: int = 1000,
    samples: int = 16,
    elevation: float = math.radians(9.0),
    body=BODY,
) -> Rendered:
    """Render ``rows`` (label, snapshot), the first on top, each over its own strip of the ground in
    ``ground``, into the image ``path`` (PNG, or JPEG if it ends in .jpg) with Cycles on the CPU.
    Everything made for it is removed afterwards and the scene's settings put back."""
    scene = bpy.context.scene
    made: list = []
    saved = _render_settings(scene, ground)
    try:
        points = np.concatenate([np.concatenate([s.heads, s.tails]).reshape(-1, 3) for _, s in rows])
        along = points[-1, :2] - points[0, :2]
        along = Vector((*(along / np.linalg.norm(along)), 0.0))
        up = Vector((0.0, 0.0, 1.0))
        view = (up.cross(along) * math.cos(elevation) - up * math.sin(elevation)).normalized()
        screen = (along, along.cross(view).normalized())  # right and up on the picture
        strip = _ground_strip(ground, points, along)
        bottoms = [_slab_bottom(strip, shots) for _, shots in rows]
        lift = _lift(rows, bottoms, screen, elevation)
        right, high = (np.array(v) for v in screen)
        extent, slabs = [], []
        for row, ((_, shots), bottom) in enumerate(zip(rows, bottoms)):
            offset = np.array([0.0, 0.0, lift * (len(rows) - 1 - row)])
            _ground_object(f"Strip {row}", strip + offset, bottom + offset, made)
            _body_object(f"Body {row}", shots, offset, COLOURS[row % len(COLOURS)], body, made)
            extent += [np.concatenate([shots.heads, shots.tails]).reshape(-1, 3) + offset, strip[-1] + offset]
            slabs.append(bottom + offset)
        # Room for the first row's label above it; the others sit in the room _lift leaves under the row above.
        left = float((np.concatenate(extent) @ right).min())
        tops = [float((extent[0] @ high).max()) + BAND]
        for slab in slabs[:-1]:
            under = slab[(slab @ right) <= left + 0.7 * LABEL * max(len(label) for label, _ in rows)]
            tops.append(float((under @ high).min()) - 0.04)
        extent += [*slabs, extent[0][:1] + high * (tops[0] - float(extent[0][0] @ high))]
        camera = _camera(scene, np.concatenate(extent), view, screen, width, made)
        for (label, _), top in zip(rows, tops):
            _label(label, camera, left, top, screen, made)
        _light(scene, view, made)
        _settings(scene, samples, Path(path))
        started = time.perf_counter()
        bpy.ops.render.render(write_still=True)
        seconds = time.perf_counter() - started
        size = (scene.render.resolution_x, scene.render.resolution_y)
    finally:
        bpy.data.batch_remove(made)
        _restore(scene, saved)
    return Rendered(Path(path), seconds, size, Path(path).stat().st_size)


def _ground_strip(ground: bpy.types.Collection, points: np.ndarray, along: Vector) -> np.ndarray:
    """(rows, columns, 3) points of the ground under the walk, the nearest row first: a strip along
    it wide enough for the feet and a little longer than the bodies reach, cast from above onto the
    objects of ``ground`` only."""
    scene, depsgraph = bpy.context.scene, bpy.context.evaluated_depsgraph_get()
    solid = {obj.name for obj in ground.all_objects}
    across = Vector((-along.y, along.x, 0.0))  # away from the camera
    origin = points.mean(axis=0)
    offsets, sideways = (points - origin) @ np.array(along), (points - origin) @ np.array(across)
    wide = max(float(np.abs(sideways).max()), 0.2) + 0.3
    grid = []
    for c in np.linspace(-wide, wide, 13):
        row = []
        for a in np.arange(offsets.min() - 0.5, offsets.max() + 0.5, 0.02):
            at = Vector(origin) + along * float(a) + across * float(c)
            start, location = Vector((at.x, at.y, float(points[:, 2].max()) + 10.0)), Vector((at.x, at.y, 0.0))
            while True:  # through anything that is not ground
                hit, found, _, _, obj, _ = scene.ray_cast(depsgraph, start, Vector((0.0, 0.0, -1.0)))
                if not hit or obj.original.name in solid:
                    location = found if hit else location
                    break
                start = found - Vector((0.0, 0.0, 1e-4))
            row.append(tuple(location))
        grid.append(row)
    return np.array(grid)


def _slab_bottom(strip: np.ndarray, shots: Snapshot) -> np.ndarray:
    """The foot of the strip's front face: level, :data:`SLAB` under the strip's lowest point or
    under the lowest foot where one sank further, so that the ground hides it."""
    points = np.concatenate([shots.heads, shots.tails]).reshape(-1, 3)
    bottom = strip[0].copy()
    bottom[:, 2] = min(float(strip[..., 2].min()), float(points[:, 2].min())) - SLAB
    return bottom


def _lift(rows, bottoms: list[np.ndarray], screen, elevation: float) -> float:
    """How far apart in height the rows must be for each row's bodies to clear the slab of the row
    above it on the picture, everywhere along it, with room for a label."""
    right, up = (np.array(v) for v in screen)
    needed = 0.0
    for (_, shots), above in zip(rows[1:], bottoms[:-1]):
        bodies = np.concatenate([shots.heads, shots.tails]).reshape(-1, 3)
        low = np.interp(bodies @ right, above @ right, above @ up)
        needed = max(needed, float((bodies @ up + 0.13 - low).max()))
    return (needed + BAND) / math.cos(elevation)


def _ground_object(name: str, strip: np.ndarray, bottom: np.ndarray, made) -> None:
    """A mesh of the strip with a front face (toward the camera) down to ``bottom``."""
    rows, columns, _ = strip.shape
    vertices = [tuple(p) for p in strip.reshape(-1, 3)] + [tuple(p) for p in bottom]
    faces = [
        (r * columns + k, r * columns + k + 1, (r + 1) * columns + k + 1, (r + 1) * columns + k)
        for r in range(rows - 1)
        for k in range(columns - 1)
    ]
    front = rows * columns
    faces += [(k, front + k, front + k + 1, k + 1) for k in range(columns - 1)]
    obj = _mesh_object(name, vertices, faces, _material(f"{name} ground", (0.55, 0.53, 0.5), made), made)
    obj.visible_shadow = False  # rows are stacked in height: a row's ground must not shade the row below


def _body_object(name: str, shots: Snapshot, offset: np.ndarray, colour, body, made) -> None:
    vertices, faces, far = [], [], []
    for heads, tails in zip(shots.heads + offset, shots.tails + offset):
        for (_, _, radius, side), head, tail in zip(body, heads, tails):
            capsule_vertices, capsule_faces = _capsule(head, tail, radius)
            faces += [tuple(len(vertices) + i for i in face) for face in capsule_faces]
            vertices += capsule_vertices
            far += [SHADES[side] < 1.0] * len(capsule_faces)
    obj = _mesh_object(name, vertices, faces, _material(f"{name} near", colour, made), made)
    obj.data.materials.append(_material(f"{name} far", tuple(SHADES["left"] * c for c in colour), made))
    obj.data.polygons.foreach_set("material_index", np.array(far, np.int32))
    obj.data.polygons.foreach_set("use_smooth", np.ones(len(faces), bool))


def _capsule(head: np.ndarray, tail: np.ndarray, radius: float, segments: int = 16, rings: int = 5):
    """Vertices and quads of a capsule (a sphere when head and tail meet) around the segment."""
    axis = tail - head
    length = float(np.linalg.norm(axis))
    axis = axis / length if length > 1e-9 else np.array([0.0, 0.0, 1.0])
    side = np.cross(axis, [0.0, 0.0, 1.0] if abs(axis[2]) < 0.9 else [1.0, 0.0, 0.0])
    side /= np.linalg.norm(side)
    other = np.cross(axis, side)
    vertices = []
    latitudes = [(head, a) for a in np.linspace(-math.pi / 2, 0.0, rings + 1)]
    latitudes += [(tail, a) for a in np.linspace(0.0, math.pi / 2, rings + 1)]
    for centre, latitude in latitudes:
        for k in range(segments):
            turn = 2.0 * math.pi * k / segments
            ring = math.cos(latitude) * (math.cos(turn) * side + math.sin(turn) * other)
            vertices.append(tuple(centre + radius * (ring + math.sin(latitude) * axis)))
    faces = [
        (
            r * segments + k,
            r * segments + (k + 1) % segments,
            (r + 1) * segments + (k + 1) % segments,
            (r + 1) * segments + k,
        )
        for r in range(len(latitudes) - 1)
        for k in range(segments)
    ]
    return vertices, faces


def _mesh_object(name: str, vertices, faces, material, made) -> bpy.types.Object:
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(vertices, [], faces)
    mesh.materials.append(material)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    made += [mesh, obj]
    return obj


def _material(name: str, colour, made) -> bpy.types.Material:
    material = bpy.data.materials.new(name)
    if material.node_tree is None:  # before 5.0, materials were made without nodes
        material.use_nodes = True
    shader = material.node_tree.nodes["Principled BSDF"]
    shader.inputs["Base Color"].default_value = (*colour, 1.0)
    shader.inputs["Roughness"].default_value = 0.6
    made.append(material)
    return material


def _camera(scene, extent: np.ndarray, view: Vector, screen, width: int, made) -> bpy.types.Object:
    """An orthographic camera looking along ``view`` that frames the world points ``extent``."""
    right, up = (np.array(v) for v in screen)
    across, high = extent @ right, extent @ up
    span = np.array([np.ptp(across), np.ptp(high)]) + 2 * MARGIN
    centre = (right * (across.min() + across.max()) + up * (high.min() + high.max())) / 2
    data = bpy.data.cameras.new("Filmstrip")
    data.type, data.ortho_scale, data.clip_end = "ORTHO", float(span[0]), 1000.0
    camera = bpy.data.objects.new("Filmstrip", data)
    scene.collection.objects.link(camera)
    made += [data, camera]
    location = Vector(centre) + view * (float((extent @ np.array(view)).min()) - 10.0)
    camera.matrix_world = Matrix.LocRotScale(location, view.to_track_quat("-Z", "Y"), None)
    scene.camera = camera
    scene.render.resolution_x = width
    scene.render.resolution_y = int(round(width * span[1] / span[0] / 2)) * 2
    return camera


def _label(text: str, camera: bpy.types.Object, left: float, top: float, screen, made) -> None:
    """``text`` at the left of the picture, just below the height ``top`` (both along ``screen``), facing the camera."""
    curve = bpy.data.curves.new(text, "FONT")
    curve.body, curve.size = text, LABEL
    obj = bpy.data.objects.new(text, curve)
    bpy.context.scene.collection.objects.link(obj)
    made += [curve, obj]
    depth = camera.matrix_world.translation.dot(screen[0].cross(screen[1])) - 1.0  # just in front of the camera
    corner = screen[0] * left + screen[1] * (top - LABEL) + screen[0].cross(screen[1]) * depth
    obj.matrix_world = Matrix.LocRotScale(corner, camera.matrix_world.to_quaternion(), None)
    curve.materials.append(_material(f"{text} text", (0.05, 0.05, 0.05), made))


def _light(scene, view: Vector, made) -> None:
    """A sun from the camera's side, up and to the left (low enough that one row does not shade the
    next), and a light grey sky."""
    sun = bpy.data.lights.new("Filmstrip sun", "SUN")
    sun.energy, sun.angle = 3.0, math.radians(8.0)
    obj = bpy.data.objects.new("Filmstrip sun", sun)
    scene.collection.objects.link(obj)
    level = Vector((view.x, view.y, 0.0)).normalized()
    direction = (level + level.cross(Vector((0.0, 0.0, 1.0))) * 0.5 + Vector((0.0, 0.0, -0.75))).normalized()
    obj.matrix_world = Matrix.LocRotScale(Vector(), direction.to_track_quat("-Z", "Y"), None)
    world = bpy.data.worlds.new("Filmstrip")
    if world.node_tree is None:
        world.use_nodes = True
    background = world.node_tree.nodes["Background"]
    background.inputs["Color"].default_value, background.inputs["Strength"].default_value = (0.92, 0.92, 0.92, 1), 0.8
    made += [sun, obj, world]
    scene.world = world


def _settings(scene, samples: int, path: Path) -> None:
    scene.render.engine = "CYCLES"
    scene.cycles.device, scene.cycles.samples = "CPU", samples
    scene.cycles.use_adaptive_sampling, scene.cycles.use_denoising = True, True
    scene.cycles.max_bounces = 3
    scene.render.resolution_percentage, scene.render.film_transparent = 100, False
    scene.view_settings.view_transform = "Standard"
    settings = scene.render.image_settings
    settings.file_format = "JPEG" if path.suffix.lower() in {".jpg", ".jpeg"} else "PNG"
    settings.color_mode, settings.quality, settings.compression = "RGB", 88, 100
    scene.render.filepath = str(path)


_SAVED = (
    ("render", "engine"),
    ("render", "filepath"),
    ("render", "resolution_x"),
    ("render", "resolution_y"),
    ("render", "resolution_percentage"),
    ("render", "film_transparent"),
    ("view_settings", "view_transform"),
    ("render.image_settings", "file_format"),
    ("render.image_settings", "color_mode"),
    ("render.image_settings", "quality"),
    ("render.image_settings", "compression"),
    ("cycles", "device"),
    ("cycles", "samples"),
    ("cycles", "use_adaptive_sampling"),
    ("cycles", "use_denoising"),
    ("cycles", "max_bounces"),
)


def _owner(scene, path: str):
    for name in path.split("."):
        scene = getattr(scene, name)
    return scene


def _render_settings(scene, ground: bpy.types.Collection) -> dict:
    """What :func:`render` changes: the settings above, the camera and world, and the ground's objects
    (hidden in the render: each row brings its own strip of it)."""
    saved = {(owner, name): getattr(_owner(scene, owner), name) for owner, name in _SAVED}
    saved["camera"], saved["world"] = scene.camera, scene.world
    saved["hidden"] = {obj: obj.hide_render for obj in ground.all_objects}
    for obj in ground.all_objects:
        obj.hide_render = True
    return saved


def _restore(scene, saved: dict) -> None:
    scene.camera, scene.world = saved.pop("camera"), saved.pop("world")
    for obj, hidden in saved.pop("hidden").items():
        obj.hide_render = hidden
    for (owner, name), value in saved.items():
        setattr(_owner(scene, owner), name, value)
