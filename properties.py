# SPDX-License-Identifier: GPL-3.0-or-later
"""Settings saved in the .blend: ``object.limb_ik`` on every armature, with its list of limbs."""

import math

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from .rig.choices import END_ROTATION_ITEMS, PLANE_ITEMS, REACH_ITEMS, SWIVEL_ITEMS
from .rig.limbs import goals
from .rig.live import frame as live

#: Version of the armature settings this code saves; older ones are upgraded on load (:func:`upgrade`).
#: 1: planting's Release Frames and Pelvis Smoothing, in frames, became Release and Smoothing, in seconds.
SETTINGS_VERSION = 1
#: Settings of version 0 renamed in version 1 and turned from frames into seconds: (old name, new name).
_FRAMES_TO_SECONDS = (("lock_release", "release_time"), ("pelvis_smoothing", "smoothing_time"))


def _target_changed(limb, context):
    limb.target_name = limb.target.name if limb.target else ""
    _take_offset(limb, context)


def _take_offset(limb, context):
    # A script may set the target right after placing it: read the scene as evaluated with that.
    goals.take_offset(limb, context.evaluated_depsgraph_get() if context.view_layer is not None else None)


def _remember_pole(limb, _context):
    limb.pole_name = limb.pole.name if limb.pole else ""


def _live_changed(settings, context):
    live.show_now(settings.id_data, context)


class LIMB_IK_PG_contact(bpy.types.PropertyGroup):
    """A range of frames where the animator decides whether a planted foot stands, not the motion."""

    frame_start: IntProperty(name="Start", description="First frame of the range")
    frame_end: IntProperty(name="End", description="Last frame of the range")
    state: EnumProperty(
        name="Contact",
        description="Whether the foot stands over the range, locked where it is, or is free",
        items=(
            ("DOWN", "Down", "The foot stands over the range, locked by Foot Lock, whatever the motion shows"),
            ("UP", "Up", "The foot is free over the range: it neither stands nor is locked"),
        ),
        default="DOWN",
    )


