# SPDX-License-Identifier: GPL-3.0-or-later
"""Operators that set limbs up: add from the selection, detect by name, remove."""

import bpy
from bpy.props import BoolProperty, IntProperty, StringProperty

from ..rig.choices import PLANE_ITEMS
from ..rig.errors import LimbIKError
from ..rig.limbs import setup as limbs
from ..rig.limbs import switch
from .common import counted, names, poll_armature, run


class LIMB_IK_OT_add_limb(bpy.types.Operator):
    """Add a limb from the selected bones: two or three of one chain, with the end bone active"""

    bl_idname = "limb_ik.add_limb"
    bl_label = "Add Limb"
    bl_options = {"REGISTER", "UNDO"}

    name: StringProperty(
        name="Name", description="Name of the new limb; empty: from the bone names, e.g. leg.L", options={"SKIP_SAVE"}
    )
    with_target: BoolProperty(
        name="Create Target",
        description="Also create an Empty at the limb's tip, turned like its last bone, and make it the target",
        default=False,
    )

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, pose_mode_only=True)

    def execute(self, context):
        obj = context.object

        def work():
            chain = limbs.chain_from_selection(obj, context.active_pose_bone, context.selected_pose_bones or [])
            limb = limbs.add_limb(obj, chain, self.name, self.with_target)
            return f"Added limb '{limb.name}' ({' → '.join(chain)})"

        return run(self, work)


class LIMB_IK_OT_detect_limbs(bpy.types.Operator):
    """Find arms and legs by their bone names (Rigify, Mixamo, BVH, Unreal), else by their shape, and add them
    as limbs"""

    bl_idname = "limb_ik.detect_limbs"
    bl_label = "Detect Limbs"
    bl_options = {"REGISTER", "UNDO"}

    with_targets: BoolProperty(
        name="Create Targets",
        description="Also create an Empty at each new limb's tip, turned like its last bone, and make it the target",
        default=False,
    )

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def execute(self, context):
        try:
            added, skipped = limbs.detect_limbs(context.object, context.evaluated_depsgraph_get(), self.with_targets)
        except LimbIKError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        skipped_text = "; ".join(f"{name}: {why}" for name, why in skipped.items())
        if not added:
            self.report(
                {"WARNING"},
                f"No new limbs found. {skipped_text}"
                if skipped
                else "No arms or legs found, by bone name or by shape; select a chain and use Add Limb",
            )
            return {"CANCELLED"}
        found = [
            f"{names(limb.name for limb, h in added if h == how)} by {how}"
            for how in ("name", "shape")
            if any(h == how for _, h in added)
        ]
        message = f"Added {counted(len(added), 'limb')}: {'; '.join(found)}"
        label = {item[0]: item[1] for item in PLANE_ITEMS}
        planes = sorted({label[limb.plane] for limb, _ in added if limb.plane != "NONE"})
        if planes:
            message += f"; their bones lie in one plane, as in a 2D rig: Plane set to {names(planes)}"
        loose = limbs.loose_feet(context.object, [limb for limb, _ in added])
        if loose:
            message += f". {loose}"
        self.report({"INFO"}, f"{message}. Skipped {skipped_text}" if skipped else message)
        held = switch.held_by_ik(context.object, [limb for limb, _ in added])
        if held:
            self.report({"WARNING"}, switch.describe(context.object, held))
        return {"FINISHED"}


class LIMB_IK_OT_remove_limb(bpy.types.Operator):
    """Remove the active limb; its bones, pose and target are kept"""

    bl_idname = "limb_ik.remove_limb"
    bl_label = "Remove Limb"
    bl_options = {"REGISTER", "UNDO"}

    index: IntProperty(
        name="Index", description="Limb to remove; -1: the active limb", default=-1, options={"SKIP_SAVE"}
    )

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def execute(self, context):
        obj = context.object

        def work():
            index = obj.limb_ik.active_limb_index if self.index < 0 else self.index
            name = obj.limb_ik.limbs[index].name if 0 <= index < len(obj.limb_ik.limbs) else ""
            limbs.remove_limb(obj, index)
            return f"Removed limb '{name}'"

        return run(self, work)


class LIMB_IK_OT_switch_to_fk(bpy.types.Operator):
    """Set the rig's IK/FK switch of the limbs to FK (Rigify's IK_FK at 1), so the deform bones follow Limb IK's pose"""

    bl_idname = "limb_ik.switch_to_fk"
    bl_label = "Switch to FK"
    bl_options = {"REGISTER", "UNDO"}

    only_active: BoolProperty(
        name="Active Limb Only", description="Switch only the active limb", default=False, options={"SKIP_SAVE"}
    )

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def execute(self, context):
        obj = context.object

        def work():
            switched = switch.switch_to_fk(obj, limbs.chosen(obj, which="ACTIVE" if self.only_active else "ALL"))
            if not switched:
                raise LimbIKError(f"No limb of '{obj.name}' is held on IK by an IK/FK switch; nothing to switch.")
            bones = names(sorted({limb.switch_bone for limb in switched}))
            return f"Switched {names(limb.name for limb in switched)} to FK ({switch.PROPERTY} = 1 on {bones})"

        return run(self, work)


classes = (LIMB_IK_OT_add_limb, LIMB_IK_OT_detect_limbs, LIMB_IK_OT_remove_limb, LIMB_IK_OT_switch_to_fk)
register, unregister = bpy.utils.register_classes_factory(classes)
