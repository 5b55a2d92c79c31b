# SPDX-License-Identifier: GPL-3.0-or-later
"""Rigs and scenes the Blender tests run on: Blender's own metarigs, imported BVH and glTF, and a
configurable leg for the awkward cases (bone rolls, unconnected joints, rotation modes, scale)."""

import math
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path

import bpy
import numpy as np
from bpy_extras import anim_utils
from mathutils import Euler, Matrix, Quaternion, Vector

#: The tests' own data (files not in the shared folder, each with its licence).
DATA = Path(__file__).resolve().parent.parent / "data"


def human_metarig() -> bpy.types.Object:
    bpy.ops.object.armature_human_metarig_add()
    return bpy.context.object


def open_generated(path) -> bpy.types.Object:
    """Open the file of the ``generated_rig`` fixture; returns its rig, active."""
    bpy.ops.wm.open_mainfile(filepath=str(path))
    rig = bpy.data.objects["rig"]
    assert {"thigh_ik.L", "ORG-thigh.L", "DEF-thigh.L"} <= set(rig.data.bones.keys())  # really the generated rig
    bpy.context.view_layer.objects.active = rig
    return rig


def quadruped_metarig() -> bpy.types.Object:
    bpy.ops.object.armature_basic_quadruped_metarig_add()
    return bpy.context.object


def edit_armature(name: str):
    """A new armature object ``name`` in the scene, active and in Edit Mode; returns it and its edit bones."""
    armature = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, armature)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    return obj, armature.edit_bones


def leg_armature(
    name: str = "Leg",
    rolls=(0.0, 0.0, 0.0),
    connected: bool = True,
    modes=("QUATERNION", "QUATERNION", "QUATERNION"),
    straight: bool = False,
    side: str = "L",
) -> bpy.types.Object:
    """hips → thigh → shin → foot → toe, about a metre tall, bent forward at the knee unless ``straight``.

    ``rolls`` (radians) for thigh, shin, foot; unconnected shins start 2 cm off the thigh's tail.
    """
    obj, bones = edit_armature(name)
    hips = bones.new("hips")
    hips.head, hips.tail = (0.0, 0.0, 1.0), (0.0, 0.0, 1.15)
    names, x = (f"thigh.{side}", f"shin.{side}", f"foot.{side}"), 0.1 if side == "L" else -0.1
    _, _, foot = add_leg(bones, hips, names, x, 0.0, rolls, connected, straight)
    toe = bones.new(f"toe.{side}")
    toe.head, toe.tail = foot.tail, (x, -0.2, 0.02)
    toe.parent, toe.use_connect = foot, True
    bpy.ops.object.mode_set(mode="POSE")
    for bone_name, mode in zip(names, modes):
        obj.pose.bones[bone_name].rotation_mode = mode
    return obj


def add_leg(bones, parent, names, x: float, z: float = 0.0, rolls=(0.0, 0.0, 0.0), connected=True, straight=False):
    """Edit bones ``names`` (thigh, shin, foot) of a leg about a metre tall under ``parent``, at ``x``
    across and ``z`` up, bent forward at the knee unless ``straight``; returns them.

    ``rolls`` (radians) for thigh, shin, foot; an unconnected shin starts 2 cm off the thigh's tail.
    """
    thigh, shin, foot = (bones.new(name) for name in names)
    thigh.head, thigh.tail = (x, 0.0, 0.95 + z), (x, 0.0 if straight else -0.04, 0.5 + z)
    thigh.parent, thigh.roll = parent, rolls[0]
    shin.head = thigh.tail if connected else Vector(thigh.tail) + Vector((0.02, 0.0, -0.01))
    shin.tail = (x, 0.0, 0.08 + z)
    shin.parent, shin.roll, shin.use_connect = thigh, rolls[1], connected
    foot.head, foot.tail = shin.tail, (x, -0.14, 0.02 + z)
    foot.parent, foot.roll, foot.use_connect = shin, rolls[2], True
    return thigh, shin, foot


