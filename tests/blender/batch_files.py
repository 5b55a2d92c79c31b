# SPDX-License-Identifier: GPL-3.0-or-later
"""Twenty small .blend files for the batch command line: Rigify metarigs, BVH imports and the test leg
(with and without limbs, animated targets, every rotation mode, a rig in a second scene, a
compressed file), plus a file without an armature, a truncated file and a broken limb set-up.

Used by ``test_cli.py`` and ``benchmarks/cli.py``. Needs the extension and Rigify enabled.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import rigs
from mathutils import Vector

FRAMES = (1, 6)  #: every file's scene range: short, so a batch stays quick


def animated_target(rig, limb_name: str, reach: float = 0.15) -> bpy.types.Object:
    """An Empty starting at the limb's tip that rises and swings over the frame range, as its target."""
    limb = rig.limb_ik.limbs[limb_name]
    start = Vector(rigs.world_tip(rig, rigs.tip_bone(limb)))
    target = rigs.empty(f"{rig.name}_{limb_name}_target", start)
    limb.target = target
    for frame in range(FRAMES[0], FRAMES[1] + 1, 2):
        phase = (frame - FRAMES[0]) / (FRAMES[1] - FRAMES[0])
        target.location = start + Vector((0.3 * reach * math.sin(3 * phase), -0.5 * reach * phase, reach * phase))
        target.keyframe_insert("location", frame=frame)
    return target


def human(api, folder, limbs=True, targets=(), mode="", scale=1.0):
    rig = rigs.human_metarig()
    rig.scale = (scale, scale, scale)
    bpy.context.view_layer.update()
    if limbs:
        api.detect_limbs(rig)
    for bone in ("thigh.L", "shin.L", "foot.L") if mode else ():
        rig.pose.bones[bone].rotation_mode = mode
    for name in targets:
        animated_target(rig, name)


def bvh(api, folder, limbs=True, target=False):
    rig = rigs.bvh_rig(folder, frames=FRAMES[1])
    bpy.ops.object.mode_set(mode="OBJECT")
    if limbs:
        api.detect_limbs(rig)
    if target:
        animated_target(rig, rig.limb_ik.limbs[0].name, reach=0.1)


def leg(api, folder, scene="", image=False, **options):
    window = bpy.context.window
    first = window.scene
    if scene:  # the rig lives in a second scene, not the one the file opens in
        window.scene = bpy.data.scenes.new(scene)
        window.scene.frame_start, window.scene.frame_end = FRAMES
    rig = rigs.leg_armature(**options)
    bpy.ops.object.mode_set(mode="OBJECT")
    side = options.get("side", "L")
    api.add_limb(rig, [f"thigh.{side}", f"shin.{side}", f"foot.{side}"])
    animated_target(rig, f"leg.{side}", reach=0.1)
    if image:  # a relative path, which must still find its file from the output folder
        picture = bpy.data.images.new("Skin", 4, 4)
        picture.source, picture.filepath, picture.use_fake_user = "FILE", "//textures/skin.png", True
    window.scene = first


def broken(api, folder):
    """A limb whose shin was renamed after the limb was set up."""
    rig = rigs.leg_armature("Broken")
    bpy.ops.object.mode_set(mode="OBJECT")
    api.add_limb(rig, ["thigh.L", "shin.L", "foot.L"])
    rig.data.bones["shin.L"].name = "shin_renamed.L"


def no_armature(api, folder):
    rigs.empty("Just an empty")


@dataclass(frozen=True)
class Case:
    build: Callable | None  #: None: a truncated copy of leg.blend
    options: dict = field(default_factory=dict)
    bake_error: str = ""  #: regex of the error `bake` reports; empty: the file is fine
    detect_error: str = ""
    compress: bool = False


NO_LIMBS = r"No armature in '{name}\.blend' has limbs; run the detect subcommand first\."
CORRUPT = r"Blender could not open 'corrupt\.blend': .+"
NO_ARMATURE = r"'no_armature\.blend' has no armature\."
CASES = {
    "human_detected": Case(human),
    "human_leg_target": Case(human, {"targets": ("leg.L",)}),
    "human_targets_euler": Case(human, {"targets": ("leg.L", "arm.R"), "mode": "ZYX"}),
    "human_no_limbs": Case(human, {"limbs": False}, NO_LIMBS),
    "human_no_limbs_scaled": Case(human, {"limbs": False, "scale": 2.0}, NO_LIMBS),
    "bvh_detected": Case(bvh),
    "bvh_target": Case(bvh, {"target": True}),
    "bvh_no_limbs": Case(bvh, {"limbs": False}, NO_LIMBS),
    "leg": Case(leg, {"image": True}),
    "leg_rolls": Case(leg, {"rolls": (0.4, -0.7, 1.2)}),
    "leg_unconnected": Case(leg, {"connected": False}),
    "leg_euler": Case(leg, {"modes": ("XYZ", "YXZ", "ZXY")}),
    "leg_axis_angle": Case(leg, {"modes": ("AXIS_ANGLE",) * 3}),
    "leg_straight_rest": Case(leg, {"straight": True}),
    "leg_right": Case(leg, {"side": "R", "name": "RightLeg"}),
    "leg_second_scene": Case(leg, {"scene": "Second", "name": "Elsewhere"}),
    "leg_compressed": Case(leg, compress=True),
    "broken_limb": Case(broken, bake_error=r"Limb 'leg\.L': bone 'shin\.L' does not exist in armature 'Broken'\."),
    "no_armature": Case(no_armature, bake_error=NO_ARMATURE, detect_error=NO_ARMATURE),
    "corrupt": Case(None, bake_error=CORRUPT, detect_error=CORRUPT),
}
assert len(CASES) == 20


def write(folder: Path, api, scratch: Path, names: tuple[str, ...] = tuple(CASES)) -> dict[str, Path]:
    """Write the files of :data:`CASES` (all, or those ``names``) into ``folder`` (``scratch`` takes the
    BVH source); returns their paths by name. Leaves Blender with its default scene."""
    paths = {}
    for name in names:
        case = CASES[name]
        paths[name] = folder / f"{name}.blend"
        if case.build is None:
            continue
        bpy.ops.wm.read_homefile(app_template="")
        case.build(api, scratch, **case.options)
        bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES  # the BVH importer sets its own
        if bpy.context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        bpy.ops.wm.save_as_mainfile(filepath=str(paths[name]), compress=case.compress)
    if "corrupt" in paths:  # half of leg.blend
        whole = paths["leg"].read_bytes()
        paths["corrupt"].write_bytes(whole[: len(whole) // 2])
    bpy.ops.wm.read_homefile(app_template="")
    return paths