class LIMB_IK_PG_limb(bpy.types.PropertyGroup):
    """One limb: a chain of two or three bones and the goal it reaches for."""

    # `name` is inherited from PropertyGroup and names the limb (e.g. "leg.L").
    enabled: BoolProperty(name="Enabled", description="Solve this limb", default=True)
    upper_bone: StringProperty(name="Upper Bone", description="First bone of the chain: thigh or upper arm")
    lower_bone: StringProperty(
        name="Lower Bone", description="Second bone of the chain, a child of the upper bone: shin or forearm"
    )
    end_bone: StringProperty(
        name="End Bone",
        description="Optional third bone below the lower one (foot, hand), making a three-bone limb whose end bone "
        "takes the goal's turn",
        update=_take_offset,
    )
    target: PointerProperty(
        name="Target",
        type=bpy.types.Object,
        description="Object (or armature, with Target Bone) the limb's tip reaches for; none: its own animated tip",
        update=_target_changed,
    )
    # Blender clears a pointer whose object is deleted without calling its update; the
    # remembered name tells a deleted target from one that was never set.
    target_name: StringProperty(
        name="Target Name", description="Name of the target when it was set", options={"HIDDEN"}
    )
    target_bone: StringProperty(
        name="Target Bone", description="Bone of the target armature to reach for", update=_take_offset
    )
    target_offset: FloatVectorProperty(
        name="Target Offset",
        description="End bone's turn in the target's frame, taken when the target is set; identity copies the "
        "target's rotation",
        size=4,
        subtype="QUATERNION",
        default=(1.0, 0.0, 0.0, 0.0),
    )
    pole: PointerProperty(
        name="Pole",
        type=bpy.types.Object,
        description="Object the knee or elbow points toward; none: least motion",
        update=_remember_pole,
    )
    pole_name: StringProperty(name="Pole Name", description="Name of the pole when it was set", options={"HIDDEN"})
    pole_bone: StringProperty(name="Pole Bone", description="Bone of the pole armature the knee points toward")
    reach: EnumProperty(
        name="Reach",
        description="What the limb does when its target is out of range",
        items=REACH_ITEMS,
        default="EXTEND",
    )
    softness: FloatProperty(
        name="Softness",
        description="Distance over which the limb eases into full extension, so the knee never snaps straight "
        "(0 = off)",
        default=0.0,
        min=0.0,
        soft_max=0.2,
        subtype="DISTANCE",
        unit="LENGTH",
    )
    max_stretch: FloatProperty(
        name="Max Stretch",
        description="Largest factor Stretch may scale the bones by",
        default=1.25,
        min=1.0,
        soft_max=2.0,
    )
    stretch_start: FloatProperty(
        name="Stretch Start",
        description="Fraction of full reach at which Stretch starts scaling the bones (1: only when straight)",
        default=1.0,
        min=0.5,
        max=1.0,
        subtype="FACTOR",
    )
    influence: FloatProperty(
        name="Influence",
        description="Blend from the animated pose (0) to the IK result (1); below 1 the tip stops short of the goal "
        "and is reported so",
        default=1.0,
        min=0.0,
        max=1.0,
        subtype="FACTOR",
    )
    end_rotation: EnumProperty(
        name="End Rotation",
        description="Rotation the end bone of a three-bone limb takes",
        items=END_ROTATION_ITEMS,
        default="TARGET",
    )
    swivel: EnumProperty(
        name="Swivel",
        description="How a three-bone limb without a pole chooses where the knee points",
        items=SWIVEL_ITEMS,
        default="LEAST_MOTION",
    )
    use_hinge: BoolProperty(
        name="Hinge",
        description="The knee or elbow bends only to the side its rest pose (or, if straight, its animation) bends "
        "to; a pole overrides it",
        default=True,
    )
    min_bend: FloatProperty(
        name="Min Bend",
        description="Smallest angle between the two bones (0 = straight allowed)",
        default=0.0,
        min=0.0,
        max=math.pi,
        subtype="ANGLE",
    )
    max_bend: FloatProperty(
        name="Max Bend",
        description="Largest angle between the two bones (180° = folding flat allowed)",
        default=math.pi,
        min=0.0,
        max=math.pi,
        subtype="ANGLE",
    )
    plane: EnumProperty(
        name="Plane",
        description="Plane the limb stays in through its first joint, for side-on characters and cut-out rigs; the "
        "goal is projected into it",
        items=PLANE_ITEMS,
        default="NONE",
    )
    plane_normal: FloatVectorProperty(
        name="Plane Normal",
        description="Normal of the Custom plane, in the armature's space",
        size=3,
        subtype="DIRECTION",
        default=(0.0, 1.0, 0.0),
    )
    plant: BoolProperty(
        name="Plant",
        description="Plant this leg's foot on the rig's ground instead of the floor it was animated on (needs an end "
        "bone: the foot)",
        default=False,
    )
    contacts: CollectionProperty(
        type=LIMB_IK_PG_contact,
        name="Forced Contacts",
        description="Frame ranges where this foot is forced down or up; every other frame is decided by the motion",
    )
    active_contact_index: IntProperty(name="Active Forced Contact", description="Forced range shown selected", min=0)
    toe_bone: StringProperty(
        name="Toe Bone", description="Bone below the foot whose tip is the front of the sole; empty: the foot's tail"
    )
    switch_bone: StringProperty(
        name="IK/FK Switch",
        description="Bone holding the rig's IK/FK switch (Rigify's IK_FK), which decides whether the deform bones "
        "follow this limb",
    )
    status: StringProperty(
        name="Status", description="Why the limb could not be solved the last time it was tried; empty when it was"
    )