BVH = """HIERARCHY
ROOT Hips
{{
  OFFSET 0.0 0.0 0.0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
{legs}
}}
MOTION
Frames: {frames}
Frame Time: 0.0333333
{motion}
"""

BVH_LEG = """  JOINT {Side}UpLeg
  {{
    OFFSET {x} 0.0 0.0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT {Side}Leg
    {{
      OFFSET 0.0 -45.0 0.0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT {Side}Foot
      {{
        OFFSET 0.0 -42.0 0.0
        CHANNELS 3 Zrotation Xrotation Yrotation
        JOINT {Side}ToeBase
        {{
          OFFSET 0.0 -6.0 14.0
          CHANNELS 3 Zrotation Xrotation Yrotation
          End Site
          {{
            OFFSET 0.0 0.0 5.0
          }}
        }}
      }}
    }}
  }}"""


def bvh_rig(folder: Path, frames: int = 10) -> bpy.types.Object:
    """A CMU-named two-leg BVH, written here and read by Blender's own importer.

    Its rest pose has perfectly straight legs (as motion capture often does); the motion bends
    the knees. The importer gives Euler bones (rotation mode from the channel order) and
    whatever bone rolls it computes.
    """
    legs = "\n".join(BVH_LEG.format(Side=s, x=x) for s, x in (("Left", 9.0), ("Right", -9.0)))
    lines = []
    for f in range(frames):
        bend = 20.0 + 30.0 * math.sin(f / max(frames - 1, 1) * math.pi)
        leg = f"{0.0} {-bend * 0.5} {0.0} {0.0} {bend} {0.0} {0.0} {-bend * 0.5} {0.0} {0.0} {0.0} {0.0}"
        lines.append(f"0.0 93.0 0.0 0.0 0.0 0.0 {leg} {leg}")
    path = folder / "walk.bvh"
    path.write_text(BVH.format(legs=legs, frames=frames, motion="\n".join(lines)))
    bpy.ops.import_anim.bvh(filepath=str(path), global_scale=0.01, rotate_mode="NATIVE", update_scene_duration=True)
    return bpy.context.object


def as_exported(rig: bpy.types.Object, scale: float = 100.0) -> None:
    """Give ``rig`` the object transform an FBX export brings back (a Mixamo character, say): its bones ``scale``
    times larger and lying Y up, the object turned 90° about X and scaled by 1 / ``scale``, so that every bone is
    where it was in the world at every frame (its location keys scaled with it)."""
    turn = Matrix.Rotation(math.radians(90.0), 4, "X")
    back = turn.inverted() @ Matrix.Scale(scale, 4)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bones = rig.data.edit_bones
    rests = [(bone, back @ bone.matrix, bone.length * scale) for bone in bones]  # all first: a child's head is
    for bone, matrix, length in rests:  # its connected parent's tail
        bone.matrix = matrix.normalized()
        bone.length = length
    bpy.ops.object.mode_set(mode="OBJECT")
    data = rig.animation_data
    for curve in anim_utils.action_get_channelbag_for_slot(data.action, data.action_slot).fcurves:
        if curve.data_path.endswith("location"):
            for key in curve.keyframe_points:
                for point in (key.co, key.handle_left, key.handle_right):
                    point.y *= scale
            curve.update()
    rig.matrix_world = turn @ Matrix.Scale(1.0 / scale, 4) @ rig.matrix_world


def gltf_rig(folder: Path) -> bpy.types.Object:
    """The leg rig with a skinned mesh, exported to glTF and read back by Blender's glTF importer:
    disconnected bones whose tails are the importer's guesses."""
    rig = leg_armature("Exported")
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.mesh.primitive_cylinder_add(radius=0.06, depth=1.0, location=(0.1, 0.0, 0.5), vertices=8)
    mesh = bpy.context.object
    mesh.select_set(True)
    rig.select_set(True)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.parent_set(type="ARMATURE_AUTO")
    path = folder / "leg.glb"
    bpy.ops.export_scene.gltf(filepath=str(path), export_format="GLB", use_selection=True)
    bpy.ops.wm.read_homefile(app_template="")
    bpy.ops.import_scene.gltf(filepath=str(path))
    return next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")


