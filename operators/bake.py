# SPDX-License-Identifier: GPL-3.0-or-later
"""The Bake and Plant operators: the solved pose keyed over a frame range, with a progress bar; and putting
the animator's keys back."""

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty

from ..rig import timeline
from ..rig.bake import bake, plant
from ..rig.limbs.setup import chosen
from ..rig.planting import source
from .common import length, names, poll_armature, run

LIMB_CHOICES = (
    ("ENABLED", "Enabled", "Every enabled limb"),
    ("SELECTED", "Selected", "Enabled limbs with a selected bone"),
    ("ACTIVE", "Active", "The active limb only"),
)


class _BakeRange:
    """The frames a bake keys, for the Bake and Plant operators: the scene's range unless given (the dialog
    shows it filled in, as Blender's Bake Action does), every ``step``-th frame."""

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

    def draw_range(self, layout) -> None:
        column = layout.column(align=True)
        column.prop(self, "frame_start")
        column.prop(self, "frame_end")
        layout.prop(self, "step")


class LIMB_IK_OT_bake(_BakeRange, bpy.types.Operator):
    """Key the solved pose over a frame range on the limb bones' rotation channels only, leaving every
    other key as it is"""

    bl_idname = "limb_ik.bake"
    bl_label = "Bake IK to Keys"
    bl_options = {"REGISTER", "UNDO"}

    limbs: EnumProperty(name="Limbs", description="Which limbs to bake", items=LIMB_CHOICES, default="ENABLED")
    turn_off_live: BoolProperty(
        name="Turn Off Live",
        description="Switch the rig's live solving off afterwards, so the keys play back as baked",
        default=True,
    )

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def invoke(self, context, event):
        _fill_range(self, context)
        return context.window_manager.invoke_props_dialog(self)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "limbs")
        self.draw_range(layout)
        layout.prop(self, "turn_off_live")

    def execute(self, context):
        def work(progress):
            selected = [pose_bone.name for pose_bone in context.selected_pose_bones or []]
            limbs = chosen(context.object, which=self.limbs, selected_bones=selected)
            return bake(
                context.object,
                context.evaluated_depsgraph_get(),
                limbs,
                *_given_range(self),
                self.step,
                self.turn_off_live,
                progress,
            )

        return _run_bake(self, context, work)


LEG_CHOICES = (
    ("DEFAULT", "Marked or All Legs", "The limbs marked Plant, else every enabled leg with a foot"),
    ("SELECTED", "Selected", "Enabled limbs with a selected bone"),
    ("ACTIVE", "Active", "The active limb only"),
)


class LIMB_IK_OT_plant(_BakeRange, bpy.types.Operator):
    """Plant the legs' feet on the ground and bake the result, keying the planted legs and the pelvis only"""

    bl_idname = "limb_ik.plant"
    bl_label = "Plant and Bake"
    bl_options = {"REGISTER", "UNDO"}

    legs: EnumProperty(name="Legs", description="Which legs to plant", items=LEG_CHOICES, default="DEFAULT")
    ground: StringProperty(
        name="Ground", description="Collection to stand on; empty: the rig's Ground setting", options={"SKIP_SAVE"}
    )
    authored_ground: StringProperty(
        name="Authored Ground",
        description="Collection the animation was made on; empty: the rig's Authored Ground setting",
        options={"SKIP_SAVE"},
    )

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def invoke(self, context, event):
        ground = context.object.limb_ik.ground
        if not self.properties.is_property_set("ground") and ground is not None:
            self.ground = ground.name
        authored = context.object.limb_ik.authored_ground
        if not self.properties.is_property_set("authored_ground") and authored is not None:
            self.authored_ground = authored.name
        _fill_range(self, context)
        return context.window_manager.invoke_props_dialog(self)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "legs")
        layout.prop_search(self, "ground", bpy.data, "collections")
        layout.prop_search(self, "authored_ground", bpy.data, "collections")
        self.draw_range(layout)

    def execute(self, context):
        def work(progress):
            obj, legs = context.object, None  # None: those marked planted, else every leg
            if self.legs != "DEFAULT":
                selected = [pose_bone.name for pose_bone in context.selected_pose_bones or []]
                legs = [limb.name for limb in chosen(obj, which=self.legs, selected_bones=selected)]
            depsgraph = context.evaluated_depsgraph_get()
            ground, authored = self.ground or None, self.authored_ground or None
            return plant(obj, depsgraph, ground, legs, *_given_range(self), self.step, progress, authored)

        return _run_bake(self, context, work)


def _fill_range(operator, context) -> None:
    """Show the scene's range in the dialog where none is given, as Blender's Bake Action does."""
    operator.frame_start, operator.frame_end = timeline.frame_range(context.scene, *_given_range(operator))


def _given_range(operator) -> tuple[int | None, int | None]:
    """The frame range given to ``operator``, None where it was not (the bake takes the scene's)."""
    return tuple(
        getattr(operator, name) if operator.properties.is_property_set(name) else None
        for name in ("frame_start", "frame_end")
    )


def _run_bake(operator, context, work) -> set[str]:
    """Run ``work(progress)``, a bake, under the progress bar, and report what it keyed."""
    window_manager = context.window_manager

    def progress(done: float) -> None:
        window_manager.progress_update(int(100 * done))

    def reported():
        window_manager.progress_begin(0, 100)
        try:
            report = work(progress)
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
        if report.problems or report.warnings:  # keyed, but not as it should be
            said = dict.fromkeys([*report.problems.values(), *report.warnings.values()])
            operator.report({"WARNING"}, " ".join([*said, text]))
            return None
        return text

    return run(operator, reported)


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


classes = (LIMB_IK_OT_bake, LIMB_IK_OT_plant, LIMB_IK_OT_remove_planting)
register, unregister = bpy.utils.register_classes_factory(classes)
