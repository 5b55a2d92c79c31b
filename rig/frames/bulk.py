# SPDX-License-Identifier: GPL-3.0-or-later
"""A rig's animated pose and its limbs' goals over many frames, from their F-curves, without stepping
the scene.

That holds when nothing but F-curves moves what the limbs hang from and reach for: the limb bones and
the bones above them, the targets and poles (bones too, with theirs), the armatures and every object
they are parented to, each animated by the one action it plays, with no constraints, drivers, NLA,
other ways of inheriting from a parent bone or parenting than the plain ones, and no time remapping.
:func:`evaluate` reads those F-curves in bulk (:mod:`.frames.curves`), composes objects and bones as Blender
does (:mod:`..solvers.posing`) and raises :class:`NotBulk`, with a sentence, for anything else.
"""

from dataclasses import dataclass, field

import bpy
import numpy as np

from ...solvers import SolverError, posing
from .. import plan
from ..keys import actions
from ..pose import AXIS_ANGLE, QUATERNION, Pose, by_mode
from . import curves as curves_module
from . import overrides
from .curves import evaluated
from .overrides import bone_path, drivers, nla

OBJECT_CHANNELS = {
    "location": 3,
    "rotation_euler": 3,
    "rotation_quaternion": 4,
    "rotation_axis_angle": 4,
    "scale": 3,
    "delta_location": 3,
    "delta_rotation_euler": 3,
    "delta_rotation_quaternion": 4,
    "delta_scale": 3,
}
BONE_CHANNELS = {"location": 3, "rotation_euler": 3, "rotation_quaternion": 4, "rotation_axis_angle": 4, "scale": 3}
#: Object properties that change how Blender evaluates an object, which F-curves must not drive here.
OBJECT_SETTINGS = ("rotation_mode", "constraints", "hide_viewport", "hide_render", "rigid_body", "limb_ik.")
IDENTITY = (1.0, 0.0, 0.0, 0.0)


class NotBulk(Exception):
    """Why the bulk evaluation cannot stand in for Blender's here (a sentence)."""


@dataclass
class _Animated:
    """One object evaluated here: its channels over the frames, and for an armature its needed bones."""

    obj: bpy.types.Object
    parent: int = -1  #: position of its parent among the things, -1 for none
    bones: set[int] = field(default_factory=set)  #: pose bone indices needed (an armature's), ancestors included
    channels: dict = field(default_factory=dict)  #: channel name -> (F, width) or, for bones, (F, B, width)
    posed: bool = False  #: whether an F-curve moves any of its needed bones


def evaluate(planned: plan.Plan, scene: bpy.types.Scene, frames) -> tuple[Pose, np.ndarray, np.ndarray]:
    """The pose of the planned rig over ``frames`` (the channels of every bone, the matrices of the bones
    the limbs need), the world matrices (F, G, 4, 4) of :attr:`.plan.Plan.refs` there, and the pose bone
    indices whose matrices were composed. Raises :class:`NotBulk` saying why Blender must evaluate instead."""
    render = scene.render
    if render.frame_map_old != render.frame_map_new:
        raise NotBulk(f"the scene '{scene.name}' remaps time (Time Stretching)")
    frames = np.asarray(frames, dtype=np.float64)
    things: list[_Animated] = []
    rig = _need(things, planned.obj, _limb_bones(planned))
    refs = planned.refs
    goal_things = [
        _need(things, obj, _with_ancestors(obj, [obj.pose.bones.find(bone)]) if obj.type == "ARMATURE" and bone else ())
        for obj, bone in refs
    ]
    for thing in things:
        _check(thing)
    curves, targets = [], []
    for n, thing in enumerate(things):
        _static_channels(thing, len(frames))
        for curve, target in _curves(thing):
            curves.append(curve)
            targets.append((n, *target))
    if curves:
        values = curves_module.evaluate(curves, frames)
        for row, (n, channel, bone, component) in enumerate(targets):
            thing = things[n]
            array = thing.channels[channel]
            if not array.flags.writeable:  # still the value of every frame: each frame gets its own
                array = thing.channels[channel] = array.copy()
            if bone is None:
                array[:, component] = values[row]
            else:
                array[:, bone, component] = values[row]
                thing.posed = True
    try:
        world = _world_matrices(things, len(frames))
        poses = {n: _bone_matrices(thing) for n, thing in enumerate(things) if thing.bones}
    except SolverError as error:
        raise NotBulk(f"some of its channels are not numbers ({error})") from error
    goal_world = np.empty((len(frames), len(refs), 4, 4))
    for g, ((obj, bone), n) in enumerate(zip(refs, goal_things)):
        goal_world[:, g] = world[:, n]
        if obj.type == "ARMATURE" and bone:
            goal_world[:, g] = world[:, n] @ poses[n][:, obj.pose.bones.find(bone)]
    channels = things[rig].channels
    pose = Pose(
        world[:, rig],
        poses[rig],
        channels["location"],
        channels["scale"],
        channels["rotation_quaternion"],
        channels["rotation_euler"],
        channels["rotation_axis_angle"],
    )
    return pose, goal_world, np.array(sorted(things[rig].bones), int)