def empty(name: str = "Target", location=(0.0, 0.0, 0.0)) -> bpy.types.Object:
    obj = bpy.data.objects.new(name, None)
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)
    return obj


def plane_ground(size: float = 4.0) -> bpy.types.Collection:
    """A collection "Ground" holding only a plane at the floor, to plant feet on."""
    bpy.ops.mesh.primitive_plane_add(size=size)
    plane, scene = bpy.context.object, bpy.context.scene
    ground = bpy.data.collections.new("Ground")
    scene.collection.children.link(ground)
    for collection in plane.users_collection:
        collection.objects.unlink(plane)
    ground.objects.link(plane)
    return ground


def evaluated(obj: bpy.types.Object) -> bpy.types.Object:
    return obj.evaluated_get(bpy.context.evaluated_depsgraph_get())


def world_tip(obj: bpy.types.Object, bone_name: str) -> np.ndarray:
    """World position of a bone's tail in the evaluated pose (what the viewport shows)."""
    rig = evaluated(obj)
    return np.array(rig.matrix_world @ rig.pose.bones[bone_name].tail)


def world_matrix(obj: bpy.types.Object, bone_name: str | None = None) -> np.ndarray:
    rig = evaluated(obj)
    matrix = rig.matrix_world @ rig.pose.bones[bone_name].matrix if bone_name else rig.matrix_world
    return np.array(matrix)


def pose_snapshot(obj: bpy.types.Object) -> np.ndarray:
    """Every bone's evaluated pose matrix, to show a pose did (or did not) change."""
    rig = evaluated(obj)
    return np.array([np.array(pb.matrix) for pb in rig.pose.bones])


def set_rotation(pose_bone, quaternion) -> None:
    """Turn ``pose_bone`` to ``quaternion`` in its own rotation mode."""
    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        pose_bone.rotation_quaternion = quaternion
    elif mode == "AXIS_ANGLE":
        axis, angle = quaternion.to_axis_angle()
        pose_bone.rotation_axis_angle = (angle, *axis)
    else:
        pose_bone.rotation_euler = quaternion.to_euler(mode)


def enter_pose_mode(obj: bpy.types.Object) -> None:
    bpy.context.view_layer.objects.active = obj
    if bpy.context.mode != "POSE":
        bpy.ops.object.mode_set(mode="POSE")


def place(obj: bpy.types.Object, matrix) -> None:
    obj.matrix_world = Matrix(matrix)


# Builders and measures for the detection, solving, live and bad-input tests.


def named_armature(chains, name: str = "Named", arms=()) -> bpy.types.Object:
    """An armature with a root bone and, under it, one bent three-bone chain per entry of ``chains``,
    bone names root first, e.g. ``("thigh_l", "calf_l", "foot_l")``: a leg reaching the floor, or for
    the entries whose positions are in ``arms``, an arm hanging from the shoulders to the hips.
    Leaves it in Pose Mode."""
    obj, bones = edit_armature(name)
    root = bones.new("Root")
    root.head, root.tail = (0.0, 0.0, 1.0), (0.0, 0.0, 1.1)
    for row, names in enumerate(chains):
        add_leg(bones, root, names, 0.1 + 0.15 * row, 0.6 if row in arms else 0.0)
    bpy.ops.object.mode_set(mode="POSE")
    return obj


def select_bones(obj: bpy.types.Object, names, active: str) -> None:
    """Select exactly the pose bones ``names`` (plus ``active``) and make ``active`` the active bone.

    Blender 5.0 keeps selection on the pose bone, 4.5 on the bone."""
    wanted = set(names) | {active}
    for pose_bone in obj.pose.bones:
        owner = pose_bone if hasattr(pose_bone, "select") else pose_bone.bone
        owner.select = pose_bone.name in wanted
    obj.data.bones.active = obj.data.bones[active]


def limbs_table(obj: bpy.types.Object) -> list[tuple]:
    """Every limb's settings that a failed operator must not change."""
    return [
        (
            limb.name,
            limb.enabled,
            limb.upper_bone,
            limb.lower_bone,
            limb.end_bone,
            limb.target.name if limb.target else "",
            limb.target_bone,
            limb.influence,
            limb.status,
        )
        for limb in obj.limb_ik.limbs
    ]


