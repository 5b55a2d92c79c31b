# SPDX-License-Identifier: GPL-3.0-or-later
"""The "Limb IK" tab of the 3D Viewport sidebar. Drawing only: nothing here writes data."""

import textwrap

import bpy

from ..rig.limbs import chain, switch
from ..rig.planting import limits


def _armature(context):
    obj = context.object
    return obj if obj is not None and obj.type == "ARMATURE" else None


class LIMB_IK_UL_limbs(bpy.types.UIList):
    """Limbs of the armature: enabled, name, chain length, problems"""

    def draw_item(self, context, layout, data, limb, icon, active_data, active_property, index):
        row = layout.row(align=True)
        row.prop(limb, "enabled", text="")
        row.prop(limb, "name", text="", emboss=False, icon="CON_KINEMATIC" if limb.end_bone else "BONE_DATA")
        if limb.status:
            row.label(text="", icon="ERROR")
        elif limb.switch_bone and switch.held_by_ik(limb.id_data, [limb]):
            row.label(text="", icon="UNLINKED")  # the mesh follows the rig's IK chain, not this limb


class _Panel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Limb IK"

    @classmethod
    def poll(cls, context):
        return _armature(context) is not None


class LIMB_IK_PT_limbs(_Panel, bpy.types.Panel):
    bl_label = "Limb IK"

    def draw(self, context):
        layout = self.layout
        obj = _armature(context)
        settings = obj.limb_ik
        layout.prop(settings, "live", toggle=True, icon="PLAY" if settings.live else "PAUSE")
        row = layout.row()
        row.template_list("LIMB_IK_UL_limbs", "", settings, "limbs", settings, "active_limb_index", rows=4)
        column = row.column(align=True)
        column.operator("limb_ik.add_limb", text="", icon="ADD")
        column.operator("limb_ik.remove_limb", text="", icon="REMOVE")
        column.separator()
        column.operator("limb_ik.detect_limbs", text="", icon="VIEWZOOM")
        held = switch.held_by_ik(obj)
        if held:
            box = layout.box()
            box.label(
                text=f"The mesh follows the rig's IK chain on {', '.join(limb.name for limb in held)}", icon="ERROR"
            )
            box.operator("limb_ik.switch_to_fk", icon="UNLINKED")
        row = layout.row(align=True)
        row.operator("limb_ik.solve", icon="CON_KINEMATIC")
        row.operator("limb_ik.match_fk", text="Match FK")
        row.operator("limb_ik.check", icon="CHECKMARK")
        row = layout.row(align=True)
        row.operator("limb_ik.bake", icon="KEYINGSET")
        if any(limb.plant for limb in settings.limbs):
            row.operator("limb_ik.foot_report", icon="INFO")
        if settings.planting_source is not None:
            row = layout.row(align=True)
            row.label(text="Planted in keys; baking plants the animator's keys again", icon="INFO")
            row.operator("limb_ik.remove_planting", text="", icon="X")


class _LimbPanel(_Panel):
    bl_parent_id = "LIMB_IK_PT_limbs"

    @classmethod
    def poll(cls, context):
        obj = _armature(context)
        return obj is not None and obj.limb_ik.active_limb is not None


