# SPDX-License-Identifier: GPL-3.0-or-later
"""The diagnostic: every enabled limb that Solve, Bake or Plant would refuse, and why, without changing
anything (the Check operator, ``api.check``, the command line's ``check``)."""

from collections.abc import Callable

import bpy

from . import plan
from .errors import LimbIKError
from .frames import overrides
from .keys import actions
from .limbs import switch
from .planting import legs, source
from .solve import gather, take_reader


def check(obj: bpy.types.Object, depsgraph, progress: Callable[[float], None] | None = None) -> dict[str, str]:
    """Every enabled limb of ``obj`` that cannot be solved and baked as set up, with the reason: what
    Solve, Bake and Plant would refuse (a bone missing, a setting saved by a newer version, the rig or a
    goal not evaluated, a channel that is not a number at the current frame, an uneven scale inherited as
    the solve does not model, a driver or constraint overriding a limb bone, an action that cannot take keys
    or whose keys the NLA would not play as baked, a foot with no ground under it or a body moved further
    than the take explains: planted legs are planted over the take to find out), and a limb whose IK/FK
    switch keeps the mesh from following it. ``progress`` is called with the fraction of the take read, where
    planted legs are."""
    planned = plan.make(obj, from_source=True)  # a planting held in the keys is checked from the animator's keys
    problems = dict(planned.problems)
    if not planned.limbs:
        return problems
    scene = depsgraph.scene
    try:
        if obj.name not in scene.objects:
            raise LimbIKError(f"Armature '{obj.name}' is not in the scene '{scene.name}'.")
        pose = gather(planned, depsgraph)[1]
        actions.check_editable(obj)
        blended = overrides.keys_overridden(obj)
        if blended:
            raise LimbIKError(blended)
        if planned.planting is not None:
            problems.update(planned.planting.outside)
            with source.playing(obj):
                analysis = legs.analysed(
                    planned.planting, depsgraph, pose, take_reader(planned, depsgraph, pose, progress)
                )
            problems.update(analysis.problems)
    except LimbIKError as error:
        problems.update(error.problems or {limb.name: str(error) for limb in planned.limbs})
    held = switch.held_by_ik(obj, planned.limbs)
    if held:
        problems.update({limb.name: switch.describe(obj, [limb]) for limb in held if limb.name not in problems})
    return problems


def stances(obj: bpy.types.Object, depsgraph) -> dict[str, list[tuple[int, int, str]]]:
    """Per planted leg of ``obj``, where planting has its foot stand over the take, as (start, end, kind):
    "auto" where the motion has it, "down" where forced down, and the ranges forced "up". Read as Check
    reads the take: from the animator's keys, planting the enabled planted legs. Raises :class:`LimbIKError`
    when there are none, or the take cannot be planted."""
    planned = plan.make(obj, from_source=True)
    if planned.planting is None:
        problems = [text for limb, text in planned.problems.items() if obj.limb_ik.limbs[limb].plant]
        raise LimbIKError(problems[0] if problems else f"Armature '{obj.name}' has no enabled planted legs.")
    pose = gather(planned, depsgraph)[1]
    with source.playing(obj):
        return legs.analysed(planned.planting, depsgraph, pose, take_reader(planned, depsgraph, pose)).stances