def tip_bone(limb) -> str:
    """The bone whose tail is the limb's effector."""
    return limb.end_bone or limb.lower_bone


def target_at_tip(obj: bpy.types.Object, limb, offset=(0.0, 0.0, 0.0), turn=(0.0, 0.0, 0.0), name: str = ""):
    """An Empty at the limb's current world tip moved by ``offset`` (world), turned like its last bone and
    then by the Euler angles ``turn`` (radians, in that bone's frame); set as the limb's target.

    It is set as the target while turned like the bone, and turned after: the end bone turns with its
    target from the turn it had when the target was set."""
    last = tip_bone(limb)
    matrix = Matrix(world_matrix(obj, last))
    target = empty(name or f"{limb.name}_target")
    location = Vector(world_tip(obj, last)) + Vector(offset)
    target.matrix_world = Matrix.LocRotScale(location, matrix.to_quaternion(), None)
    limb.target = target
    target.matrix_world = Matrix.LocRotScale(location, matrix.to_quaternion() @ Euler(turn).to_quaternion(), None)
    return target


def goal_error(obj: bpy.types.Object, limb) -> float:
    """World distance from the limb's tip to its target."""
    target = evaluated(limb.target)
    return float(np.linalg.norm(world_tip(obj, tip_bone(limb)) - np.array(target.matrix_world.translation)))


def rotation_error(obj: bpy.types.Object, limb) -> float:
    """Largest difference between the end bone's world rotation and its target's (unit axes)."""
    bone = world_matrix(obj, tip_bone(limb))[:3, :3]
    goal = np.array(evaluated(limb.target).matrix_world)[:3, :3]
    unit = bone / np.linalg.norm(bone, axis=0)
    return float(np.abs(unit - goal / np.linalg.norm(goal, axis=0)).max())


def segments(obj: bpy.types.Object) -> np.ndarray:
    """Armature-space length of every bone and every head-to-parent's-tail gap, evaluated pose."""
    rig = evaluated(obj)
    out = []
    for pose_bone in rig.pose.bones:
        out.append((pose_bone.tail - pose_bone.head).length)
        if pose_bone.parent is not None:
            out.append((pose_bone.head - pose_bone.parent.tail).length)
    return np.array(out)


def local_rotation(obj: bpy.types.Object, bone_name: str):
    """The bone's local rotation as a quaternion, whatever its rotation mode."""
    pose_bone = obj.pose.bones[bone_name]
    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        return pose_bone.rotation_quaternion.normalized()
    if mode == "AXIS_ANGLE":
        angle, *axis = pose_bone.rotation_axis_angle
        return Quaternion(Vector(axis), angle)
    return pose_bone.rotation_euler.to_quaternion()


def twist_angle(before, after) -> float:
    """Twist about the bone's own Y axis of the turn from local rotation ``before`` to ``after``
    (swing-twist decomposition), in radians."""
    delta = before.inverted() @ after
    return abs(math.remainder(2.0 * math.atan2(delta.y, delta.w), 2.0 * math.pi))


def keyed_target(obj: bpy.types.Object, limb, offsets, frames) -> bpy.types.Object:
    """A target for ``limb`` keyed on each of ``frames``, moved by the world offset ``offsets(frame)`` from
    the limb's tip."""
    target = target_at_tip(obj, limb)
    start = target.location.copy()
    for frame in frames:
        target.location = start + Vector(offsets(frame))
        target.keyframe_insert("location", frame=frame)
    return target


def human_with_targets(frames=range(1, 9)) -> bpy.types.Object:
    """Human metarig with its limbs detected: the left foot chases an Empty keyed over ``frames``, the
    right foot and the left hand still Empties within reach; the right arm has no target."""
    rig = human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    limbs = rig.limb_ik.limbs
    keyed_target(rig, limbs["leg.L"], lambda f: (0.02 * f, -0.02 * f, 0.03 * f), frames)
    target_at_tip(rig, limbs["leg.R"], (0.0, -0.1, 0.15))
    target_at_tip(rig, limbs["arm.L"], (-0.15, -0.1, -0.1))
    return rig


