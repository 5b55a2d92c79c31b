# SPDX-License-Identifier: GPL-3.0-or-later
"""The foot report operator: how well planted feet stand, measured on what plays back."""

import bpy

from ..rig.planting.figures import foot_report
from .common import poll_armature, run


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
            *feet, pelvis = report.lines()
            for line in feet:
                self.report({"INFO"}, line)
            return pelvis[0].upper() + pelvis[1:]

        return run(self, work)


classes = (LIMB_IK_OT_foot_report,)
register, unregister = bpy.utils.register_classes_factory(classes)
