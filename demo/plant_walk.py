# SPDX-License-Identifier: GPL-3.0-or-later
"""The demo: a real walk (motion capture, bundled), animated on flat ground, planted on a 15° ramp
and a 20 cm step, and baked.

    python3 tools/run.py demo            # writes out/demo.blend, demo.png, footprints.png and filmstrip.jpg

Everything comes with Blender or this repository: the DeepMimic walk in ``demo/clips/`` (with its
licence), the course of ``takes/grounds.py``. Limb IK finds the legs, plants them on the course
and bakes the result. Its foot report is printed before and after (one definition of each
figure, stated in the README), the plot shows each foot's ball against the surface under it, and
the pelvis, over time, the footprints picture (:mod:`demo.footprints`, Workbench) shows the viewport
overlay's footprints and feet's paths on the course, and the filmstrip (:mod:`demo.filmstrip`, Cycles
on the CPU) shows a simple body at a few contact frames, as animated and as planted. ``--no-render``
skips the filmstrip.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]
import source_extension  # noqa: E402

source_extension.isolate_user_resources()

import bpy  # noqa: E402, I001  (bpy first)
import numpy as np  # noqa: E402
from mathutils import Vector  # noqa: E402

from demo import filmstrip, footprints  # noqa: E402
from takes import clips  # noqa: E402

CLIP = "walk"


def track(rig: bpy.types.Object, frames: range) -> dict[str, np.ndarray]:
    """Per frame, each foot's ball (its tip: the walk's feet have no toe bone) and the pelvis, and the
    height of the surface under each, by Blender's ray cast."""
    scene, legs = bpy.context.scene, clips.CLIPS[CLIP].legs
    balls, pelvis = [], []
    for frame in frames:
        scene.frame_set(frame)
        world = rig.matrix_world
        balls.append([world @ rig.pose.bones[leg[2]].tail for leg in legs.values()])
        pelvis.append(world @ rig.pose.bones[clips.CLIPS[CLIP].pelvis].head)
    balls, pelvis = np.array(balls), np.array(pelvis)
    return {"balls": balls, "pelvis": pelvis, "under_balls": _under(balls), "under_pelvis": _under(pelvis)}


def _under(points: np.ndarray) -> np.ndarray:
    scene, depsgraph = bpy.context.scene, bpy.context.evaluated_depsgraph_get()
    heights = np.zeros(points.shape[:-1])
    for index in np.ndindex(points.shape[:-1]):
        x, y, _ = points[index]
        hit, location, *_ = scene.ray_cast(depsgraph, Vector((x, y, 10.0)), Vector((0.0, 0.0, -1.0)))
        heights[index] = location.z if hit else np.nan
    return heights


def plot(path: Path, before: dict, after: dict, frames: range, fps: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    time = np.array(frames) / fps
    figure, axes = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    for n, (axis, side) in enumerate(zip(axes, ("left", "right"))):
        axis.fill_between(
            time,
            after["under_balls"][:, n],
            np.nanmin(after["under_balls"]) - 0.05,
            color="0.85",
            label="surface under the foot",
        )
        axis.plot(time, before["balls"][:, n, 2], "--", color="tab:red", label="animated foot tip (flat floor)")
        axis.plot(time, after["balls"][:, n, 2], color="tab:blue", label="planted foot tip")
        axis.set_ylabel(f"{side} foot (m)")
        axis.legend(loc="upper left", fontsize=8)
    axes[2].plot(
        time, before["pelvis"][:, 2] - clips.CLIPS[CLIP].floor, "--", color="tab:red", label="animated, above the floor"
    )
    axes[2].plot(
        time,
        after["pelvis"][:, 2] - after["under_pelvis"],
        color="tab:blue",
        label="planted, above the ground under it",
    )
    axes[2].set_ylabel("pelvis height (m)")
    axes[2].set_xlabel("time (s)")
    axes[2].legend(loc="lower left", fontsize=8)
    figure.suptitle("Limb IK: a captured walk animated on flat ground, planted on a 15° ramp and a 20 cm step")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=str(ROOT / "out"), help="folder for demo.blend, demo.png, footprints.png and filmstrip.jpg"
    )
    parser.add_argument("--no-render", action="store_true", help="skip the filmstrip (rendered with Cycles)")
    parser.add_argument("--samples", type=int, default=16, help="Cycles samples per pixel for the filmstrip")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    lik = source_extension.enable()
    rig, frames, ground = clips.stage(CLIP, "course")
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    found = lik.api.detect_limbs(rig)
    print(
        f"Blender {bpy.app.version_string}; {len(frames)} frames at {fps:.0f} fps; limbs found: "
        + ", ".join(f"{name} (by {how})" for name, how in found.items())
    )
    for limb in rig.limb_ik.limbs:
        limb.plant = "leg" in limb.name
    rig.limb_ik.ground = ground
    before = track(rig, frames)
    print("\nAs animated, on the course:\n" + "\n".join(lik.api.foot_report(rig)["lines"]))
    feet = [leg[2] for leg in clips.CLIPS[CLIP].legs.values()]
    shown = filmstrip.contact_frames(rig, feet, frames, floor=clips.CLIPS[CLIP].floor)
    animated = filmstrip.snapshot(rig, shown)

    baked = lik.api.plant(rig)
    print(f"\nPlanted and baked in {baked.seconds:.2f} s: {baked.keys} keys over {baked.frames} frames")
    said = dict.fromkeys([*baked.problems.values(), *baked.warnings.values()])
    print("\n".join(said) or "The bake's own check of its keys names no leg beyond the planting limits.")
    print("\n".join(lik.api.foot_report(rig)["lines"]))
    after = track(rig, frames)
    planted = filmstrip.snapshot(rig, shown)

    blend, picture = out / "demo.blend", out / "demo.png"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    plot(picture, before, after, frames, fps)
    prints = footprints.render(lik, out / "footprints.png", rig, ground)
    print(f"\nWrote {blend}, {picture} and {prints} (the viewport overlay's footprints, Workbench)")
    if not args.no_render:
        rows = [("As animated, on a flat floor", animated), ("Planted by Limb IK", planted)]
        strip = filmstrip.render(out / "filmstrip.jpg", rows, ground, samples=args.samples)
        print(
            f"Rendered {strip.path} (frames {', '.join(map(str, shown))}; {strip.size[0]}×{strip.size[1]}, "
            f"Cycles on the CPU, {args.samples} samples) in {strip.seconds:.1f} s: {strip.bytes / 1024:.0f} KB"
        )
    return 0


if __name__ == "__main__":
    source_extension.leave(main(sys.argv[1:]))