class LIMB_IK_PT_limb(_LimbPanel, bpy.types.Panel):
    bl_label = "Chain and Goal"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        obj = _armature(context)
        limb = obj.limb_ik.active_limb
        if limb.status:
            layout.label(text=limb.status, icon="ERROR")
        if switch.held_by_ik(obj, [limb]):
            box = layout.box()
            box.label(
                text=f"The mesh follows the IK chain: {limb.switch_bone} {switch.PROPERTY} is not 1", icon="ERROR"
            )
            box.operator("limb_ik.switch_to_fk", icon="UNLINKED").only_active = True
        column = layout.column(align=True)
        for prop in ("upper_bone", "lower_bone", "end_bone"):
            column.prop_search(limb, prop, obj.data, "bones")
        names = (limb.upper_bone, limb.lower_bone, limb.end_bone)
        if all(name in obj.data.bones for name in names) and chain.apart(obj.data.bones, names[2], names[:2]):
            column.label(text="The chain does not carry its end bone: it is moved by its location too", icon="INFO")
        layout.separator()
        for goal, bone in (("target", "target_bone"), ("pole", "pole_bone")):
            layout.prop(limb, goal)
            target = getattr(limb, goal)
            if target is not None and target.type == "ARMATURE":
                layout.prop_search(limb, bone, target.data, "bones")
        layout.prop(limb, "plane")
        if limb.plane == "CUSTOM":
            layout.prop(limb, "plane_normal", text="")
        if limb.end_bone:
            layout.prop(limb, "end_rotation")
            row = layout.row()
            row.active = limb.pole is None
            row.prop(limb, "swivel")
            layout.prop(limb, "plant")
            if limb.plant:
                layout.prop_search(limb, "toe_bone", obj.data, "bones")
        layout.prop(limb, "influence", slider=True)


class LIMB_IK_PT_reach(_LimbPanel, bpy.types.Panel):
    bl_label = "Reach"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        limb = _armature(context).limb_ik.active_limb
        layout.prop(limb, "reach")
        layout.prop(limb, "softness")
        column = layout.column()
        column.active = limb.reach == "STRETCH"
        column.prop(limb, "max_stretch")
        column.prop(limb, "stretch_start", slider=True)


class LIMB_IK_PT_hinge(_LimbPanel, bpy.types.Panel):
    bl_label = "Hinge"
    bl_options = {"DEFAULT_CLOSED"}

    def draw_header(self, context):
        self.layout.prop(_armature(context).limb_ik.active_limb, "use_hinge", text="")

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        limb = _armature(context).limb_ik.active_limb
        column = layout.column(align=True)
        column.prop(limb, "min_bend")
        column.prop(limb, "max_bend")


class LIMB_IK_PT_ground(_Panel, bpy.types.Panel):
    bl_label = "Ground"
    bl_parent_id = "LIMB_IK_PT_limbs"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        obj = _armature(context)
        settings = obj.limb_ik
        layout.prop(settings, "ground")
        layout.prop_search(settings, "pelvis_bone", obj.data, "bones")
        column = layout.column(align=True)
        column.prop(settings, "floor_height")
        column.prop(settings, "authored_ground")
        column.prop(settings, "max_foot_angle")
        layout.prop(settings, "smoothing_time")
        column = layout.column(align=True)
        column.prop(settings, "pelvis_mode")
        column.prop(settings, "max_pelvis_drop")
        column = layout.column(align=True)
        column.prop(settings, "contact_height")
        column.prop(settings, "contact_speed")
        layout.prop(settings, "use_foot_lock")
        row = layout.row()
        row.active = settings.use_foot_lock
        row.prop(settings, "release_time")
        row = layout.row(align=True)
        row.operator("limb_ik.plant", icon="KEYINGSET")
        row.operator("limb_ik.foot_report", icon="INFO")
        layout.prop(settings, "show_overlay")
        said = limits.remembered(obj)
        if said is not None:
            box = layout.box()
            if not said:
                box.label(text="The last planting bake is within the limits", icon="CHECKMARK")
                return
            box.label(text="The last planting bake said:", icon="ERROR")
            pixels = context.region.width if context.region else 300  # no region when drawn without a window
            width = max(int(pixels / (7 * (context.preferences.system.ui_scale or 1.0))), 20)  # characters a line holds
            for text in dict.fromkeys(said.values()):
                for line in textwrap.wrap(text, width):
                    box.label(text=line)


classes = (LIMB_IK_UL_limbs, LIMB_IK_PT_limbs, LIMB_IK_PT_limb, LIMB_IK_PT_reach, LIMB_IK_PT_hinge, LIMB_IK_PT_ground)
register, unregister = bpy.utils.register_classes_factory(classes)
