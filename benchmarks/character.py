# SPDX-License-Identifier: GPL-3.0-or-later
"""The benchmark's real character: the glTF CesiumMan walking, driven by Limb IK, by Blender's IK, or by nothing.

The Khronos sample (``../shared/mocap/khronos-cesiumman``): a 3,273-vertex skinned mesh on 19 bones, its
one 48-frame walk made the rig's action (the importer's NLA track removed, its bone-shape ``Icosphere``
deleted). Detect Limbs finds its four limbs (two legs with toes, two arms, three bones each) and gives
each a target Empty at its tip, as a new user would get them; the same scene is built for every set-up:

- ``CHARACTER``: nothing drives the limbs (the character alone: its action, rig and mesh);
- ``BLENDER_IK``: Blender's IK constraint (Legacy solver) on each limb's end bone, chain of 3, following its
  target's rotation: the same chains reaching the same targets, turned the same way;
- ``BLENDER_IK_2``: Blender's IK as on the bare chains of ``scene.py``: the IK constraint (chain of 2) on each
  middle bone, its target an Empty at the end bone's head parented to the limb's target, and Copy Rotation of
  the target on the end bone. It does not reach: Blender's IK puts the middle bone's tail on its target, and the
  glTF importer makes tails up (13 to 39 cm from the end bones' heads here). Timed for comparison only;
- ``LIMB_IK``: Limb IK, live;
- ``PLANTED``: Limb IK, live, the arms on their targets and the legs' animated feet planted on a 10° ramp
  (the legs' targets are unset, their Empties stay in the scene).

Import after ``bpy`` is set up (``tools/source_extension.py``), with the repository's root on the path.
"""

import math
from dataclasses import dataclass

import bpy
import numpy as np

from takes import clips, grounds

FILE = clips.SHARED / "mocap" / "khronos-cesiumman" / "CesiumMan.glb"
FRAMES = (1, 48)
SETUPS = ("CHARACTER", "BLENDER_IK", "BLENDER_IK_2", "LIMB_IK", "PLANTED")
PULL = 0.1  #: each target is moved this fraction of the way from its limb's tip to its root


@dataclass
class Limb:
    name: str
    bones: tuple[str, ...]  #: upper, lower and end bone
    target: bpy.types.Object  #: where the end bone's tail goes, turned as the end bone should be


@dataclass
class Character:
    rig: bpy.types.Object
    mesh: bpy.types.Object
    limbs: list[Limb]
    setup: str

    @property
    def reaching(self) -> list[Limb]:
        """The limbs that should be on their targets in this set-up."""
        if self.setup == "CHARACTER":
            return []
        return [limb for limb in self.limbs if not (self.setup == "PLANTED" and limb.name.startswith("leg"))]


def found() -> bool:
    return FILE.exists()


def build(setup: str, lik) -> Character:
    """A fresh file holding the character driven by ``setup``; ``lik`` is the enabled extension's module."""
    if setup not in SETUPS:
        raise ValueError(f"setup must be one of {SETUPS}, not {setup!r}")
    bpy.ops.wm.read_homefile(app_template="", use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(FILE))
    scene = bpy.context.scene
    objects = scene.objects
    bpy.data.objects.remove(objects["Icosphere"])  # the importer's bone shape: not part of the character
    rig = next(obj for obj in objects if obj.type == "ARMATURE")
    mesh = next(obj for obj in objects if obj.type == "MESH")
    data = rig.animation_data
    action = next(strip.action for track in data.nla_tracks for strip in track.strips)
    for track in list(data.nla_tracks):
        data.nla_tracks.remove(track)
    data.action, data.action_slot = action, action.slots[0]
    scene.frame_start, scene.frame_end = FRAMES
    scene.frame_set(FRAMES[0])
    lik.api.detect_limbs(rig, with_targets=True)
    for limb in rig.limb_ik.limbs:  # bent a little, so the IK has work to do and every target stays in reach
        tip, root = limb.target.matrix_world.translation, rig.matrix_world @ rig.pose.bones[limb.upper_bone].head
        limb.target.location = tip.lerp(root, PULL)
    character = Character(
        rig,
        mesh,
        [Limb(limb.name, (limb.upper_bone, limb.lower_bone, limb.end_bone), limb.target) for limb in rig.limb_ik.limbs],
        setup,
    )
    if setup == "BLENDER_IK":
        _blender_ik(character)
    elif setup == "BLENDER_IK_2":
        _blender_ik_2(character)
    elif setup == "PLANTED":
        _planted(character)
    if setup in ("LIMB_IK", "PLANTED"):
        rig.limb_ik.live = True
    scene.frame_set(FRAMES[0])
    return character


