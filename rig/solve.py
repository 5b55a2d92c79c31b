# SPDX-License-Identifier: GPL-3.0-or-later
"""The one solve path: plan the limbs, gather a frame, solve, write.

The Solve operator, the live handler, the bake and the API all go through here; they differ
only in what they do with problems (report and stop, mark and skip, fail the file) and where
the result goes (pose channels or keys).
"""

from dataclasses import dataclass, field

import bpy
import numpy as np

from ..solvers import SolverError
from ..solvers.chains import ChainBatch, ChainResult, solve_chains
from ..solvers.options import Reach
from . import goals, plant
from .chain import Chain, chain_of, check_armature
from .errors import LimbError
from .ground import Ground
from .pose import Pose, local_quaternions, read_pose, write_rotations


@dataclass
class Plan:
    """The enabled limbs of one armature that can be solved, and why the others cannot."""

    obj: bpy.types.Object
    limbs: list = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  #: limb name -> sentence

    def raise_first_problem(self) -> None:
        if self.problems:
            raise LimbError(next(iter(self.problems.values())))


@dataclass
class Group:
    """The planned chains of one size (two or three bones), gathered at one or more frames."""

    size: int
    limbs: list
    chains: list[Chain]
    batch: ChainBatch
    modes: list[str]  #: rotation mode of every written bone, row-major

    @property
    def bones(self) -> np.ndarray:
        """(rows, bones) pose bone indices written: each chain's bones, and its toe when it has one."""
        return np.array([chain.written for chain in self.chains])


@dataclass
class Report:
    solved: list[str] = field(default_factory=list)
    unreached: list[str] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)


def plan(obj: bpy.types.Object, limbs=None) -> Plan:
    """Check the given limbs (default: the enabled ones) of ``obj``. Raises only for a bad armature."""
    check_armature(obj)
    result = Plan(obj)
    owner: dict[str, str] = {}
    for limb in limbs if limbs is not None else [item for item in obj.limb_ik.limbs if item.enabled]:
        try:
            chain = chain_of(obj, limb)
            for name in chain.bones:
                if name in owner:
                    raise LimbError(f"Limb '{limb.name}': bone '{name}' already belongs to limb '{owner[name]}'.")
            for name in chain.bones:
                owner[name] = limb.name
        except LimbError as error:
            result.problems[limb.name] = str(error)
            continue
        result.limbs.append(limb)
        result.chains.append(chain)
    return result


def gather(planned: Plan, depsgraph) -> tuple[list[Group], Pose]:
    """Read the pose and the goals of every planned limb at the current frame."""
    obj = planned.obj
    obj_eval = obj.evaluated_get(depsgraph)
    pose = read_pose(obj, obj_eval)
    world = pose.world
    to_armature = np.linalg.inv(world)
    unit = abs(np.linalg.det(world[:3, :3])) ** (1.0 / 3.0)  # world length of one armature unit
    bones = obj.pose.bones
    groups = []
    for size, with_toe in ((2, False), (3, False), (3, True)):
        members = [
            (limb, chain)
            for limb, chain in zip(planned.limbs, planned.chains)
            if chain.size == size and (chain.toe is not None) == with_toe
        ]
        if not members:
            continue
        limbs, chains = [m[0] for m in members], [m[1] for m in members]
        index = np.array([c.indices for c in chains])
        written = np.array([c.written for c in chains])
        modes = [bones[i].rotation_mode for i in written.ravel()]
        local = local_quaternions(pose, written.ravel(), modes).reshape(*written.shape, 4)
        matrices = pose.matrices[index]
        last = matrices[:, -1]
        tip = last[:, :3, 3] + last[:, :3, 1] * np.array([c.tip_length for c in chains])[:, None]
        points = np.concatenate([matrices[:, :, :3, 3], tip[:, None]], axis=1)
        target, end_rotation = tip.copy(), goals.rotation_of(last[:, :3, :3])
        pole, pole_mask = np.zeros((len(limbs), 3)), np.zeros(len(limbs), bool)
        for row, limb in enumerate(limbs):
            if limb.target is not None:
                goal = to_armature @ goals.world_matrix(limb.target, limb.target_bone, depsgraph)
                target[row] = goal[:3, 3]
                if limb.end_rotation == "TARGET":
                    end_rotation[row] = goals.rotation_of(goal[None, :3, :3])[0]
            if limb.pole is not None:
                pole[row] = (to_armature @ goals.world_matrix(limb.pole, limb.pole_bone, depsgraph))[:3, 3]
                pole_mask[row] = True
        batch = ChainBatch(
            matrices=matrices,
            scales=pose.scale[index],
            rotations=local[:, :size],
            points=points,
            target=target,
            end_rotation=end_rotation if size == 3 else None,
            pole=pole,
            pole_mask=pole_mask,
            hinge=np.array([c.hinge for c in chains]),
            use_hinge=np.array([limb.use_hinge for limb in limbs]),
            natural=np.array([limb.swivel == "END_PLANE" for limb in limbs]),
            influence=np.array([limb.influence for limb in limbs]),
            options={
                "mode": np.array([Reach[limb.reach].value for limb in limbs]),
                "softness": np.array([limb.softness for limb in limbs]) / unit,
                "max_stretch": np.array([limb.max_stretch for limb in limbs]),
                "stretch_start": np.array([limb.stretch_start for limb in limbs]),
                # Stored in single precision, 180° reads as slightly more than pi.
                "min_bend": np.minimum([limb.min_bend for limb in limbs], np.pi),
                "max_bend": np.minimum([limb.max_bend for limb in limbs], np.pi),
            },
        )
        if with_toe:  # planting sets the toe's goal; until then it keeps its animated turn
            toes = written[:, -1]
            batch.toe_matrices, batch.toe_scales = pose.matrices[toes], pose.scale[toes]
            batch.toe_rotations, batch.toe_goal = local[:, -1], goals.rotation_of(pose.matrices[toes][:, :3, :3])
        groups.append(Group(size, limbs, chains, batch, modes))
    return groups, pose


