# SPDX-License-Identifier: GPL-3.0-or-later
"""Real motion to plant: motion capture and keyed animals that nobody on this project made.

The demo's walk is bundled in ``demo/clips/`` with its licence; the others are read from the
shared folder (:func:`_shared`), which tests and benchmarks may use. Each clip names its legs as
(thigh, shin, foot, toe or None), the bones the planting figures are measured on: written here by
hand, not found by the detection being tested.
"""

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np

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
_HORSE = {
    **{f"front.{s}": (f"{c}_arm", f"{c}_forearm", f"{c}_hand", f"{c}_hoof") for s, c in (("L", "l"), ("R", "r"))},
    **{f"hind.{s}": (f"{c}_leg", f"{c}_shin", f"{c}_foot", f"{c}_hoof_back") for s, c in (("L", "l"), ("R", "r"))},
}


@dataclass(frozen=True)
class Clip:
    file: str  #: under the mocap folder (or bundled)
    scale: float  #: BVH units to metres
    legs: dict[str, tuple]  #: leg -> (thigh, shin, foot, toe or None) bone names
    pelvis: str  #: the bone that carries the body
    kind: str = "human"  #: or "quadruped"
    floor: float = 0.0  #: the authored floor's height, metres
    in_place: bool = False  #: a cycle that does not travel: standing feet slide at walking speed


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
    "wolf": Clip(
        "0ad-data/0ad_wolf_walk.bvh",
        0.5,
        {
            **{f"front.{s}": (f"FrontLeg1_{s}", f"FrontLeg2_{s}", f"FrontLeg3_{s}", f"FrontToe_{s}") for s in "LR"},
            **{f"hind.{s}": (f"BackLeg1_{s}", f"BackLeg2_{s}", f"BackLeg3_{s}", f"BackToe_{s}") for s in "LR"},
        },
        "psa_origin",
        "quadruped",
        in_place=True,
    ),
}
HUMANS = [name for name, clip in CLIPS.items() if clip.kind == "human"]
QUADRUPEDS = [name for name, clip in CLIPS.items() if clip.kind == "quadruped"]


def path(clip: Clip) -> Path:
    """Where the clip's file is: bundled with the demo, or in the shared folder."""
    bundled = BUNDLED / Path(clip.file).name
    return bundled if bundled.exists() else SHARED / "mocap" / clip.file


def load(name: str) -> tuple[bpy.types.Object, range]:
    """Import the clip ``name`` into the current scene (its frame rate and range become the scene's);
    returns the armature and the clip's frames."""
    clip = CLIPS[name]
    bpy.ops.import_anim.bvh(
        filepath=str(path(clip)),
        global_scale=clip.scale,
        rotate_mode="NATIVE",
        update_scene_fps=True,
        update_scene_duration=True,
    )
    rig = bpy.context.object
    first, last = (int(round(f)) for f in rig.animation_data.action.frame_range)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = first, last
    return rig, range(first, last + 1)


def footprint(rig: bpy.types.Object, name: str, frames: range) -> tuple[np.ndarray, np.ndarray]:
    """Where the clip goes: the path of its feet's middle (F, 3), and every foot position (F * n, 3), in world space."""
    scene = bpy.context.scene
    feet = []
    for frame in frames:
        scene.frame_set(frame)
        feet.append([rig.matrix_world @ rig.pose.bones[leg[2]].head for leg in CLIPS[name].legs.values()])
    feet = np.array(feet, dtype=np.float64)
    return feet.mean(axis=1), feet.reshape(-1, 3)


def stage(name: str, ground: str) -> tuple[bpy.types.Object, range, bpy.types.Collection]:
    """A fresh scene holding only the clip ``name`` and a ground of kind ``ground`` (see
    :mod:`takes.grounds`) in a collection "Ground"; the rig's Authored Floor is the clip's.
    Returns the rig, its frames and the ground collection."""
    from . import grounds

    bpy.ops.wm.read_homefile(app_template="")
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    rig, frames = load(name)
    collection = bpy.data.collections.new("Ground")
    bpy.context.scene.collection.children.link(collection)
    grounds.build(ground, *footprint(rig, name, frames), collection, CLIPS[name].floor)
    rig.limb_ik.floor_height = CLIPS[name].floor
    bpy.context.view_layer.objects.active = rig
    return rig, frames, collection
