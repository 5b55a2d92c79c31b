# SPDX-License-Identifier: GPL-3.0-or-later
"""The Contacts panel under Ground: the active leg's stances as planting last found them, and the ranges the
animator forces down or up. Drawing only: the buttons are operators, the list edits properties."""

import bpy

from ..rig.planting import legs

#: How each kind of stance is shown: its icon, and the states its row's buttons force it to.
_KINDS = {
    "auto": ("DECORATE_ANIMATE", ("DOWN", "UP")),
    "down": ("PINNED", ("AUTO",)),
    "up": ("UNPINNED", ("AUTO",)),
}
_STATE_ICONS = {"DOWN": "PINNED", "UP": "UNPINNED", "AUTO": "LOOP_BACK"}


class LIMB_IK_UL_contacts(bpy.types.UIList):
    """Frame ranges where the animator forces the foot down or up"""

    def draw_item(self, context, layout, data, item, icon, active_data, active_property, index):
        row = layout.row(align=True)
        row.prop(item, "frame_start", text="")
        row.prop(item, "frame_end", text="")
        row.prop(item, "state", text="")


class LIMB_IK_PT_contacts(bpy.types.Panel):
    bl_label = "Contacts"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Limb IK"
    bl_parent_id = "LIMB_IK_PT_ground"

    @classmethod
    def poll(cls, context):
        obj = context.object
        if obj is None or obj.type != "ARMATURE":
            return False
        limb = obj.limb_ik.active_limb
        return limb is not None and limb.plant

    def draw(self, context):
        layout = self.layout
        obj = context.object
        limb = obj.limb_ik.active_limb
        layout.label(text=f"Forced on {limb.name}")
        row = layout.row()
        row.template_list("LIMB_IK_UL_contacts", "", limb, "contacts", limb, "active_contact_index", rows=3)
        row = layout.row(align=True)
        for state, text in (("DOWN", "Down Here"), ("UP", "Up Here"), ("AUTO", "Automatic Here")):
            button = row.operator("limb_ik.force_contact", text=text, icon=_STATE_ICONS[state])
            button.limb, button.state = limb.name, state
        found = legs.stances_found(obj).get(limb.name)
        if found is None:
            layout.label(text="Plant, Check or switch on Live to list the stances", icon="INFO")
            return
        column = layout.column(align=True)
        column.label(text=f"Stances of {limb.name} (last planted)")
        for start, end, kind in found:
            icon, states = _KINDS[kind]
            row = column.row(align=True)
            row.label(text=f"{start} – {end}  {kind}", icon=icon)
            for state in states:
                button = row.operator("limb_ik.force_contact", text="", icon=_STATE_ICONS[state])
                button.limb, button.frame_start, button.frame_end, button.state = limb.name, start, end, state


classes = (LIMB_IK_UL_contacts, LIMB_IK_PT_contacts)
register, unregister = bpy.utils.register_classes_factory(classes)
