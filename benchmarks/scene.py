# SPDX-License-Identifier: GPL-3.0-or-later
"""The benchmark scene: N legs chasing N animated Empties, driven by Limb IK, by Blender's IK, or by nothing.

One armature holds N/2 characters side by side, each a hip bone with two legs built as the
tests build theirs (``rigs.add_leg``): thigh → shin → foot, bent forward at the knee. Every leg has its own
target Empty, keyed over 250 frames on a stepping path that stays within reach and turns the
foot a little. The same scene is built for every set-up, so the only difference between them
is what drives the legs:

- ``FK``: nothing (the cost of evaluating the scene at all);
- ``LIMB_IK``: one Limb IK limb per leg, target = the Empty (the foot copies its rotation, as
  with a target Create Targets makes), live solving on;
- ``LEGACY`` / ``ITASC``: Blender's IK constraint on each shin (chain of 2), and a Copy Rotation
  on each foot, with that armature IK solver. Blender's IK puts the shin's tail on its target, so
  its target is the ankle: a child Empty of the target, one foot length behind it along the
  foot (Rigify does the same with its foot bones). Every set-up has these ankle Empties.

Import after ``bpy`` is set up (``tools/source_extension.py``), with ``tests/blender`` on the path.
"""

import math
from dataclasses import dataclass

import bpy
import numpy as np
import rigs
from mathutils import Euler, Quaternion, Vector

FRAMES = (1, 250)
KEY_STEP = 5  #: a key every this many frames on each target
SETUPS = ("FK", "LIMB_IK", "LEGACY", "ITASC")
SPACING = 0.6  #: metres between characters
#: With iTaSC's defaults (100 iterations, 5 mm precision) most feet of the 20-leg scene end up to
#: 23 cm off their targets; with these iTaSC reaches them about as closely as the Legacy solver.
ITASC_SETTINGS = {"iterations": 500, "precision": 0.0005}


@dataclass
class Leg:
    thigh: str
    shin: str
    foot: str
    target: bpy.types.Object  #: where the foot's tail goes, turned as the foot should be
    ankle: bpy.types.Object  #: child of ``target`` where the shin's tail goes


@dataclass
class LegScene:
    rig: bpy.types.Object
    legs: list[Leg]
    setup: str

    @property
    def bones(self) -> list[str]:
        return [name for leg in self.legs for name in (leg.thigh, leg.shin, leg.foot)]