def channels(obj: bpy.types.Object) -> np.ndarray:
    """Every bone's rotation (all three kinds) and scale channels as stored, float32, to compare bit for bit."""
    out = []
    for name, width in (("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4), ("scale", 3)):
        buffer = np.empty(len(obj.pose.bones) * width, np.float32)
        obj.pose.bones.foreach_get(name, buffer)
        out.append(buffer)
    return np.concatenate(out)


def fcurve_keys(obj: bpy.types.Object) -> dict[str, np.ndarray]:
    """Every F-curve of the object's action, by ``data_path[index]``, with its keys' (frame, value) pairs."""
    actions = import_module("bl_ext.limb_ik_dev.limb_ik").rig.keys.actions
    return {f"{c.data_path}[{c.array_index}]": actions.read_keys(c)["co"] for c in actions.fcurves(obj) or []}


@contextmanager
def unchanged(rig: bpy.types.Object):
    """The block must leave the rig's pose, limbs and keys, the objects, actions and frame as they were."""
    scene = bpy.context.scene

    def state():
        keys = {path: value.tolist() for path, value in fcurve_keys(rig).items()}
        return (
            limbs_table(rig),
            keys,
            sorted(bpy.data.objects.keys()),
            sorted(bpy.data.actions.keys()),
            scene.frame_current,
            rig.limb_ik.live,
        )

    pose, before = pose_snapshot(rig), state()
    yield
    np.testing.assert_array_equal(pose_snapshot(rig), pose)
    assert state() == before


def library_override(library: Path, collection: str = "Rig") -> bpy.types.Object:
    """The armature of ``collection`` in the file ``library``, linked into the current file and made a
    library override, as an animator does with a character from an asset library."""
    with bpy.data.libraries.load(str(library), link=True) as (_, linked):
        linked.collections = [collection]
    scene, view_layer = bpy.context.scene, bpy.context.view_layer
    # In the scene first, as File > Link puts it: from 5.3 on, overriding a linked collection that
    # nothing in the file uses creates nothing (override_hierarchy_create returns None).
    scene.collection.children.link(linked.collections[0])
    override = linked.collections[0].override_hierarchy_create(scene, view_layer, do_fully_editable=True)
    rig = next(obj for obj in override.objects if obj.type == "ARMATURE")
    view_layer.objects.active = rig
    return rig


def save_library(path: Path, rig: bpy.types.Object, collection: str = "Rig") -> None:
    """Save the current file as ``path`` with ``rig`` moved into its own collection ``collection``."""
    holder = bpy.data.collections.new(collection)
    bpy.context.scene.collection.children.link(holder)
    holder.objects.link(rig)
    bpy.context.scene.collection.objects.unlink(rig)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))


def limb_length(obj: bpy.types.Object, limb) -> float:
    """World length of the limb's bones in the evaluated pose: what its reach tolerance is relative to."""
    rig = evaluated(obj)
    names = [limb.upper_bone, limb.lower_bone] + ([limb.end_bone] if limb.end_bone else [])
    world = np.array(rig.matrix_world)
    heads = [world @ np.append(np.array(rig.pose.bones[n].head), 1.0) for n in names]
    points = [h[:3] for h in heads] + [world_tip(obj, names[-1])]
    return float(sum(np.linalg.norm(b - a) for a, b in zip(points, points[1:])))


def planted_clip(lik, name: str, ground: str, live: bool = False):
    """Clip ``name`` of ``takes/clips.py`` staged on the ``ground`` of ``takes/grounds.py``, its limbs detected,
    that ground the rig's and its legs marked planted; Live switched on with ``live``. Returns the rig, the
    clip's frames and the ground collection."""
    from takes import clips

    rig, frames, collection = clips.stage(name, ground)
    lik.api.detect_limbs(rig)
    rig.limb_ik.ground = collection
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.name.startswith("leg")
    rig.limb_ik.live = live
    return rig, frames, collection