def prepare(planned: Plan, depsgraph) -> tuple[list[Group], Pose, dict[int, np.ndarray]]:
    """Gather the current frame and, where limbs are planted, put the ground into their goals.

    Returns the groups to solve, the pose read, and location channels to write ({bone index:
    location}: the pelvis, when planting moves it).
    """
    groups, pose = gather(planned, depsgraph)
    plan = plant.plant_plan(planned.obj, planned.limbs, planned.chains)
    if plan is None:
        return groups, pose, {}
    scene = depsgraph.scene
    ground = Ground(planned.obj.limb_ik.ground, depsgraph)
    inputs = plant.frame_inputs(plan, pose)
    result = plant.solve_planting(plan, [inputs], ground, fps(scene), timeline=False)
    return groups, pose, {plan.pelvis: plant.apply(plan, groups, pose, inputs, result, 0)}


def fps(scene: bpy.types.Scene) -> float:
    return scene.render.fps / scene.render.fps_base


def solve_groups(groups: list[Group]) -> list[ChainResult]:
    """Solve gathered groups; a solver complaint becomes a :class:`LimbError` naming the rig's limbs."""
    results = []
    for group in groups:
        try:
            results.append(solve_chains(group.batch))
        except SolverError as error:
            names = ", ".join(f"'{limb.name}'" for limb in group.limbs)
            raise LimbError(f"Limbs {names} could not be solved: {error}.") from error
    return results


def write(obj: bpy.types.Object, pose: Pose, groups: list[Group], results: list[ChainResult], locations=None) -> None:
    """Write solved rotations (and stretch) of every group, and ``locations``, into the pose channels."""
    indices = np.concatenate([g.bones.ravel() for g in groups])
    modes = [mode for g in groups for mode in g.modes]
    quaternions = np.concatenate([r.rotations.reshape(-1, 4) for r in results])
    y_scale = np.concatenate([r.y_scale.ravel() for r in results])
    write_rotations(obj, pose, indices, modes, quaternions, y_scale if (y_scale != 1.0).any() else None, locations)


def solve_rig(obj: bpy.types.Object, depsgraph, limbs=None, strict: bool = True) -> Report:
    """Solve ``limbs`` (default: all enabled) of ``obj`` at the current frame and write the pose.

    ``strict``: any limb that cannot be solved raises :class:`LimbError` before anything is
    written. Otherwise such limbs are skipped and listed in the report.
    """
    planned = plan(obj, limbs)
    if strict:
        planned.raise_first_problem()
    report = Report(problems=dict(planned.problems))
    if not planned.limbs:
        return report
    groups, pose, locations = prepare(planned, depsgraph)
    results = solve_groups(groups)
    write(obj, pose, groups, results, locations)
    for group, result in zip(groups, results):
        for limb, reached in zip(group.limbs, result.reached):
            report.solved.append(limb.name)
            if not reached:
                report.unreached.append(limb.name)
    return report