def _blender_ik(character: Character) -> None:
    rig = character.rig
    rig.pose.ik_solver = "LEGACY"
    for limb in character.limbs:
        ik = rig.pose.bones[limb.bones[2]].constraints.new("IK")
        ik.target, ik.chain_count, ik.use_rotation = limb.target, 3, True


def _blender_ik_2(character: Character) -> None:
    rig = character.rig
    rig.pose.ik_solver = "LEGACY"
    for limb in character.limbs:
        _, lower, end = limb.bones
        ankle = bpy.data.objects.new(f"{limb.name}_ankle", None)
        for collection in limb.target.users_collection:
            collection.objects.link(ankle)
        ankle.parent = limb.target
        ankle.location = limb.target.matrix_world.inverted() @ (rig.matrix_world @ rig.pose.bones[end].head)
        ik = rig.pose.bones[lower].constraints.new("IK")
        ik.target, ik.chain_count = ankle, 2
        rig.pose.bones[end].constraints.new("COPY_ROTATION").target = limb.target


def _planted(character: Character) -> None:
    """The legs planted on a 10° ramp laid under where the feet go over the walk."""
    rig, scene = character.rig, bpy.context.scene
    feet = [limb.bones[2] for limb in character.limbs if limb.name.startswith("leg")]
    heads = []
    for frame in range(FRAMES[0], FRAMES[1] + 1):
        scene.frame_set(frame)
        heads.append([rig.matrix_world @ rig.pose.bones[foot].head for foot in feet])
    heads = np.array(heads, dtype=np.float64)
    collection = bpy.data.collections.new("Ground")
    scene.collection.children.link(collection)
    grounds.build("slope", heads.mean(axis=1), heads.reshape(-1, 3), collection, rig.limb_ik.floor_height)
    rig.limb_ik.ground = collection
    for limb in rig.limb_ik.limbs:
        if limb.name.startswith("leg"):
            limb.target, limb.plant = None, True


def tip_errors(character: Character) -> tuple[float, float]:
    """Largest world distance (m) from a reaching limb's tip (its end bone's tail) to its target, and largest
    angle (degrees) between that bone's world rotation and its target's, in the scene as evaluated now."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    rig = character.rig.evaluated_get(depsgraph)
    world = np.array(rig.matrix_world)
    distance, angle = 0.0, 0.0
    for limb in character.reaching:
        bone = rig.pose.bones[limb.bones[2]]
        tip = world @ np.append(np.array(bone.tail), 1.0)
        goal = np.array(limb.target.evaluated_get(depsgraph).matrix_world)
        distance = max(distance, float(np.linalg.norm(tip[:3] - goal[:3, 3])))
        turn = _unit_columns(world[:3, :3] @ np.array(bone.matrix)[:3, :3]).T @ _unit_columns(goal[:3, :3])
        angle = max(angle, math.degrees(math.acos(max(-1.0, min(1.0, (np.trace(turn) - 1.0) / 2.0)))))
    return distance, angle


def _unit_columns(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=0)


def check_frames(count: int = 6) -> list[int]:
    return [int(round(f)) for f in np.linspace(FRAMES[0], FRAMES[1], count)]
