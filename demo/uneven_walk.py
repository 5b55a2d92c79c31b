# SPDX-License-Identifier: GPL-3.0-or-later
"""A walk captured over blocks (CMU 03_02, from ``../shared/mocap``), re-planted on a 20 cm step.

    ~/.cache/limb_ik/venv-blender-5.2/bin/python demo/uneven_walk.py [out/uneven.png]

The take's stances stand on blocks 0.13-0.26 m above its floor; Limb IK reads each stance's block from the
stances themselves (no Authored Ground is given), plants the walk on a step and bakes it. The plot shows each
foot's tip as captured (over the floor it was captured on) and as planted, against the surface under it, by
Blender's ray cast.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, I001  (bpy first)
import numpy as np  # noqa: E402
from mathutils import Vector  # noqa: E402

from takes import clips, grounds  # noqa: E402

WALK = clips.SHARED / "mocap" / "tgriebel-mocap-project" / "03_02.bvh"
FLOOR = -0.03  #: where the take's right foot stands when it is on the floor
FEET = ("lFoot", "rFoot")


def tips(rig: bpy.types.Object, frames: range) -> np.ndarray:
    """(F, 2, 3) each foot bone's tail (the feet have no toe bone) in world space."""
    out = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        out.append([rig.matrix_world @ rig.pose.bones[bone].tail for bone in FEET])
    return np.array(out)


def under(points: np.ndarray) -> np.ndarray:
    """The height of the scene's surface straight under each of the (..., 3) points."""
    scene, depsgraph = bpy.context.scene, bpy.context.evaluated_depsgraph_get()
    heights = np.full(points.shape[:-1], np.nan)
    for index in np.ndindex(points.shape[:-1]):
        x, y, _ = points[index]
        hit, location, *_ = scene.ray_cast(depsgraph, Vector((x, y, 10.0)), Vector((0.0, 0.0, -1.0)))
        if hit:
            heights[index] = location.z
    return heights


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else ROOT / "out" / "uneven.png"
    lik = source_extension.enable()
    bpy.ops.wm.read_homefile(app_template="")
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    bpy.ops.import_anim.bvh(
        filepath=str(WALK), global_scale=0.01, rotate_mode="NATIVE", update_scene_fps=True, update_scene_duration=True
    )
    rig, scene = bpy.context.object, bpy.context.scene
    frames = range(scene.frame_start, scene.frame_end + 1)
    rig.limb_ik.floor_height = FLOOR
    before = tips(rig, frames)
    ground = bpy.data.collections.new("Ground")
    scene.collection.children.link(ground)
    grounds.build("step", before.mean(axis=1), before.reshape(-1, 3), ground, FLOOR)
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    after = tips(rig, frames)
    surface = under(after)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    time = (np.array(frames) - frames[0]) / (scene.render.fps / scene.render.fps_base)
    figure, axes = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for n, (axis, side) in enumerate(zip(axes, ("left", "right"))):
        axis.fill_between(time, surface[:, n], FLOOR - 0.05, color="0.85", label="the step under the planted foot")
        axis.axhline(FLOOR, color="0.5", linewidth=0.8, linestyle=":", label="the floor the take was captured on")
        axis.plot(time, before[:, n, 2], "--", color="tab:red", label="captured foot tip (stances on blocks)")
        axis.plot(time, after[:, n, 2], color="tab:blue", label="planted foot tip")
        axis.set_ylabel(f"{side} foot (m)")
        axis.legend(loc="upper left", fontsize=8)
    axes[1].set_xlabel("time (s)")
    figure.suptitle("Limb IK: CMU 03_02, captured over blocks, re-planted on a 20 cm step")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
