# SPDX-License-Identifier: GPL-3.0-or-later
"""Forcing a planted foot down or up over a range of frames, or giving the range back to the motion."""

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty

from ..rig.live import frame as live
from ..rig.planting import contacts
from .common import poll_armature, run


class LIMB_IK_OT_force_contact(bpy.types.Operator):
    """Force a leg's foot down (standing, locked) or up (free) over a range of frames, or back to automatic"""

    bl_idname = "limb_ik.force_contact"
    bl_label = "Force Contact"
    bl_options = {"REGISTER", "UNDO"}

    limb: StringProperty(
        name="Limb", description="Leg whose foot is forced; empty: the active limb", options={"SKIP_SAVE"}
    )
    frame_start: IntProperty(
        name="Start", description="First frame forced; unset: the current frame", options={"SKIP_SAVE"}
    )
    frame_end: IntProperty(name="End", description="Last frame forced; unset: the first", options={"SKIP_SAVE"})
    state: EnumProperty(
        name="Contact",
        description="Down: the foot stands and is locked; Up: it is free; Automatic: the motion decides",
        items=(
            ("DOWN", "Down", "The foot stands over the range, locked by Foot Lock, whatever the motion shows"),
            ("UP", "Up", "The foot is free over the range: it neither stands nor is locked"),
            ("AUTO", "Automatic", "Contact Height and Contact Speed decide from the motion, as without forcing"),
        ),
        default="DOWN",
    )

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def execute(self, context):
        obj = context.object
        active = obj.limb_ik.active_limb
        name = self.limb or (active.name if active is not None else "")
        start = self.frame_start if self.properties.is_property_set("frame_start") else context.scene.frame_current
        end = self.frame_end if self.properties.is_property_set("frame_end") else start

        def work():
            contacts.force(obj, name, start, end, self.state)
            if obj.limb_ik.live:  # shown now, not at the next frame change
                live.show_now(obj, context)
            how = "back to automatic" if self.state == "AUTO" else f"forced {self.state.lower()}"
            return f"Limb '{name}': frames {start} to {end} {how}"

        return run(self, work)


classes = (LIMB_IK_OT_force_contact,)
register, unregister = bpy.utils.register_classes_factory(classes)