class LIMB_IK_PG_rig(bpy.types.PropertyGroup):
    """Limb IK settings of one armature."""

    version: IntProperty(
        name="Settings Version",
        description="Version of Limb IK's settings these were saved with; older ones are upgraded on load",
        default=0,  # what files saved before the version existed read
        min=0,
        options={"HIDDEN"},
    )
    limbs: CollectionProperty(type=LIMB_IK_PG_limb, name="Limbs", description="Limbs of this armature")
    active_limb_index: IntProperty(name="Active Limb", description="Limb shown in the sidebar", min=0)
    live: BoolProperty(
        name="Live",
        description="Solve the enabled limbs on every frame change, so scrubbing, playback and rendering "
        "show the IK pose",
        default=False,
        update=_live_changed,
    )

    ground: PointerProperty(
        name="Ground",
        type=bpy.types.Collection,
        description="Collection of the meshes planted feet stand on (evaluated: modifiers count)",
    )
    authored_ground: PointerProperty(
        name="Authored Ground",
        type=bpy.types.Collection,
        description="Collection of the meshes the animation was made on (a stage's blocks, stairs); empty: read from "
        "the feet's stances",
    )
    planting_source: PointerProperty(
        name="Planting Source",
        type=bpy.types.Action,
        description="The animator's own keys of the channels planting keyed, kept so planting again starts from them",
    )
    pelvis_bone: StringProperty(
        name="Pelvis Bone",
        description="Bone that carries the body, which planting raises or lowers; empty: the nearest common parent "
        "of the planted legs",
    )
    floor_height: FloatProperty(
        name="Authored Floor",
        description="Height of the floor the animation was made on (a foot resting well above it stands on something)",
        default=0.0,
        subtype="DISTANCE",
        unit="LENGTH",
    )
    max_foot_angle: FloatProperty(
        name="Max Foot Angle",
        description="Steepest slope a foot on the ground tips to follow",
        default=math.radians(40.0),
        min=0.0,
        max=math.radians(89.0),
        subtype="ANGLE",
    )
    smoothing_time: FloatProperty(
        name="Smoothing",
        description="Time over which the body's rise and fall with the ground are smoothed while a foot is down (free "
        "in a flight)",
        default=0.15,
        min=0.0,
        soft_max=1.0,
        subtype="TIME_ABSOLUTE",
        unit="TIME_ABSOLUTE",
    )
    pelvis_mode: EnumProperty(
        name="Pelvis",
        description="Which standing legs set the body's height on uneven ground",
        items=(
            (
                "AVERAGE",
                "Average",
                "The average of the standing legs keeps its animated bend; a leg that cannot reach lifts its heel",
            ),
            (
                "FRONT_UPHILL",
                "Front Foot Uphill",
                "Going uphill the front standing leg keeps its animated bend, downhill the lowest one does",
            ),
            ("LOWEST", "Lowest", "The lowest standing leg keeps its animated bend: the body rides lowest"),
        ),
        default="AVERAGE",
    )
    max_pelvis_drop: FloatProperty(
        name="Max Pelvis Drop",
        description="Most the pelvis may sit lower above the ground than it was animated above the floor, even if a "
        "foot then falls short",
        default=1.0,
        min=0.0,
        soft_max=1.0,
        subtype="DISTANCE",
        unit="LENGTH",
    )
    show_overlay: BoolProperty(
        name="Overlay",
        description="Draw in the viewport where each stance plants, each foot's path and the active limb's knee circle",
        default=False,
    )
    use_foot_lock: BoolProperty(
        name="Foot Lock",
        description="Hold each foot where it stands while the animation has it standing, removing slide; "
        "released smoothly at lift-off",
        default=True,
    )
    contact_height: FloatProperty(
        name="Contact Height",
        description="A sole point this close to the height it rests at in the animation is on the ground",
        default=0.03,
        min=0.0,
        soft_max=0.2,
        subtype="DISTANCE",
        unit="LENGTH",
    )
    contact_speed: FloatProperty(
        name="Contact Speed",
        description="A sole point on the ground and slower than this (per second) stands",
        default=0.3,
        min=0.0,
        soft_max=2.0,
        unit="VELOCITY",
    )
    release_time: FloatProperty(
        name="Release",
        description="Time over which a locked foot eases back to its animation after lift-off",
        default=0.1,
        min=0.0,
        soft_max=0.5,
        subtype="TIME_ABSOLUTE",
        unit="TIME_ABSOLUTE",
    )

    @property
    def active_limb(self) -> LIMB_IK_PG_limb | None:
        if 0 <= self.active_limb_index < len(self.limbs):
            return self.limbs[self.active_limb_index]
        return None


def upgrade(objects) -> None:
    """Bring the settings of the armatures among ``objects`` saved by an older Limb IK to
    :data:`SETTINGS_VERSION`, from the ID properties the renamed settings left in the file (frames turned
    into seconds at the frame rate of the armature's scene). Linked armatures cannot be written and are
    left as they are."""
    for obj in objects:
        if obj.type != "ARMATURE" or obj.library is not None or obj.limb_ik.version >= SETTINGS_VERSION:
            continue
        settings = obj.limb_ik
        scene = next(iter(obj.users_scene), None) or bpy.context.scene or bpy.data.scenes[0]
        seconds = scene.render.fps_base / scene.render.fps  # of one frame
        for old, new in _FRAMES_TO_SECONDS:
            if old in settings:
                setattr(settings, new, settings[old] * seconds)
                del settings[old]
        settings.version = SETTINGS_VERSION


classes = (LIMB_IK_PG_contact, LIMB_IK_PG_limb, LIMB_IK_PG_rig)
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)


def register():
    _register_classes()
    bpy.types.Object.limb_ik = PointerProperty(type=LIMB_IK_PG_rig, name="Limb IK", description="Limb IK settings")


def unregister():
    del bpy.types.Object.limb_ik
    _unregister_classes()