def _limb_bones(planned: plan.Plan) -> list[int]:
    """The bones whose matrices the planned limbs read (with planting, those that carry the feet's skin too), and every
    bone above them."""
    bones = [i for chain in planned.chains for i in chain.written]
    if planned.planting is not None:
        bones.append(planned.planting.pelvis)
        soles = [foot.sole for foot in planned.planting.feet if foot.sole is not None]
        bones += {bone for sole in soles for vertex in sole.skin for bone in vertex.bones}
    return _with_ancestors(planned.obj, bones)


def _with_ancestors(obj: bpy.types.Object, bones) -> list[int]:
    pose_bones, out = obj.pose.bones, set()
    for index in bones:
        bone = pose_bones[index]
        while bone is not None and bone.name not in out:
            out.add(bone.name)
            bone = bone.parent
    return [pose_bones.find(name) for name in out]


def _need(things: list[_Animated], obj: bpy.types.Object, bones) -> int:
    """The position of ``obj`` among ``things``, added with its parents if new; ``bones`` are needed too."""
    for n, thing in enumerate(things):
        if thing.obj == obj:
            thing.bones.update(bones)
            return n
    parent = _need(things, obj.parent, ()) if obj.parent is not None else -1
    things.append(_Animated(obj, parent, set(bones)))
    return len(things) - 1


def _check(thing: _Animated) -> None:
    """Raise :class:`NotBulk` if anything but its own F-curves moves ``thing`` (or its needed bones)."""
    obj = thing.obj
    name = f"'{obj.name}'"
    found = overrides.constraint(obj)
    if found is not None:
        raise NotBulk(f"{name} has the constraint '{found.name}'")
    if obj.parent is not None and obj.parent_type != "OBJECT":
        raise NotBulk(f"{name} is parented to {obj.parent_type.lower().replace('_', ' ')} of '{obj.parent.name}'")
    if obj.parent is not None and obj.parent.type == "CURVE":
        raise NotBulk(f"{name} is parented to the curve '{obj.parent.name}', which may carry it along its path")
    if obj.rigid_body is not None:
        raise NotBulk(f"{name} is a rigid body")
    why = nla(obj)
    if why is not None:
        raise NotBulk(why)
    data = obj.animation_data
    if data is not None:
        action = data.action
        if action is not None and (len(action.layers) > 1 or any(len(la.strips) > 1 for la in action.layers)):
            raise NotBulk(f"the action '{action.name}' of {name} has several layers or strips")
        for driver in drivers(obj):
            if _moves(thing, driver.data_path):
                raise NotBulk(f"{name} has a driver on {driver.data_path}")
    if thing.bones:
        _check_bones(thing)


def _check_bones(thing: _Animated) -> None:
    obj = thing.obj
    armature = obj.data
    if armature.pose_position == "REST":
        raise NotBulk(f"'{obj.name}' shows its rest position")
    animated = armature.animation_data
    if animated is not None and (animated.action is not None or len(animated.drivers)):
        raise NotBulk(f"the armature '{armature.name}' of '{obj.name}' is animated")
    pose_bones = obj.pose.bones
    for index in thing.bones:
        pose_bone = pose_bones[index]
        bone = pose_bone.bone
        found = overrides.constraint(pose_bone)
        if found is not None:
            raise NotBulk(f"bone '{bone.name}' of '{obj.name}' has the constraint '{found.name}'")
        if bone.parent is not None and not bone.use_inherit_rotation:
            raise NotBulk(f"bone '{bone.name}' of '{obj.name}' does not inherit rotation")
        if bone.parent is not None and bone.inherit_scale != "FULL":
            raise NotBulk(f"bone '{bone.name}' of '{obj.name}' inherits scale as '{bone.inherit_scale.title()}'")
    for pose_bone in pose_bones:  # IK moves the bones above its own, as far as its chain reaches
        for constraint in pose_bone.constraints:
            if constraint.mute or constraint.type not in ("IK", "SPLINE_IK"):
                continue
            chain = [pose_bone, *pose_bone.parent_recursive]
            reach = chain[: constraint.chain_count] if constraint.chain_count else chain
            moved = next((b for b in reach if pose_bones.find(b.name) in thing.bones), None)
            if moved is not None:
                raise NotBulk(
                    f"the constraint '{constraint.name}' of bone '{pose_bone.name}' of '{obj.name}' moves "
                    f"bone '{moved.name}'"
                )


def _moves(thing: _Animated, path: str) -> bool:
    """Whether animating ``path`` of ``thing``'s object changes what is evaluated here."""
    where = bone_path(path)
    if where is not None:
        return (
            thing.obj.pose is not None
            and thing.obj.pose.bones.find(where[0]) in thing.bones
            and not where[1].startswith(("[", "bbone_"))
        )
    return path in OBJECT_CHANNELS or path.startswith(OBJECT_SETTINGS)


