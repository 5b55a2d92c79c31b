# SPDX-License-Identifier: GPL-3.0-or-later
"""Live solving on frame change: the enabled limbs of every live rig solved from the animator's pose
(:mod:`.animator` keeps that pose), their plans checked anew only when the set-up changes, and
rigs whose targets were dragged by hand solved again."""

import bpy
import numpy as np

from .. import animator, plan, solve
from ..errors import LimbIKError
from ..frames import sampling
from ..planting import ground, legs
from . import compose

_plans: dict[int, tuple[tuple, plan.Plan]] = {}  # by Object.session_uid: (signature, plan)
_moved: set[int] = set()  # live rigs whose targets or poles were moved since they were solved, or to solve again
_composing: dict[int, plan.Plan] = {}  # rigs not restored before this frame change: the plan that allowed it
_uncomposable: set[int] = set()  # rigs whose plan's animator's pose could not be composed: restored from then on


def live_rigs(scene: bpy.types.Scene):
    return [obj for obj in scene.objects if obj.type == "ARMATURE" and obj.limb_ik.live and obj.limb_ik.limbs]


def frame_changed(scene: bpy.types.Scene, depsgraph, may_step: bool) -> bool:
    """Solve every live rig of ``scene`` at the frame just changed to, unless live solving is paused. True
    when some rig must be solved again once evaluated (:func:`solve_moved`); see :func:`solve_live`."""
    if animator.is_suspended():
        return False
    again = [solve_live(obj, depsgraph, may_step=may_step) for obj in live_rigs(scene)]
    return any(again)


def forget_all() -> None:
    """Forget everything kept between solves (on loading a file and on unregistering): plans, the
    animator's values, planting analyses and ground trees."""
    _plans.clear()
    _moved.clear()
    _composing.clear()
    _uncomposable.clear()
    compose.forget_all()
    animator.forget_all()
    legs.forget_all()
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
    _composing.clear()
    _uncomposable.clear()


def before_frame_change(scene: bpy.types.Scene) -> None:
    """Put back the animator's values under the live writes in ``scene``, except on live rigs whose solve
    composes the animator's pose itself (:mod:`.live.compose`): their armatures are then evaluated once this
    frame. Nothing while live solving is paused."""
    if animator.is_suspended():
        return
    _composing.clear()
    for obj in live_rigs(scene):
        cached = _plans.get(obj.session_uid)
        if cached is not None and _composable(cached[1]):
            _composing[obj.session_uid] = cached[1]
    animator.restore_scene(scene, keep=_composing)


def _composable(planned: plan.Plan) -> bool:
    return (
        planned.obj.session_uid not in _uncomposable
        and bool(planned.limbs)
        and planned.planting is None
        and len(planned.obj.pose.bones) >= compose.COMPOSE_FROM
        and compose.goals_apart(planned)
        and compose.may_compose(planned)
    )


def show_now(obj: bpy.types.Object, context) -> None:
    """After Live was switched on ``obj``: show the IK pose now, or the animator's pose when switched off,
    rather than at the next frame change."""
    if animator.is_suspended():
        return
    animator.restore(obj)
    if obj.limb_ik.live and obj.limb_ik.limbs:  # the first frame may read and plant a long take: progress shown
        window_manager = context.window_manager
        window_manager.progress_begin(0, 100)
        try:
            solve_live(obj, context.evaluated_depsgraph_get(), lambda done: window_manager.progress_update(90 * done))
        finally:
            window_manager.progress_end()


def _plan(obj: bpy.types.Object) -> plan.Plan:
    """The plan of ``obj``, checked anew only when what it is built from has changed."""
    key = plan.signature(obj)
    cached = _plans.get(obj.session_uid)
    if cached is not None and cached[0] == key:
        return cached[1]
    planned = plan.make(obj)
    _plans[obj.session_uid] = (key, planned)
    _uncomposable.discard(obj.session_uid)
    return planned


def solve_live(obj: bpy.types.Object, depsgraph, progress=None, may_step: bool = True) -> bool:
    """Solve the enabled limbs of ``obj``; limbs that cannot be solved are skipped and marked. True when the
    rig must be solved again once evaluated (:func:`solve_moved`): the animator's pose under the last write,
    left in place before this frame change, could not be composed after all.

    Never raises for a problem with the rig: the problem is stored in the limbs' status. ``progress`` is
    called with the fraction of the take read, where planting reads it anew. Without ``may_step`` (a frame
    change), a take that can only be read by stepping the scene is not read here: the rig shows the
    animator's pose, its planted legs say so, and it is solved again once the frame change is over.
    """
    last_write = animator.pending(obj)  # left in place by before_frame_change
    try:
        planned = _plan(obj)
        if last_write is not None and not (
            (_composing.get(obj.session_uid) is planned or _composable(planned))
            and np.isin(last_write.indices, planned.written).all()
        ):
            return _solve_again(obj)
        problems = dict(planned.problems)
        if planned.limbs:

            def composing(pose):  # the animator's pose under the last write, left in place
                if not compose.compose(planned, pose, last_write):
                    raise compose.Uncomposed

            here = solve.solve_here(planned, depsgraph, composing if last_write else None, progress, may_step)
            every = last_write is not None  # what is under the last write too

            def write():
                solve.write(obj, here.pose, here.solved, every)

            animator.overwrite(obj, here.frame, here.solved.bones, here.pose, write)
            problems = here.problems
    except compose.Uncomposed:
        _uncomposable.add(obj.session_uid)  # restored before the frame changes, while this plan holds
        return _solve_again(obj)
    except sampling.NotHere:
        reading = "Reading the take to plant it: shown as animated until then."
        for limb in obj.limb_ik.limbs:
            if limb.enabled and limb.plant and limb.status != reading:
                limb.status = reading
        return _solve_again(obj)
    except LimbIKError as error:
        problems = {limb.name: str(error) for limb in obj.limb_ik.limbs if limb.enabled}
        animator.restore(obj)  # nothing written: the animator's pose, as when restored before the frame change
    for limb in obj.limb_ik.limbs:
        status = problems.get(limb.name, "") if limb.enabled else ""
        if limb.status != status:  # written only on change: every write tags the object
            limb.status = status
    return False


def _solve_again(obj: bpy.types.Object) -> bool:
    """Put back the animator's values on ``obj`` and have it solved again once evaluated."""
    animator.restore(obj)
    _moved.add(obj.session_uid)
    return True