def build(legs: int, setup: str, lik=None, frames: tuple[int, int] = FRAMES) -> LegScene:
    """A fresh, empty file holding the scene with ``legs`` legs (even) driven by ``setup``, its targets
    keyed over ``frames`` (first, last), the scene's range.

    ``lik`` (the enabled extension module) is needed for ``LIMB_IK``.
    """
    if legs % 2 or legs < 2:
        raise ValueError(f"legs must be a positive even number, not {legs}")
    if setup not in SETUPS:
        raise ValueError(f"setup must be one of {SETUPS}, not {setup!r}")
    if setup == "LIMB_IK" and lik is None:
        raise ValueError("the LIMB_IK set-up needs the enabled extension module")
    bpy.ops.wm.read_homefile(app_template="", use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = frames
    rig, names = _armature(legs // 2)
    result = LegScene(rig, [Leg(*chain, *_targets(rig, chain, n, frames)) for n, chain in enumerate(names)], setup)
    if setup == "LIMB_IK":
        _limb_ik(lik, result)
    elif setup in ("LEGACY", "ITASC"):
        _blender_ik(result, setup)
    scene.frame_set(frames[0])
    return result


def _armature(characters: int) -> tuple[bpy.types.Object, list[tuple[str, str, str]]]:
    obj, bones = rigs.edit_armature("Crowd")
    chains = []
    for c in range(characters):
        x0 = c * SPACING
        hips = bones.new(f"c{c:03d}_hips")
        hips.head, hips.tail = (x0, 0.0, 1.0), (x0, 0.0, 1.15)
        for side, x in (("L", x0 + 0.1), ("R", x0 - 0.1)):
            names = tuple(f"c{c:03d}_{part}.{side}" for part in ("thigh", "shin", "foot"))
            rigs.add_leg(bones, hips, names, x)
            chains.append(names)
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj, chains


def _targets(rig: bpy.types.Object, chain: tuple[str, str, str], index: int, frames: tuple[int, int]):
    """The keyed target Empty of one leg and its ankle child."""
    foot = rig.data.bones[chain[2]]
    rest = rig.matrix_world @ foot.matrix_local
    tip = rig.matrix_world @ foot.tail_local
    collection = bpy.context.scene.collection
    target = bpy.data.objects.new(f"{chain[2]}_target", None)
    target.empty_display_type, target.empty_display_size = "SPHERE", 0.05
    collection.objects.link(target)
    ankle = bpy.data.objects.new(f"{chain[2]}_ankle", None)
    ankle.empty_display_size = 0.03
    ankle.parent = target
    ankle.location = (0.0, -foot.length, 0.0)  # along the foot, as the target is turned like it
    collection.objects.link(ankle)
    _key_path(target, tip, rest.to_quaternion(), 0.7 * index, frames)
    return target, ankle


def target_pose(tip: Vector, rest_rotation: Quaternion, frame: float, phase: float) -> tuple[Vector, Quaternion]:
    """Where a leg's target is at ``frame``: a step cycle of 60 frames, the foot 15-27 cm above its
    rest (the knee stays bent, the ankle at most 89% of the leg's reach from the hip) and pitched
    and yawed by up to 17° and 9°."""
    angle = 2.0 * math.pi * frame / 60.0 + phase
    offset = Vector((0.05 * math.sin(angle), -0.25 * math.sin(angle), 0.15 + 0.06 * (1.0 + math.cos(angle))))
    turn = Euler((0.3 * math.sin(angle + 0.5), 0.0, 0.15 * math.sin(0.5 * angle)))
    return tip + offset, rest_rotation @ turn.to_quaternion()


def _key_path(target: bpy.types.Object, tip: Vector, rest_rotation: Quaternion, phase: float, frames) -> None:
    previous = None
    for frame in range(frames[0], frames[1] + 1, KEY_STEP):
        location, rotation = target_pose(tip, rest_rotation, frame, phase)
        euler = rotation.to_euler("XYZ", previous) if previous is not None else rotation.to_euler("XYZ")
        target.location, target.rotation_euler = location, euler
        target.keyframe_insert("location", frame=frame)
        target.keyframe_insert("rotation_euler", frame=frame)
        previous = euler


def _limb_ik(lik, legs: LegScene) -> None:
    for leg in legs.legs:
        limb = lik.rig.limbs.setup.add_limb(
            legs.rig, [leg.thigh, leg.shin, leg.foot], name=leg.foot.replace("foot", "leg")
        )
        limb.target = leg.target
        limb.target_offset = lik.solvers.constants.IDENTITY  # the foot copies the target's rotation, like Copy Rotation
    legs.rig.limb_ik.live = True


def _blender_ik(legs: LegScene, solver: str) -> None:
    legs.rig.pose.ik_solver = solver
    if solver == "ITASC":
        for name, value in ITASC_SETTINGS.items():
            setattr(legs.rig.pose.ik_param, name, value)
    for leg in legs.legs:
        ik = legs.rig.pose.bones[leg.shin].constraints.new("IK")
        ik.target, ik.chain_count = leg.ankle, 2
        copy = legs.rig.pose.bones[leg.foot].constraints.new("COPY_ROTATION")
        copy.target = leg.target


def set_constraints_enabled(legs: LegScene, enabled: bool) -> None:
    """Mute or unmute the Blender IK set-up's constraints (to look at baked keys on their own)."""
    for name in legs.bones:
        for constraint in legs.rig.pose.bones[name].constraints:
            constraint.mute = not enabled


def tip_positions(legs: LegScene) -> np.ndarray:
    """(N, 3) world positions of the feet's tails, in the scene as evaluated now."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    rig = legs.rig.evaluated_get(depsgraph)
    world = np.array(rig.matrix_world)
    return np.array([world[:3, :3] @ np.array(rig.pose.bones[leg.foot].tail) + world[:3, 3] for leg in legs.legs])


def goal_errors(legs: LegScene) -> tuple[float, float]:
    """Largest world distance (m) from a foot's tail to its target, and largest angle (degrees)
    between a foot's world rotation and its target's, in the scene as evaluated now."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    rig = legs.rig.evaluated_get(depsgraph)
    world = np.array(rig.matrix_world)
    tips = tip_positions(legs)
    distance, angle = 0.0, 0.0
    for leg, tip in zip(legs.legs, tips):
        foot = world[:3, :3] @ np.array(rig.pose.bones[leg.foot].matrix)[:3, :3]
        goal = np.array(leg.target.evaluated_get(depsgraph).matrix_world)
        distance = max(distance, float(np.linalg.norm(tip - goal[:3, 3])))
        turn = _unit_columns(foot).T @ _unit_columns(goal[:3, :3])
        angle = max(angle, math.degrees(math.acos(max(-1.0, min(1.0, (np.trace(turn) - 1.0) / 2.0)))))
    return distance, angle


def _unit_columns(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=0)


def check_frames(count: int = 6, frames: tuple[int, int] = FRAMES) -> list[int]:
    """A few frames spread over the range, for accuracy checks."""
    return [int(round(f)) for f in np.linspace(frames[0], frames[1], count)]
