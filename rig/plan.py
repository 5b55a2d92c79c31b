# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan of one armature's solve: which limbs can be solved, their chains, goals and planting, and
how they are laid out for the solvers (:func:`make`), with what it is made from (:func:`signature`).
Everything that reads or solves a rig over one frame or many (live, the bake, sampling, the foot report)
starts from a plan."""

from dataclasses import dataclass, field

import bpy
import numpy as np

from .errors import LimbIKError
from .frames import overrides
from .limbs.chain import Chain, chain_of, check_armature, check_choices
from .planting import legs, source


@dataclass
class Plan:
    """The enabled limbs of one armature that can be solved, and why the others cannot."""

    obj: bpy.types.Object
    limbs: list = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  #: limb name -> sentence
    planting: legs.PlantPlan | None = None  #: the planted legs' set-up, when some are planted
    modes: list[str] = field(default_factory=list)  #: rotation mode of every pose bone
    refs: list[tuple] = field(default_factory=list)  #: every target and pole once, as (object, bone name)
    layouts: list["Layout"] = field(default_factory=list)  #: the chains by size, as :func:`.solve.assemble` reads them
    written: np.ndarray = field(default_factory=lambda: np.zeros(0, int))  #: every layout's written bones, in order
    written_modes: list[str] = field(default_factory=list)  #: the rotation mode of each of them

    @property
    def located(self) -> list[int]:
        """Pose bone indices of the end bones and toes that hang from no bone of their chains: the solve writes
        their location too (:attr:`.limbs.chain.Chain.located`)."""
        return [index for chain in self.chains for index in chain.located]

    def raise_first_problem(self) -> None:
        if self.problems:
            raise LimbIKError(next(iter(self.problems.values())))


@dataclass
class Layout:
    """The planned limbs of one chain size (two or three bones, with or without a toe) and where
    :func:`.solve.assemble` finds their bones, settings and goals: what does not change from frame to frame."""

    size: int
    with_toe: bool
    limbs: list
    chains: list[Chain]
    settings: np.ndarray  #: (n,) the limbs' positions among the armature's limbs
    index: np.ndarray  #: (n, size) pose bone indices of the chains
    written: np.ndarray  #: (n, bones) pose bone indices written: each chain's bones, and its toe when it has one
    modes: list[str]  #: rotation mode of every written bone, row-major
    tip_length: np.ndarray  #: (n, 1)
    hinge: np.ndarray  #: (n, 3)
    aimed: list[int]  #: rows with a target
    aims: list[int]  #: their targets' positions in :attr:`Plan.refs`
    poled: list[int]  #: rows with a pole
    poles: list[int]  #: their poles' positions in :attr:`Plan.refs`
    loose: list[int]  #: rows whose end bone hangs from no bone of the chain (:attr:`.limbs.chain.Chain.loose_end`)
    loose_toes: list[int]  #: rows whose toe hangs from no bone of the chain (:attr:`.limbs.chain.Chain.loose_toe`)


def _layouts(planned: "Plan") -> list[Layout]:
    position = {limb.name: i for i, limb in enumerate(planned.obj.limb_ik.limbs)}
    out = []
    for size, with_toe in ((2, False), (3, False), (3, True)):
        members = [
            (limb, chain)
            for limb, chain in zip(planned.limbs, planned.chains)
            if chain.size == size and (chain.toe is not None) == with_toe
        ]
        if not members:
            continue
        limbs, chains = [m[0] for m in members], [m[1] for m in members]
        written = np.array([c.written for c in chains])
        aimed = [row for row, chain in enumerate(chains) if chain.target]
        poled = [row for row, chain in enumerate(chains) if chain.pole]
        out.append(
            Layout(
                size,
                with_toe,
                limbs,
                chains,
                np.array([position[limb.name] for limb in limbs]),
                np.array([c.indices for c in chains]),
                written,
                [planned.modes[i] for i in written.ravel()],
                np.array([[c.tip_length] for c in chains]),
                np.array([c.hinge for c in chains]),
                aimed,
                [planned.refs.index(chains[r].target) for r in aimed],
                poled,
                [planned.refs.index(chains[r].pole) for r in poled],
                [row for row, chain in enumerate(chains) if chain.loose_end],
                [row for row, chain in enumerate(chains) if chain.loose_toe],
            )
        )
    return out


def make(obj: bpy.types.Object, limbs=None, from_source: bool = False) -> Plan:
    """Check the given limbs (default: the enabled ones) of ``obj``. Raises only for a bad armature.

    Where the rig's keys hold a planting (:mod:`.planting.source`), its planted legs follow those keys: they are
    planted only ``from_source`` (the bake, which plants the kept source again; the foot report)."""
    check_armature(obj)
    result = Plan(obj, modes=[bone.rotation_mode for bone in obj.pose.bones])
    owner: dict[str, str] = {}
    driven = overrides.drivers(obj)
    for limb in limbs if limbs is not None else [item for item in obj.limb_ik.limbs if item.enabled]:
        try:
            check_choices(limb)
            chain = chain_of(obj, limb)
            for name in chain.bones:
                if name in owner:
                    raise LimbIKError(f"Limb '{limb.name}': bone '{name}' already belongs to limb '{owner[name]}'.")
            overridden = overrides.written_over(obj, limb, chain.written, driven)
            if overridden:
                raise LimbIKError(overridden)
            for name in chain.bones:
                owner[name] = limb.name
        except LimbIKError as error:
            result.problems[limb.name] = str(error)
            continue
        result.limbs.append(limb)
        result.chains.append(chain)
    try:
        if from_source or not source.kept(obj):
            result.planting = legs.plant_plan(obj, result.limbs, result.chains)
    except LimbIKError as error:  # no ground, no pelvis…: the planted limbs cannot be solved
        kept = [(limb, chain) for limb, chain in zip(result.limbs, result.chains) if not limb.plant]
        result.problems.update({limb.name: str(error) for limb in result.limbs if limb.plant})
        result.limbs, result.chains = [k[0] for k in kept], [k[1] for k in kept]
    for chain in result.chains:
        result.refs += [goal for goal in (chain.target, chain.pole) if goal and goal not in result.refs]
    result.layouts = _layouts(result)
    if result.layouts:
        result.written = np.concatenate([layout.written.ravel() for layout in result.layouts])
        result.written_modes = [mode for layout in result.layouts for mode in layout.modes]
    return result


def signature(obj: bpy.types.Object) -> tuple:
    """Everything a plan is built from, cheap to compare on every frame: the limbs' set-up, their
    goals and ground, the armature's bones (rest positions, inheritance of rotation and scale, rotation
    locks), its drivers and the constraints of the limbs' bones."""

    def pointer(id_block):
        return id_block.as_pointer() if id_block is not None else 0

    def goal(id_block):
        return (pointer(id_block), pointer(id_block.parent), id_block.parent_bone) if id_block else (0,)

    settings = obj.limb_ik
    limbs = tuple(
        (
            limb.name,
            limb.enabled,
            limb.upper_bone,
            limb.lower_bone,
            limb.end_bone,
            goal(limb.target),
            limb.target_bone,
            limb.target_name,
            goal(limb.pole),
            limb.pole_bone,
            limb.pole_name,
            limb.plant,
            limb.toe_bone,
            limb.plane,
            tuple(limb.plane_normal),
            limb.reach,  # a driver on the scale overrides a stretching limb only
        )
        for limb in settings.limbs
    )
    bones, pose_bones = obj.data.bones, obj.pose.bones
    limb_bones = sorted({n for x in settings.limbs for n in (x.upper_bone, x.lower_bone, x.end_bone, x.toe_bone)})
    constraints = tuple(tuple(c.mute for c in pose_bones[n].constraints) for n in limb_bones if n in pose_bones)
    driven = tuple((driver.data_path, driver.array_index) for driver in overrides.drivers(obj))
    arrays = []
    for collection, name, width, dtype in (
        (bones, "head_local", 3, np.float32),
        (bones, "tail_local", 3, np.float32),
        (bones, "use_inherit_rotation", 1, bool),
        (bones, "inherit_scale", 1, np.int32),
        (pose_bones, "lock_rotation", 3, bool),
        (pose_bones, "lock_rotation_w", 1, bool),
        (pose_bones, "lock_location", 3, bool),
        (bones, "use_connect", 1, bool),
        (bones, "use_local_location", 1, bool),
        (pose_bones, "rotation_mode", 1, np.int32),
    ):
        array = np.empty(len(collection) * width, dtype)
        collection.foreach_get(name, array)
        arrays.append(array.tobytes())
    return (
        limbs,
        pointer(obj.data),
        pointer(settings.ground),
        pointer(settings.authored_ground),
        pointer(settings.planting_source),
        settings.pelvis_bone,
        constraints,
        driven,
        *arrays,
    )
