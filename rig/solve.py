# SPDX-License-Identifier: GPL-3.0-or-later
"""The one solve path: from a plan (:mod:`.plan`), gather the limbs at a frame (:func:`gather`) or over
many (:func:`assemble`, from a pose and goals read over frames), plant and solve one frame or many at
once (:func:`solve_frames`), write (:func:`write`).

At the current frame, :func:`solve_here` solves and :func:`solve_rig` writes the result for the Solve and
Match FK operators and the API; live solving writes it its per_limb way (:mod:`.live.frame`). The bake reads
many frames (:mod:`.frames.sampling`), solves them through :func:`solve_frames` and keys the result.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import bpy
import numpy as np

from ..solvers import ChainBatch, ChainResult, Reach, SolverError, solve_by_count
from ..solvers.forward import loose_end
from . import plan
from .choices import END_ROTATION_ITEMS, PLANE_ITEMS, PLANE_NORMALS, REACH_ITEMS, SWIVEL_ITEMS
from .errors import LimbIKError
from .frames import sampling
from .limbs import goals
from .limbs.chain import check_scale_inheritance
from .planting import legs
from .pose import Pose, local_quaternions, read_pose, write_rotations


@dataclass
class Gathered:
    """One :class:`.plan.Layout` (the limbs of one chain size) gathered into one solver batch at one frame or
    more: what changes from frame to frame, beside what does not."""

    layout: plan.Layout
    batch: ChainBatch


@dataclass
class Report:
    solved: list[str] = field(default_factory=list)
    unreached: list[str] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    off_plane: dict[str, float] = field(default_factory=dict)  #: limb -> how far its goal lay off its plane (world)


def gather(
    planned: plan.Plan, depsgraph, composing: Callable[[Pose], None] | None = None
) -> tuple[list[Gathered], Pose]:
    """Read the pose (over one frame) and the goals of every planned limb at the current frame. ``composing``,
    given, changes the pose read before anything else reads it: live solving puts there the animator's pose
    under its last write (:mod:`.live.compose`)."""
    goals.check_evaluated(planned.obj, planned.limbs, planned.chains, depsgraph)
    obj = planned.obj
    pose = read_pose(obj, obj.evaluated_get(depsgraph))
    check_numbers(planned, pose, [depsgraph.scene.frame_current_final])
    if composing is not None:
        composing(pose)
    goal_world = goals.world_matrices(planned.refs, depsgraph)
    return assemble(planned, pose, goal_world[None]), pose


#: Each rotation mode's pose channel, its name as Blender's channel list shows it, and its components' letters.
_ROTATION_CHANNELS = {
    "QUATERNION": ("quaternion", "Quaternion Rotation", "WXYZ"),
    "AXIS_ANGLE": ("axis_angle", "Axis-Angle Rotation", "WXYZ"),
}
_EULER_CHANNEL = ("euler", "Euler Rotation", "XYZ")  #: every other mode's
_OTHER_CHANNELS = (("location", "Location", "XYZ"), ("scale", "Scale", "XYZ"))


def check_numbers(planned: plan.Plan, pose: Pose, frames) -> None:
    """Raise :class:`LimbIKError` where a planned chain's bone is posed by a channel that is not a number (a NaN or
    infinite key or driver) at one of ``frames`` (those of ``pose``'s leading axis), naming the limb, the first
    such frame and the bone and channel at fault: that bone or one above it. The solvers would only say that
    some matrix is not finite."""
    if np.isfinite(pose.matrices[:, planned.written]).all():
        return
    bones = planned.obj.pose.bones
    for limb, chain in zip(planned.limbs, planned.chains):
        bad = ~np.isfinite(pose.matrices[:, list(chain.written)]).all(axis=(-2, -1))
        if not bad.any():
            continue
        row, column = np.argwhere(bad)[0]  # the first frame
        bone, frame = bones[chain.written[column]], f"{frames[row]:g}"
        for suspect in (*reversed(bone.parent_recursive), bone):
            index = bones.find(suspect.name)
            rotation = _ROTATION_CHANNELS.get(planned.modes[index], _EULER_CHANNEL)
            for channel, label, letters in (rotation, *_OTHER_CHANNELS):
                values = getattr(pose, channel)[row, index]
                if not np.isfinite(values).all():
                    letter = letters[int(np.argmin(np.isfinite(values)))]
                    raise LimbIKError(
                        f"Limb '{limb.name}': the {letter} {label} of bone '{suspect.name}' is not a number at "
                        f"frame {frame}; fix its key or driver."
                    )
        raise LimbIKError(
            f"Limb '{limb.name}': bone '{bone.name}' is posed to values that are not numbers at frame {frame} "
            "(by a constraint or a driver); fix what moves it."
        )


def assemble(planned: plan.Plan, pose: Pose, goal_world: np.ndarray) -> list[Gathered]:
    """The planned chains over F frames, from the pose over those frames (arrays with a leading axis of F)
    and the world matrices ``goal_world`` (F, G, 4, 4) of :attr:`.plan.Plan.refs` there. Each group's rows are
    its limbs frame after frame."""
    count = len(pose.world)
    check_scale_inheritance(planned.limbs, planned.chains, pose.matrices)
    unit = world_length(pose)
    goal = np.linalg.inv(pose.world)[:, None] @ goal_world  # armature space
    settings = _limb_settings(planned.obj.limb_ik.limbs)
    rotations = local_quaternions(pose, planned.written, planned.written_modes)  # every layout's, in order
    starts = np.cumsum([0] + [layout.written.size for layout in planned.layouts])
    groups = []
    for layout, start in zip(planned.layouts, starts):
        size, limbs, written, aimed, poled = layout.size, layout.limbs, layout.written, layout.aimed, layout.poled
        per_limb = {name: values[layout.settings] for name, values in settings.items()}
        local = rotations[:, start : start + written.size].reshape(count, *written.shape, 4)
        matrices = pose.matrices[:, layout.index]
        last = matrices[:, :, -1]
        tip = last[..., :3, 3] + last[..., :3, 1] * layout.tip_length
        points = np.concatenate([matrices[..., :3, 3], tip[:, :, None]], axis=2)
        target, end_rotation = tip.copy(), last[..., :3, :3].copy()
        pole, pole_mask = np.zeros((count, len(limbs), 3)), np.zeros(len(limbs), bool)
        if aimed:
            aim = goal[:, layout.aims]
            target[:, aimed] = aim[..., :3, 3]
            turned = [i for i, row in enumerate(aimed) if per_limb["end_rotation"][row] == END_ROTATION["TARGET"]]
            if turned:
                turned_rows = [aimed[i] for i in turned]
                offsets = np.tile(per_limb["target_offset"][turned_rows], (count, 1))
                end_rotation[:, turned_rows] = goals.end_rotations(aim[:, turned].reshape(-1, 4, 4), offsets).reshape(
                    count, len(turned), 3, 3
                )
        if poled:
            pole[:, poled] = goal[:, layout.poles, :3, 3]
            pole_mask[poled] = True

        def rows(values):  # frame after frame, the limbs of each
            return values.reshape(-1, *values.shape[2:])

        def tiled(values):  # a setting per limb, the same at every frame
            return values if count == 1 else np.tile(values, (count, *([1] * (np.ndim(values) - 1))))

        batch = ChainBatch(
            matrices=rows(matrices),
            scales=rows(pose.scale[:, layout.index]),
            rotations=rows(local[:, :, :size]),
            points=rows(points),
            target=rows(target),
            end_rotation=rows(end_rotation) if size == 3 else None,
            pole=rows(pole),
            pole_mask=tiled(pole_mask),
            hinge=tiled(layout.hinge),
            use_hinge=tiled(per_limb["use_hinge"].astype(bool)),
            end_plane=tiled(per_limb["swivel"] == SWIVEL["END_PLANE"]),
            influence=tiled(per_limb["influence"]),
            options={
                "mode": tiled(per_limb["reach"]),
                "softness": (per_limb["softness"][None, :] / unit[:, None]).ravel(),
                "max_stretch": tiled(per_limb["max_stretch"]),
                "stretch_start": tiled(per_limb["stretch_start"]),
                # Stored in single precision, 180° reads as slightly more than pi.
                "min_bend": tiled(np.minimum(per_limb["min_bend"], np.pi)),
                "max_bend": tiled(np.minimum(per_limb["max_bend"], np.pi)),
            },
            plane=None if (plane := _plane_normals(per_limb)) is None else tiled(plane),
        )
        if layout.with_toe:  # planting sets the toe's goal; until then it keeps its animated turn
            toes = pose.matrices[:, written[:, -1]]
            batch.toe_matrices, batch.toe_scales = rows(toes), rows(pose.scale[:, written[:, -1]])
            batch.toe_rotations, batch.toe_goal = rows(local[:, :, -1]), rows(toes[..., :3, :3])
        groups.append(Gathered(layout, batch))
    return groups


def _enum_values(items) -> dict[str, int]:
    """What ``foreach_get`` reads for each item of an enum setting: its position in the items."""
    return {item[0]: position for position, item in enumerate(items)}


END_ROTATION, SWIVEL, PLANE = _enum_values(END_ROTATION_ITEMS), _enum_values(SWIVEL_ITEMS), _enum_values(PLANE_ITEMS)
_PLANE_NORMALS = np.array(PLANE_NORMALS)
assert [_enum_values(REACH_ITEMS)[mode.name] for mode in Reach] == [mode.value for mode in Reach]
_SETTINGS = (
    ("reach", np.int64),
    ("end_rotation", np.int64),
    ("swivel", np.int64),
    ("use_hinge", np.int64),
    ("softness", np.float64),
    ("max_stretch", np.float64),
    ("stretch_start", np.float64),
    ("influence", np.float64),
    ("min_bend", np.float64),
    ("max_bend", np.float64),
    ("plane", np.int64),
)


def _limb_settings(limbs) -> dict[str, np.ndarray]:
    """Every limb's solve settings, each read for all limbs at once (they may be animated)."""
    out = {}
    for name, dtype in _SETTINGS:
        values = np.empty(len(limbs), np.float32 if dtype is np.float64 else np.int32)
        limbs.foreach_get(name, values)
        out[name] = values.astype(dtype)
    offsets = np.empty(4 * len(limbs), np.float32)
    limbs.foreach_get("target_offset", offsets)
    out["target_offset"] = offsets.reshape(-1, 4).astype(np.float64)
    normals = np.empty(3 * len(limbs), np.float32)
    limbs.foreach_get("plane_normal", normals)
    out["plane_normal"] = normals.reshape(-1, 3).astype(np.float64)
    return out


def _plane_normals(per_limb: dict[str, np.ndarray]) -> np.ndarray | None:
    """(n, 3) each limb's plane normal in the armature's space, zero for none; None when no limb has a plane."""
    custom = (per_limb["plane"] == PLANE["CUSTOM"])[:, None]
    normals = np.where(custom, per_limb["plane_normal"], _PLANE_NORMALS[per_limb["plane"]])
    return normals if normals.any() else None


def world_length(pose: Pose) -> float | np.ndarray:
    """World length of one unit of the armature's space; (F,) over F frames."""
    return np.abs(np.linalg.det(pose.world[..., :3, :3])) ** (1.0 / 3.0)


@dataclass
class Solved:
    """The planned limbs solved at one or more frames: rows of every group frame-major."""

    groups: list[Gathered]
    results: list[ChainResult]
    carried: list[legs.Carried]  #: the pelvis' channels at each frame when planting moves it; else empty
    bones: np.ndarray  #: pose bone indices written at each frame: every chain's bones, and the pelvis planting carries
    located: dict[
        int, np.ndarray
    ]  #: pose bone index -> (F, 3) location of each loose end bone or toe (:func:`_loose_ends`)


def solve_frames(planned: plan.Plan, groups: list[Gathered], pose: Pose, frames, analysis=None) -> Solved:
    """Solve the planned limbs at every one of ``frames``, gathered there (:func:`assemble`: ``groups``,
    and ``pose`` with a leading axis of F), all frames in one solve per group. Where legs are planted,
    ``analysis`` (:func:`.planting.legs.analyse` of a take holding the frames) first puts the ground into
    their goals. Raises :class:`LimbIKError` naming the limbs the solvers refuse."""
    carried = [] if planned.planting is None else legs.set_goals(planned.planting, groups, pose, analysis, frames)
    results = []
    for group in groups:
        try:
            results.append(solve_by_count(group.batch))
        except SolverError as error:
            names = ", ".join(f"'{limb.name}'" for limb in group.layout.limbs)
            raise LimbIKError(f"Limbs {names} could not be solved: {error}.") from error
    pelvis = [carried[0].index] if carried else []
    located = _loose_ends(groups, results, pose, len(frames))
    return Solved(groups, results, carried, np.concatenate([planned.written, pelvis]).astype(int), located)


def _loose_ends(groups: list[Gathered], results: list[ChainResult], pose: Pose, count: int) -> dict[int, np.ndarray]:
    """Turn every end bone and toe that hangs from no bone of its chain where the chain carries it, in
    ``results``, and return the locations that move it there: pose bone index -> (F, 3) over the ``count``
    frames of ``pose``. Toes first: the solve carries one by its end bone as if that were the lower bone's child."""
    out = {}
    for group, result in zip(groups, results):
        layout, batch = group.layout, group.batch
        size = layout.size
        for loose, column in ((layout.loose_toes, size), (layout.loose, size - 1)):
            if not loose:
                continue
            bones = layout.written[loose, column]
            rows = (np.arange(count)[:, None] * len(layout.limbs) + np.array(loose)).ravel()  # frame-major
            # The batch holds the chain as planting carries it with the body; the bone itself is where Blender has it.
            matrices, scales, rotations = batch.matrices[rows], batch.scales[rows], batch.rotations[rows]
            if column == size:
                matrices = np.concatenate([matrices, batch.toe_matrices[rows, None]], axis=1)
                scales = np.concatenate([scales, batch.toe_scales[rows, None]], axis=1)
                rotations = np.concatenate([rotations, batch.toe_rotations[rows, None]], axis=1)
            posed, location = pose.matrices[:, bones].reshape(-1, 4, 4), pose.location[:, bones].reshape(-1, 3)
            rotation, location = loose_end(
                matrices,
                scales,
                rotations,
                result.rotations[rows, : column + 1],
                result.y_scale[rows, : column + 1],
                posed,
                location,
            )
            result.rotations[rows, column] = rotation
            out.update(zip(bones.tolist(), np.swapaxes(location.reshape(count, len(bones), 3), 0, 1)))
    return out


def write(obj: bpy.types.Object, pose: Pose, solved: Solved, every: bool = False) -> None:
    """Write the solved rotations (and stretch) of one frame, and the pelvis channels planting
    carries, into the pose; with ``every``, every channel as ``pose`` holds it (:func:`.pose.write_rotations`)."""
    groups, results, carried = solved.groups, solved.results, solved.carried
    indices = [g.layout.written.ravel() for g in groups]
    modes = [mode for g in groups for mode in g.layout.modes]
    quaternions = [r.rotations.reshape(-1, 4) for r in results]
    y_scale = np.concatenate([r.y_scale.ravel() for r in results])
    turned = [c for c in carried if c.rotation is not None]
    indices.append(np.array([c.index for c in turned], int))
    modes += [obj.pose.bones[c.index].rotation_mode for c in turned]
    quaternions.append(np.array([c.rotation for c in turned]).reshape(-1, 4))
    y_scale = np.concatenate([y_scale, np.ones(len(turned))])
    write_rotations(
        obj,
        pose,
        np.concatenate(indices),
        modes,
        np.concatenate(quaternions),
        y_scale if (y_scale != 1.0).any() else None,
        {c.index: c.location for c in carried} | {bone: at[0] for bone, at in solved.located.items()},
        every,
    )


@dataclass
class Here:
    """The planned limbs solved at the current frame, not written yet: what Solve and live solving write."""

    pose: Pose  #: the rig's pose at the frame, over one frame, as read (the animator's)
    solved: Solved
    frame: float
    problems: dict[str, str]  #: limb -> sentence: the plan's, and a body planting moved too far


def solve_here(
    planned: plan.Plan,
    depsgraph,
    composing: Callable[[Pose], None] | None = None,
    progress: Callable[[float], None] | None = None,
    may_step: bool = True,
) -> Here:
    """Gather, plant and solve the planned limbs at the current frame (``composing``: see :func:`gather`);
    ``progress`` is called with the fraction of the take read, where planting reads it anew, and
    ``may_step``: whether the scene may be stepped through the take to read it (see :func:`.frames.sampling.take`)."""
    groups, pose = gather(planned, depsgraph, composing)
    analysis, problems = None, dict(planned.problems)
    if planned.planting is not None:
        read = take_reader(planned, depsgraph, pose, progress, may_step)
        analysis = legs.analysed(planned.planting, depsgraph, pose, read)
        problems.update(analysis.problems)  # solved all the same: the pose is what planting on that ground gives
    frame = depsgraph.scene.frame_current_final
    return Here(pose, solve_frames(planned, groups, pose, [frame], analysis), frame, problems)


def solve_rig(obj: bpy.types.Object, depsgraph, limbs=None) -> Report:
    """Solve ``limbs`` (default: all enabled) of ``obj`` at the current frame and write the pose: the Solve and
    Match FK operators and the API's ``solve``. Any limb that cannot be solved raises :class:`LimbIKError`
    before anything is written, and so does a rig with no limb to solve."""
    planned = plan.make(obj, limbs)
    planned.raise_first_problem()
    if not planned.limbs:
        raise LimbIKError(f"Armature '{obj.name}' has no enabled limbs to solve.")
    here = solve_here(planned, depsgraph)
    write(obj, here.pose, here.solved)
    report = Report(problems=here.problems)
    for group, result in zip(here.solved.groups, here.solved.results):
        for limb, reached, off_plane in zip(group.layout.limbs, result.reached, result.off_plane):
            report.solved.append(limb.name)
            if not reached:
                report.unreached.append(limb.name)
            if off_plane:
                report.off_plane[limb.name] = float(off_plane * world_length(here.pose)[0])
    return report


def take_reader(planned: plan.Plan, depsgraph, shown: Pose, progress=None, may_step: bool = True):
    """What reads the take for planting's analysis at this frame: :func:`.frames.sampling.take`."""
    return lambda frames: sampling.take(planned, depsgraph, frames, shown, progress, may_step)