def _static_channels(thing: _Animated, count: int) -> None:
    """Every channel as it is now (the values of unanimated ones), the same (read-only) at ``count`` frames."""
    obj = thing.obj
    if thing.bones:
        bones = obj.pose.bones
        for name, width in BONE_CHANNELS.items():
            values = np.empty(len(bones) * width, np.float32)
            bones.foreach_get(name, values)
            thing.channels[name] = np.broadcast_to(
                values.astype(np.float64).reshape(1, -1, width), (count, len(bones), width)
            )
    for name, width in OBJECT_CHANNELS.items():
        values = np.array(getattr(obj, name), np.float64).reshape(1, width)
        thing.channels["object " + name] = np.broadcast_to(values, (count, width))


def _curves(thing: _Animated):
    """(F-curve, (channel, bone index or None, component)) for every F-curve animating a channel evaluated
    here; raises :class:`NotBulk` for one animating anything else that matters."""
    obj = thing.obj
    curves = actions.fcurves(obj)
    if curves is None:
        return
    pose_bones = obj.pose.bones if obj.pose is not None else None
    for curve in curves:
        if not evaluated(curve):
            continue
        path = curve.data_path
        where = bone_path(path)
        if where is not None:
            bone = pose_bones.find(where[0]) if pose_bones is not None else -1
            if bone not in thing.bones:
                continue
            channel = where[1]
            if channel not in BONE_CHANNELS:
                if not channel.startswith(("[", "bbone_")):
                    raise NotBulk(
                        f"the F-curve {path}[{curve.array_index}] of '{obj.name}' animates a setting of a limb's bone"
                    )
                continue
            target = (channel, bone, curve.array_index)
        elif path in OBJECT_CHANNELS:
            target = ("object " + path, None, curve.array_index)
        elif path.startswith(OBJECT_SETTINGS):
            raise NotBulk(f"the F-curve {path}[{curve.array_index}] of '{obj.name}' animates a setting")
        else:
            continue
        width = {**OBJECT_CHANNELS, **BONE_CHANNELS}[target[0].removeprefix("object ")]
        if not 0 <= curve.array_index < width:
            raise NotBulk(f"the F-curve {path}[{curve.array_index}] of '{obj.name}' is on no element of its channel")
        yield curve, target


def _world_matrices(things: list[_Animated], count: int) -> np.ndarray:
    """(F, things, 4, 4) world matrices of the things."""
    c = {name: np.stack([t.channels["object " + name] for t in things], axis=1) for name in OBJECT_CHANNELS}
    turn = np.empty((count, len(things), 3, 3))
    for mode, rows in by_mode([t.obj.rotation_mode for t in things]).items():
        if mode == AXIS_ANGLE:  # Blender keeps no delta rotation for this mode
            turn[:, rows] = posing.rotation_matrices(c["rotation_axis_angle"][:, rows], mode)
            continue
        name = "rotation_quaternion" if mode == QUATERNION else "rotation_euler"
        turn[:, rows] = posing.rotation_matrices(c[name][:, rows], mode)
        delta = c["delta_" + name][:, rows]
        if (delta != (IDENTITY if mode == QUATERNION else 0.0)).any():
            turn[:, rows] = posing.rotation_matrices(delta, mode) @ turn[:, rows]
    local = posing.compose(c["location"] + c["delta_location"], turn, c["scale"] * c["delta_scale"])
    for n, thing in enumerate(things):
        if thing.parent >= 0:
            local[:, n] = np.array(thing.obj.matrix_parent_inverse, dtype=np.float64) @ local[:, n]
    return posing.down_tree([t.parent for t in things], local)


def _bone_matrices(thing: _Animated) -> np.ndarray:
    """(F, B, 4, 4) armature-space pose matrices of the armature ``thing``: its needed bones composed, NaN
    for the others (composed once, and read-only, when no F-curve moves them)."""
    obj, frames = thing.obj, len(thing.channels["location"])
    c = {name: values if thing.posed else values[:1] for name, values in thing.channels.items()}
    needed = np.array(sorted(thing.bones), int)
    pose_bones = obj.pose.bones
    position = {index: n for n, index in enumerate(needed)}
    bones = [pose_bones[i].bone for i in needed]
    parents = [position[pose_bones.find(b.parent.name)] if b.parent is not None else -1 for b in bones]
    rest = np.array([b.matrix_local for b in bones], dtype=np.float64)
    count = len(c["location"])
    rotation = np.empty((count, len(needed), 3, 3))
    for mode, rows in by_mode([pose_bones[i].rotation_mode for i in needed]).items():
        channel = {QUATERNION: "rotation_quaternion", AXIS_ANGLE: "rotation_axis_angle"}.get(mode, "rotation_euler")
        rotation[:, rows] = posing.rotation_matrices(c[channel][:, needed[rows]], mode)
    local = posing.bone_locals(
        parents,
        rest,
        [b.use_connect for b in bones],
        [b.use_local_location for b in bones],
        c["location"][:, needed],
        rotation,
        c["scale"][:, needed],
    )
    out = np.full((count, len(pose_bones), 4, 4), np.nan)
    out[:, needed] = posing.down_tree(parents, local)
    return np.broadcast_to(out, (frames, *out.shape[1:]))
