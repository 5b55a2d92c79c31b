# SPDX-License-Identifier: GPL-3.0-or-later
"""The Bake operator: the solved pose keyed over a frame range, with a progress bar."""

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty

from ..rig.keys.bake import bake
from ..rig.limbs.setup import chosen
from ..rig.planting import source
from .common import length, names, poll_armature, run

LIMB_CHOICES = (
    ("ENABLED", "Enabled", "Every enabled limb"),
    ("SELECTED", "Selected", "Enabled limbs with a selected bone"),
    ("ACTIVE", "Active", "The active limb only"),
)


class LIMB_IK_OT_bake(bpy.types.Operator):
    """Key the solved pose over a frame range on the limb bones' rotation channels only, leaving every
    other key as it is"""

    bl_idname = "limb_ik.bake"
    bl_label = "Bake IK to Keys"
    bl_options = {"REGISTER", "UNDO"}

    limbs: EnumProperty(name="Limbs", description="Which limbs to bake", items=LIMB_CHOICES, default="ENABLED")
    # The range is the scene's unless given; the dialog shows it filled in, as Blender's Bake Action does.
    frame_start: IntProperty(
        name="Start", description="First frame to bake (default: the scene's)", options={"SKIP_SAVE"}
    )
    frame_end: IntProperty(name="End", description="Last frame to bake (default: the scene's)", options={"SKIP_SAVE"})
    # No hard minimum: Blender would quietly raise a step of 0 to 1, where the bake refuses it with a sentence.
    step: IntProperty(
        name="Step",
        description="Key every this many frames (the last frame is always keyed)",
        default=1,
        soft_min=1,
        soft_max=10,
    )
    turn_off_live: BoolProperty(
        name="Turn Off Live",
        description="Switch the rig's live solving off afterwards, so the keys play back as baked",
        default=True,
    )

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def invoke(self, context, event):
        for name in ("frame_start", "frame_end"):
            if not self.properties.is_property_set(name):
                setattr(self, name, getattr(context.scene, name))
        return context.window_manager.invoke_props_dialog(self)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "limbs")
        column = layout.column(align=True)
        column.prop(self, "frame_start")
        column.prop(self, "frame_end")
        layout.prop(self, "step")
        layout.prop(self, "turn_off_live")

    def execute(self, context):
        window_manager = context.window_manager
        start, end = (
            getattr(self, name) if self.properties.is_property_set(name) else None
            for name in ("frame_start", "frame_end")
        )

        def progress(done: float) -> None:
            window_manager.progress_update(int(100 * done))

        def work():
            window_manager.progress_begin(0, 100)
            try:
                selected = [pose_bone.name for pose_bone in context.selected_pose_bones or []]
                limbs = chosen(context.object, which=self.limbs, selected_bones=selected)
                report = bake(
                    context.object,
                    context.evaluated_depsgraph_get(),
                    limbs,
                    start,
                    end,
                    self.step,
                    self.turn_off_live,
                    progress,
                )
            finally:
                window_manager.progress_end()
            text = f"Baked {names(report.limbs)}: {report.keys} keys over {report.frames} frames"
            if report.unreached:
                text += "; tip off its goal on " + names(f"{k} ({v} frames)" for k, v in report.unreached.items())
            if report.off_plane:
                text += "; goals off their planes on " + names(
                    f"{k} ({frames} frames, up to {length(context.scene, far)})"
                    for k, (frames, far) in report.off_plane.items()
                )
            text = f"{text}. {report.why}"
            if report.problems:  # keyed, but not as it should be
                self.report({"WARNING"}, " ".join([*dict.fromkeys(report.problems.values()), text]))
                return None
            return text

        return run(self, work)


class LIMB_IK_OT_remove_planting(bpy.types.Operator):
    """Put the animator's own keys back on every channel planting keyed, as they were before the first planting"""

    bl_idname = "limb_ik.remove_planting"
    bl_label = "Remove Planting"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def execute(self, context):
        def work():
            count = source.remove(context.object)
            return f"Removed the planting: the animator's keys are back on {count} channels"

        return run(self, work)


classes = (LIMB_IK_OT_bake, LIMB_IK_OT_remove_planting)
register, unregister = bpy.utils.register_classes_factory(classes)
