# SPDX-License-Identifier: GPL-3.0-or-later
"""Operators that look and change nothing: the check of every limb, and how well planted feet stand."""

import bpy

from ..rig.check import check
from ..rig.errors import LimbIKError
from ..rig.planting.figures import foot_report
from .common import counted, poll_armature, run


class LIMB_IK_OT_check(bpy.types.Operator):
    """Name every enabled limb that Solve, Bake or Plant would refuse, or that the mesh does not follow, and why"""

    bl_idname = "limb_ik.check"
    bl_label = "Check"
    bl_options = {"REGISTER"}  # looks only: nothing to undo

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def execute(self, context):
        obj, window_manager = context.object, context.window_manager
        window_manager.progress_begin(0, 100)  # planted legs are planted over the whole take to find out
        try:
            problems = check(
                obj, context.evaluated_depsgraph_get(), lambda done: window_manager.progress_update(100 * done)
            )
        except LimbIKError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        finally:
            window_manager.progress_end()
        for limb, text in problems.items():
            self.report({"ERROR"}, text if f"'{limb}'" in text else f"Limb '{limb}': {text}")
        if problems:
            return {"CANCELLED"}
        enabled = sum(limb.enabled for limb in obj.limb_ik.limbs)
        self.report({"INFO"}, f"No problems: {counted(enabled, 'enabled limb')} can be solved and baked as set up")
        return {"FINISHED"}


class LIMB_IK_OT_foot_report(bpy.types.Operator):
    """Measure how the planted feet stand over the scene's range as they play back, against the take as authored"""

    bl_idname = "limb_ik.foot_report"
    bl_label = "Foot Report"
    bl_options = {"REGISTER"}  # measures only: nothing to undo

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def execute(self, context):
        def work():
            report = foot_report(context.object, context.evaluated_depsgraph_get())
            lines = report.lines()
            feet, pelvis = lines[: len(report.feet)], lines[len(report.feet)]
            for line in feet:
                self.report({"INFO"}, line)
            for sentence in lines[len(report.feet) + 1 :]:  # the feet beyond the limits
                self.report({"WARNING"}, sentence)
            return pelvis[0].upper() + pelvis[1:]

        return run(self, work)


classes = (LIMB_IK_OT_check, LIMB_IK_OT_foot_report)
register, unregister = bpy.utils.register_classes_factory(classes)
