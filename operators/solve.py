# SPDX-License-Identifier: GPL-3.0-or-later
"""Operators that pose limbs now: solve, and match FK to IK."""

import bpy
from bpy.props import BoolProperty

from ..rig.bake import match_fk
from ..rig.limbs.setup import chosen
from ..rig.solve import solve_rig
from .common import counted, length, names, poll_armature, run


def _summary(report, scene) -> str:
    text = f"Solved {counted(len(report.solved), 'limb')}"
    if report.unreached:
        text += f"; tip off its goal: {names(report.unreached)}"
    if report.off_plane:
        text += "; goals off their planes: " + names(f"{k} ({length(scene, v)})" for k, v in report.off_plane.items())
    return text + "".join(f". {problem}" for problem in dict.fromkeys(report.problems.values()))


class LIMB_IK_OT_solve(bpy.types.Operator):
    """Solve the enabled limbs at the current frame and write the pose"""

    bl_idname = "limb_ik.solve"
    bl_label = "Solve"
    bl_options = {"REGISTER", "UNDO"}

    only_active: BoolProperty(name="Active Limb Only", description="Solve only the active limb", default=False)

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def execute(self, context):
        obj = context.object

        def work():
            limbs = chosen(obj, which="ACTIVE" if self.only_active else "ENABLED")
            return _summary(solve_rig(obj, context.evaluated_depsgraph_get(), limbs), context.scene)

        return run(self, work)


class LIMB_IK_OT_match_fk(bpy.types.Operator):
    """Key the limbs' IK pose on this frame and switch them off, so the animation carries on in FK without a jump"""

    bl_idname = "limb_ik.match_fk"
    bl_label = "Match FK to IK"
    bl_options = {"REGISTER", "UNDO"}

    only_active: BoolProperty(name="Active Limb Only", description="Match only the active limb", default=True)
    insert_keys: BoolProperty(name="Insert Keys", description="Key the matched rotations on this frame", default=True)

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context, needs_limbs=True)

    def execute(self, context):
        obj = context.object

        def work():
            limbs = chosen(obj, which="ACTIVE" if self.only_active else "ENABLED")
            report = match_fk(obj, context.evaluated_depsgraph_get(), limbs, self.insert_keys)
            matched = names(limb.name for limb in limbs)
            return f"{_summary(report, context.scene)}; matched FK and switched off {matched}"

        return run(self, work)


classes = (LIMB_IK_OT_solve, LIMB_IK_OT_match_fk)
register, unregister = bpy.utils.register_classes_factory(classes)
