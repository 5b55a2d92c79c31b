# SPDX-License-Identifier: GPL-3.0-or-later
"""Live solving on frame change: the enabled limbs of every live rig solved from the animator's pose
(:mod:`.animator` keeps that pose), their plans checked anew only when the set-up changes, and
rigs whose targets were dragged by hand solved again."""

import bpy

from . import animator, ground, plant, solve
from .errors import LimbError

_plans: dict[int, tuple[tuple, solve.Plan]] = {}  # by Object.session_uid: (signature, plan)
_moved: set[int] = set()  # live rigs whose targets or poles were moved since they were solved


def live_rigs(scene: bpy.types.Scene):
    return [obj for obj in scene.objects if obj.type == "ARMATURE" and obj.limb_ik.live and obj.limb_ik.limbs]


def forget_all() -> None:
    """Forget everything kept between solves (on loading a file and on unregistering): plans, the
    animator's values, planting analyses and ground trees."""
    _plans.clear()
    _moved.clear()
    animator.forget_all()
    plant.forget_all()
    ground.forget_all()


def note_moved_goals(scene: bpy.types.Scene, depsgraph) -> bool:
    """Note the live rigs of ``scene`` whose targets or poles this depsgraph update moved (say, the
    animator dragging a target); True when some rig needs solving again. The rigs themselves are
    not watched: the live solve's own writes update them."""
    moved = {
        update.id.original.session_uid
        for update in depsgraph.updates
        if update.is_updated_transform and isinstance(update.id, bpy.types.Object)
    }
    if not moved:
        return False
    for obj in live_rigs(scene):
        cached = _plans.get(obj.session_uid)
        goals = (
            {goal[0].session_uid for chain in cached[1].chains for goal in (chain.target, chain.pole) if goal}
            if cached
            else set()
        )
        if goals & moved:
            _moved.add(obj.session_uid)
    return bool(_moved)


def solve_moved(context) -> None:
    """Solve again the live rigs whose goals moved, from the animator's pose. Runs outside the
    depsgraph's evaluation (a timer), as it evaluates the scene once between restoring and solving."""
    rigs = [obj for obj in context.scene.objects if obj.session_uid in _moved] if context.scene else []
    _moved.clear()
    if not rigs:
        return
    for obj in rigs:
        animator.restore(obj)
    context.view_layer.update()
    depsgraph = context.evaluated_depsgraph_get()
    for obj in rigs:
        solve_live(obj, depsgraph)
    animator.forget_recent()


def forget_plans() -> None:
    """Forget the cached plans: undo may have reallocated the limbs and bones they refer to."""
    _plans.clear()


def show_now(obj: bpy.types.Object, context) -> None:
    """After Live was switched on ``obj``: show the IK pose now, or the animator's pose when switched off,
    rather than at the next frame change."""
    if animator.is_suspended():
        return
    animator.restore(obj)
    if obj.limb_ik.live and obj.limb_ik.limbs:
        solve_live(obj, context.evaluated_depsgraph_get())


def _plan(obj: bpy.types.Object) -> solve.Plan:
    """The plan of ``obj``, checked anew only when what it is built from has changed."""
    key = solve.signature(obj)
    cached = _plans.get(obj.session_uid)
    if cached is not None and cached[0] == key:
        return cached[1]
    planned = solve.plan(obj)
    _plans[obj.session_uid] = (key, planned)
    return planned


def solve_live(obj: bpy.types.Object, depsgraph) -> None:
    """Solve the enabled limbs of ``obj``; limbs that cannot be solved are skipped and marked.

    Never raises for a problem with the rig: the problem is stored in the limbs' status.
    """
    try:
        problems = solve.solve_rig(obj, depsgraph, strict=False, planned=_plan(obj), live=True).problems
    except LimbError as error:
        problems = {limb.name: str(error) for limb in obj.limb_ik.limbs if limb.enabled}
    for limb in obj.limb_ik.limbs:
        status = problems.get(limb.name, "") if limb.enabled else ""
        if limb.status != status:  # written only on change: every write tags the object
            limb.status = status
