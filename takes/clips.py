# SPDX-License-Identifier: GPL-3.0-or-later
"""Real motion to plant: motion capture and keyed animals that nobody on this project made.

The demo's walk is bundled in ``demo/clips/`` with its licence; the others are read from the
shared folder (:func:`_shared`), which tests and benchmarks may use (the Bandai Namco clips are
CC BY-NC: read from there for tests and evaluation, never bundled). Each clip names its legs as
(thigh, shin, foot, toe or None), the bones the planting figures are measured on: written here by
hand, not found by the detection being tested. The shared folder's README has two sets: the first
(BVH mocap and keyed animals) and the second (more mocap, and skinned glTF characters, whose soles
are measured on their meshes). The second set's uneven-terrain walks (CMU 03_02 and its iClone
retarget 003_02) are not here: their authored ground is not flat.
"""

import os
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

import bpy
import numpy as np
from bpy_extras import anim_utils
from mathutils import Vector

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "demo" / "clips"


def _shared() -> Path:
    """The shared folder: ``$LIMB_IK_SHARED``, else beside the repository, else beside the working copy this
    one was cloned from (a fresh clone made elsewhere, as CI makes one)."""
    if "LIMB_IK_SHARED" in os.environ:
        return Path(os.environ["LIMB_IK_SHARED"])
    beside = ROOT.parent / "shared"
    if beside.is_dir():
        return beside
    try:
        origin = subprocess.run(
            ["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:  # no git
        return beside
    cloned_from = Path(origin).parent / "shared" if origin and Path(origin).is_dir() else None
    return cloned_from if cloned_from is not None and cloned_from.is_dir() else beside


SHARED = _shared()


def _pair(pattern: str, sides=("left", "right"), letters="LR") -> dict:
    return {letter: tuple(p.format(side=side) if p else None for p in pattern) for side, letter in zip(sides, letters)}


_DEEPMIMIC = _pair(("{side}_hip", "{side}_knee", "{side}_ankle", None))
_WOLF = {
    **{f"front.{s}": (f"FrontLeg1_{s}", f"FrontLeg2_{s}", f"FrontLeg3_{s}", f"FrontToe_{s}") for s in "LR"},
    **{f"hind.{s}": (f"BackLeg1_{s}", f"BackLeg2_{s}", f"BackLeg3_{s}", f"BackToe_{s}") for s in "LR"},
}
_HORSE = {
    **{f"front.{s}": (f"{c}_arm", f"{c}_forearm", f"{c}_hand", f"{c}_hoof") for s, c in (("L", "l"), ("R", "r"))},
    **{f"hind.{s}": (f"{c}_leg", f"{c}_shin", f"{c}_foot", f"{c}_hoof_back") for s, c in (("L", "l"), ("R", "r"))},
}


@dataclass(frozen=True)
class Clip:
    file: str  #: under the mocap folder (or bundled; or a path of its own, as the tests' data)
    scale: float  #: the file's units to metres (a glTF file: its armature is scaled by it)
    legs: dict[str, tuple]  #: leg -> (thigh, shin, foot, toe or None) bone names
    pelvis: str  #: the bone that carries the body
    kind: str = "human"  #: or "quadruped"
    floor: float = 0.0  #: the authored floor's height, metres
    in_place: bool = False  #: a cycle that does not travel: standing feet slide at walking speed
    part: str = "first"  #: which set of the shared folder's README: "first" or "second"
    start: int | None = None  #: the first frame to plant (default: the action's): skips a prepended T-pose
    action: str = ""  #: glTF: the action to play (the importer activates another)

    @property
    def skinned(self) -> bool:
        """A glTF character: its soles are on its skinned mesh, not its bones."""
        return self.file.endswith(".glb")


CLIPS = {
    "boxing": Clip(
        "assimp-testmodels/Boxing_Toes.bvh",
        0.01,
        _pair(("{side}Hip", "{side}Knee", "{side}Ankle", "{side}Toes"), ("Left", "Right")),
        "Hips",
    ),
    "walk": Clip("pybullet-deepmimic/dm_humanoid3d_walk_x4.bvh", 1.0, _DEEPMIMIC, "root"),
    "run": Clip("pybullet-deepmimic/dm_humanoid3d_run_x4.bvh", 1.0, _DEEPMIMIC, "root"),
    "jump": Clip("pybullet-deepmimic/dm_humanoid3d_jump.bvh", 1.0, _DEEPMIMIC, "root"),
    "turn_left": Clip("pybullet-deepmimic/dm_walker_turn_left0.bvh", 1.0, _DEEPMIMIC, "root"),
    "turn_right": Clip("pybullet-deepmimic/dm_walker_turn_right0.bvh", 1.0, _DEEPMIMIC, "root"),
    "horse_walk": Clip(
        "0ad-data/0ad_horse_walk.bvh",
        0.5,
        _HORSE,
        "root",
        "quadruped",
        in_place=True,
    ),
    "horse_trot": Clip(
        "0ad-data/0ad_horse_trot.bvh",
        0.5,
        _HORSE,
        "root",
        "quadruped",
        in_place=True,
    ),
    # The converter invented the elephant's end sites: its front "soles" rest 7 cm under the
    # model's floor, its hind ones 17 cm above. The authored floor is where the front ones rest.
    "elephant": Clip(
        "0ad-data/0ad_elephant_asian_walk.bvh",
        0.5,
        {
            **{
                f"front.{s}": (f"Elephantidae_Arm_{s}", f"Elephantidae_Forearm_{s}", f"Elephantidae_Hand_{s}", None)
                for s in "LR"
            },
            **{
                f"hind.{s}": (f"Elephantidae_Leg_{s}", f"Elephantidae_Shin_{s}", f"Elephantidae_Foot_{s}", None)
                for s in "LR"
            },
        },
        "Elephantidae_Vertebrae_Lumbar",
        "quadruped",
        floor=-0.073,
        in_place=True,
    ),
    **{
        name: Clip(f"0ad-data/0ad_{take}.bvh", 0.5, _WOLF, "psa_origin", "quadruped", in_place=True)
        for name, take in (("wolf", "wolf_walk"), ("wolf_run", "wolf_run"))
    },
}
_CMU131 = _pair(("{side}Hip", "{side}Knee", "{side}Ankle", "{side}Toe"), ("Left", "Right"))
_ICLONE = _pair(("CC_Base_{side}_Thigh", "CC_Base_{side}_Calf", "CC_Base_{side}_Foot", "CC_Base_{side}_ToeBase"), "LR")
_BANDAI = _pair(("UpperLeg_{side}", "LowerLeg_{side}", "Foot_{side}", "Toes_{side}"), "LR")
#: Quaternius' animals: hooves and paws hang from baked IK bones under the root, outside the leg chains.
_QUATERNIUS = {
    **{f"front.{s}": (f"FrontUpperLeg.{s}", f"FrontLowerLeg.{s}", f"IKFrontLeg.{s}", f"FF.{s}") for s in "LR"},
    **{f"hind.{s}": (f"BackUpperLeg.{s}", f"BackLowerLeg.{s}", f"IKBackLeg.{s}", f"FFB.{s}") for s in "LR"},
}


def _showcase(file: str, legs: dict, kind: str = "human", **actions: str) -> dict[str, Clip]:
    """A Quaternius character of the second set playing each of its ``actions`` (clip name: action), in place."""
    return {
        name: Clip(f"quaternius-showcase/{file}", 1.0, legs, "Body", kind, in_place=True, action=action)
        for name, action in actions.items()
    }


_SECOND = {
    "cmu_131_01": Clip("bvh11-cmu131/131_01.bvh", 0.056444, _CMU131, "Hips"),
    "cmu_131_03": Clip("bvh11-cmu131/131_03.bvh", 0.056444, _CMU131, "Hips"),
    "iclone_run": Clip("iclone-cmu-mocap/002_03.bvh", 0.01, _ICLONE, "CC_Base_Hip"),
    "iclone_brisk_walk": Clip("iclone-cmu-mocap/007_12.bvh", 0.01, _ICLONE, "CC_Base_Hip", floor=-1.027, start=2),
    **{
        f"bandai_{name}": Clip(f"bandai-namco-motiondataset/dataset-{n}_{name}_001.bvh", 0.01, _BANDAI, "Hips")
        for n, name in (
            (1, "dash_active"),
            (1, "walk_giant"),
            (2, "run_youthful"),
            (2, "walk_elderly"),
            (2, "walk_exhausted"),
        )
    },
    "cesium_man": Clip(
        "khronos-cesiumman/CesiumMan.glb",
        1.0,
        _pair(("leg_joint_{side}_1", "leg_joint_{side}_2", "leg_joint_{side}_3", "leg_joint_{side}_5"), "LR", "LR"),
        "Skeleton_torso_joint_1",
        in_place=True,
        action="Anim_0",
    ),
    **_showcase(
        "KnightCharacter.glb",
        _pair(("UpperLeg.{side}", "LowerLeg.{side}", "Foot.{side}", None), "LR"),
        knight="HumanArmature|Walking",
        knight_run="HumanArmature|Run",
    ),
    **_showcase(
        "Leela.glb",
        _pair(("UpperLeg.{side}", "MidLeg.{side}", "LowerLeg.{side}", "Foot.{side}"), "LR"),  # digitigrade
        leela="Walk",
        leela_run="Run",
        leela_walk_tall="Walk_Tall",
        leela_run_tall="Run_Tall",
    ),
    **_showcase(
        "Trex.glb",
        _pair(("BackUpLeg.{side}", "BackLowLeg.{side}", "BackFoot.{side}", None), "LR"),
        trex="Armature|TRex_Walk",
        trex_run="Armature|TRex_Run",
    ),
    **_showcase(
        "Triceratops.glb",
        {
            f"{end}.{s}": (f"{part}UpLeg.{s}", f"{part}LowLeg.{s}", f"{part}Foot.{s}", None)
            for end, part in (("front", "Front"), ("hind", "Back"))
            for s in "LR"
        },
        "quadruped",
        triceratops="Armature|Triceratops_Walk",
        triceratops_run="Armature|Triceratops_Run",
    ),
    **{
        name: clip
        for animal in ("horse", "wolf", "stag")
        for name, clip in _showcase(
            f"{animal.capitalize()}.glb",
            _QUATERNIUS,
            "quadruped",
            **{f"quaternius_{animal}": "AnimalArmature|Walk", f"quaternius_{animal}_gallop": "AnimalArmature|Gallop"},
        ).items()
    },
}
assert not CLIPS.keys() & _SECOND.keys(), "a second-set clip takes a first-set clip's name"
CLIPS.update({name: replace(clip, part="second") for name, clip in _SECOND.items()})
#: The first set's clips, by kind.
HUMANS = [name for name, clip in CLIPS.items() if clip.kind == "human" and clip.part == "first"]
QUADRUPEDS = [name for name, clip in CLIPS.items() if clip.kind == "quadruped" and clip.part == "first"]


def path(clip: Clip) -> Path:
    """Where the clip's file is: bundled with the demo, or in the shared folder."""
    bundled = BUNDLED / Path(clip.file).name
    return bundled if bundled.exists() else SHARED / "mocap" / clip.file


def load(name: str, bone_heuristic: str = "BLENDER") -> tuple[bpy.types.Object, range]:
    """Import the clip ``name`` into the current scene (its frame rate and range become the scene's);
    returns the armature and the clip's frames. ``bone_heuristic``: the glTF importer's option of that name."""
    clip = CLIPS[name]
    if clip.skinned:
        rig = _gltf(clip, bone_heuristic)
    else:
        bpy.ops.import_anim.bvh(
            filepath=str(path(clip)),
            global_scale=clip.scale,
            rotate_mode="NATIVE",
            update_scene_fps=True,
            update_scene_duration=True,
        )
        rig = bpy.context.object
    if clip.start is not None:
        _cut_before(rig, clip.start)
    first, last = (int(round(f)) for f in rig.animation_data.action.frame_range)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = first, last
    return rig, range(first, last + 1)


def reverse(rig: bpy.types.Object, frames: range) -> None:
    """Play the rig's action from the last of ``frames`` to the first: each key goes to the mirrored frame, its
    handles swapped (at whole frames the pose is the mirrored frame's exactly)."""
    total = frames.start + frames[-1]
    for curve in _curves(rig):
        keys = sorted(
            (
                total - k.co.x,
                k.co.y,
                (total - k.handle_right.x, k.handle_right.y),
                (total - k.handle_left.x, k.handle_left.y),
            )
            for k in curve.keyframe_points
        )
        for key, (x, y, left, right) in zip(curve.keyframe_points, keys):
            key.co, key.handle_left, key.handle_right = (x, y), left, right
        curve.update()


def _cut_before(rig: bpy.types.Object, start: int) -> None:
    """Delete the keys before ``start`` (a T-pose the capture prepended), as an animator would before planting."""
    for curve in _curves(rig):
        for key in [k for k in curve.keyframe_points if k.co.x < start - 0.5][::-1]:
            curve.keyframe_points.remove(key, fast=True)
        curve.update()


def _curves(rig: bpy.types.Object):
    """The F-curves of the rig's action, in the slot it plays."""
    data = rig.animation_data
    return anim_utils.action_get_channelbag_for_slot(data.action, data.action_slot).fcurves


def _gltf(clip: Clip, bone_heuristic: str) -> bpy.types.Object:
    """Import a glTF character and play the clip's action: the importer puts every action in a muted NLA
    track and activates another."""
    bpy.ops.import_scene.gltf(filepath=str(path(clip)), bone_heuristic=bone_heuristic)
    rig = next(obj for obj in bpy.context.scene.objects if obj.type == "ARMATURE")
    data = rig.animation_data
    for track in list(data.nla_tracks):
        data.nla_tracks.remove(track)
    data.action = bpy.data.actions[clip.action]
    if hasattr(data, "action_slot"):  # the slot for an object: a file's action may key a mesh's shape keys too
        data.action_slot = next(slot for slot in data.action.slots if slot.target_id_type in {"OBJECT", "UNSPECIFIED"})
    if clip.scale != 1.0:  # as a user scales a character made in centimetres
        top = rig
        while top.parent is not None:
            top = top.parent
        top.scale = [clip.scale * value for value in top.scale]
        bpy.context.view_layer.update()
    bpy.context.view_layer.objects.active = rig
    return rig


def footprint(rig: bpy.types.Object, name: str, frames: range) -> tuple[np.ndarray, np.ndarray, float]:
    """Where the clip goes: the path of its feet's middle (F, 3), every foot position (F * n, 3), in world space,
    and how far beyond its feet a ground must reach: its legs' longest hip-to-ankle distance (a T-rex's foot reaches
    metres beyond its ankle), or further for a skinned mesh reaching further from its nearest foot (a mech's toes)."""
    scene = bpy.context.scene
    meshes = [
        obj
        for obj in scene.objects
        if obj.type == "MESH" and any(m.type == "ARMATURE" and m.object == rig for m in obj.modifiers)
    ]
    feet, reach = [], []
    for frame in frames:
        scene.frame_set(frame)
        bones = rig.pose.bones
        feet.append([rig.matrix_world @ bones[leg[2]].head for leg in CLIPS[name].legs.values()])
        reach += [
            (rig.matrix_world @ bones[leg[0]].head - foot).length
            for leg, foot in zip(CLIPS[name].legs.values(), feet[-1])
        ]
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for obj in meshes:
            evaluated = obj.evaluated_get(depsgraph)
            corners = np.array([evaluated.matrix_world @ Vector(corner) for corner in evaluated.bound_box])
            apart = corners[:, None, :2] - np.array(feet[-1])[None, :, :2]
            reach.append(float(np.linalg.norm(apart, axis=-1).min(axis=1).max()))
    feet = np.array(feet, dtype=np.float64)
    return feet.mean(axis=1), feet.reshape(-1, 3), max(reach)


def stage(
    name: str, ground: str, bone_heuristic: str = "BLENDER", backwards: bool = False
) -> tuple[bpy.types.Object, range, bpy.types.Collection]:
    """A fresh scene holding only the clip ``name`` (``backwards``: played from its last frame to its first, a take
    nobody here made) and a ground of kind ``ground`` (see :mod:`takes.grounds`, laid out the way it then goes) in a
    collection "Ground"; the rig's Authored Floor is the clip's. Returns the rig, its frames and the ground
    collection."""
    from . import grounds

    bpy.ops.wm.read_homefile(app_template="")
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    rig, frames = load(name, bone_heuristic)
    if backwards:
        reverse(rig, frames)
    collection = bpy.data.collections.new("Ground")
    bpy.context.scene.collection.children.link(collection)
    path, feet, leg = footprint(rig, name, frames)
    grounds.build(ground, path, feet, collection, CLIPS[name].floor, leg)
    rig.limb_ik.floor_height = CLIPS[name].floor
    bpy.context.view_layer.objects.active = rig
    return rig, frames, collection
