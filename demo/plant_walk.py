# SPDX-License-Identifier: GPL-3.0-or-later
"""The demo: a walk animated on flat ground, planted on a 15° ramp and a 20 cm step, and baked.

    python3.11 tools/run.py demo            # writes out/demo.blend and out/demo.png

Everything comes with Blender or this repository: Rigify's human metarig walks (keyed by
:mod:`demo.motion`) over :mod:`demo.terrain`; Limb IK finds the legs, plants them on the
terrain and bakes the result. The figures of the foot report are printed before and after, and
the picture plots each foot's sole against the surface under it, and the pelvis, over time.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]
import source_extension  # noqa: E402

source_extension.isolate_user_resources()

import bpy  # noqa: E402, I001  (bpy first: it puts addon_utils on the path)
import addon_utils  # noqa: E402

from demo import motion, terrain  # noqa: E402

FPS = 60  #: motion-capture rate; the walk is 100 frames a cycle (1.67 s, 0.78 m/s)


def build_scene():
    """A fresh scene with the terrain in a 'Ground' collection and a metarig keyed walking over it."""
    bpy.ops.wm.read_homefile(app_template="")
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    scene = bpy.context.scene
    scene.render.fps = FPS
    ground = bpy.data.collections.new("Ground")
    scene.collection.children.link(ground)
    terrain.build_terrain(ground)
    bpy.ops.object.armature_human_metarig_add()
    rig = bpy.context.object
    walk = motion.key_walk(rig, cycles=4, cycle_frames=100)
    scene.frame_start, scene.frame_end = walk.frame_start, walk.frame_end
    return rig, ground


def plot(path: Path, before, after, frames: range) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    time = [f / FPS for f in frames]
    figure, axes = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    for n, (axis, side) in enumerate(zip(axes, ("left", "right"))):
        axis.fill_between(time, after.surface_height[:, n], min(after.surface_height.min(), 0.0) - 0.05,
                          color="0.85", label="surface under the foot")  # fmt: skip
        axis.plot(time, before.sole_height[:, n], "--", color="tab:red", label="animated sole (flat floor)")
        axis.plot(time, after.sole_height[:, n], color="tab:blue", label="planted sole")
        axis.set_ylabel(f"{side} foot height (m)")
        axis.legend(loc="upper left", fontsize=8)
    axes[2].plot(time, before.pelvis_above_floor, "--", color="tab:red", label="animated, above the floor")
    axes[2].plot(time, after.pelvis_above_ground, color="tab:blue", label="planted, above the ground under it")
    axes[2].set_ylabel("pelvis height (m)")
    axes[2].set_xlabel("time (s)")
    axes[2].legend(loc="lower left", fontsize=8)
    figure.suptitle("Limb IK: a walk animated on flat ground, planted on a 15° ramp and a 20 cm step")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "out"), help="folder for demo.blend and demo.png")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    lik = source_extension.enable()
    addon_utils.enable("rigify", default_set=True)
    rig, ground = build_scene()
    legs = lik.api.detect_limbs(rig)
    scene = bpy.context.scene
    print(f"Blender {bpy.app.version_string}; limbs found: {', '.join(legs)}")

    for limb in rig.limb_ik.limbs:
        limb.plant = limb.name.startswith("leg")
    rig.limb_ik.ground = ground
    rig.limb_ik.pelvis_smoothing = 10.0  # frames: a sixth of a second at 60 fps
    before = lik.rig.report.foot_report(rig)
    print("\nAs animated, on the terrain:\n" + before.table())

    baked = lik.api.plant(rig)
    after = lik.rig.report.foot_report(rig, authored=before)
    print(f"\nPlanted and baked in {baked.seconds:.2f} s: {baked.keys} keys over {baked.frames} frames")
    print(after.table())

    blend, picture = out / "demo.blend", out / "demo.png"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    plot(picture, before, after, range(scene.frame_start, scene.frame_end + 1))
    print(f"\nWrote {blend} and {picture}")
    return 0


if __name__ == "__main__":
    source_extension.leave(main(sys.argv[1:]))
