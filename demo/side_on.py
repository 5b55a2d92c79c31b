# SPDX-License-Identifier: GPL-3.0-or-later
"""A character seen side-on, as a side-scroller shows it: legs that bend forward in planes parallel to the
armature's XZ, feet chasing targets animated off those planes. The README's picture of Plane (and the
plane tests) come from here.

    python demo/side_on.py docs/plane.png     # with the bpy wheel's Python (tools/run.py makes one)

The picture: the legs over a step cycle, solved live without a plane and with Plane = Side, seen from the
front (along X, where the plane is a line) and from the side (the game's camera).
"""

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":  # run as a script: Blender's user data in a temporary folder, before bpy is imported
    sys.path[:0] = [str(ROOT), str(ROOT / "tools")]
    import source_extension

    source_extension.isolate_user_resources()

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from mathutils import Euler, Matrix, Vector  # noqa: E402

FRAMES = range(1, 25)
SIDES = {"L": 0.1, "R": -0.1}  #: each leg's plane: y in the armature's space


def rig(name: str = "Runner", place: Matrix | None = None) -> bpy.types.Object:
    """hips → thigh → shin → foot on each side, facing +X, the legs bent forward at y = ±0.1, the armature
    at ``place`` in the world (default: where it is made); a limb per leg, found by Detect Limbs and held in
    the side plane (Plane = Side). Leaves it in Pose Mode."""
    armature = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, armature)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    bones = armature.edit_bones
    hips = bones.new("hips")
    hips.head, hips.tail = (0.0, 0.0, 1.0), (0.0, 0.0, 1.15)
    for side, y in SIDES.items():
        thigh, shin, foot = (bones.new(f"{part}.{side}") for part in ("thigh", "shin", "foot"))
        thigh.head, thigh.tail, thigh.parent = (0.0, y, 0.95), (0.1, y, 0.5), hips
        shin.head, shin.tail, shin.parent, shin.use_connect = thigh.tail, (0.0, y, 0.08), thigh, True
        foot.head, foot.tail, foot.parent, foot.use_connect = shin.tail, (0.14, y, 0.02), shin, True
    bpy.ops.object.mode_set(mode="OBJECT")
    if place is not None:
        obj.matrix_world = place
    bpy.ops.object.mode_set(mode="POSE")
    bpy.ops.limb_ik.detect_limbs()  # the legs, by name; each in a plane of its own, so Plane stays None
    for limb in obj.limb_ik.limbs:
        limb.plane = "SIDE"
    return obj


def offset(frame: int) -> tuple[float, float, float]:
    """Where each foot's target is at ``frame``, from the foot's tip at rest, in the armature's space: a step
    forward and back along X, lifted as it swings, drifting across the legs' plane (Y) as a target animated
    in 3D does."""
    phase = 2.0 * math.pi * (frame - 1) / len(FRAMES)
    return (0.12 * math.sin(phase), 0.15 * math.sin(2.0 * phase), 0.05 + 0.06 * max(math.sin(phase), 0.0))


def turn(frame: int) -> Euler:
    """The targets' turn at ``frame``, from the foot's at rest: out of the plane in the second half."""
    return Euler((0.3, -0.2, 0.1)) if frame > len(FRAMES) // 2 else Euler((0.0, 0.0, 0.0))


def keyed_targets(obj: bpy.types.Object) -> None:
    """A target Empty per leg, set at the foot's tip and turned like it, keyed at every frame of FRAMES at
    :func:`offset` and :func:`turn`."""
    to_world = np.array(obj.matrix_world)[:3, :3]
    for limb in obj.limb_ik.limbs:
        foot = obj.pose.bones[limb.end_bone]
        start = obj.matrix_world @ foot.matrix @ Matrix.Translation((0.0, foot.length, 0.0))
        start = Matrix.LocRotScale(start.to_translation(), start.to_quaternion(), None)
        target = bpy.data.objects.new(f"{limb.name}_target", None)
        bpy.context.scene.collection.objects.link(target)
        target.matrix_world = start
        limb.target = target  # the foot keeps the turn it has now relative to the target
        for frame in FRAMES:
            shift = Vector(to_world @ np.array(offset(frame)))
            target.matrix_world = Matrix.Translation(shift) @ start @ turn(frame).to_matrix().to_4x4()
            target.keyframe_insert("location", frame=frame)
            target.keyframe_insert("rotation_euler", frame=frame)


def legs(obj: bpy.types.Object, plane: str) -> np.ndarray:
    """(frames, legs, 4, 3) each leg's joints, hip to toe, in the armature's space, played live over FRAMES
    with every limb's Plane set to ``plane``."""
    scene = bpy.context.scene
    for limb in obj.limb_ik.limbs:
        limb.plane = plane
    obj.limb_ik.live = True
    out = []
    for frame in FRAMES:
        scene.frame_set(frame)
        bones = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones
        out.append(
            [
                [tuple(bones[n].head) for n in (limb.upper_bone, limb.lower_bone, limb.end_bone)]
                + [tuple(bones[limb.end_bone].tail)]
                for limb in obj.limb_ik.limbs
            ]
        )
    obj.limb_ik.live = False
    return np.array(out)


def picture(path: Path) -> dict[str, float]:
    """Draw the legs solved without a plane and with Plane = Side into ``path`` (PNG); returns how far each
    way put a knee or a foot off the legs' planes (armature units)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bpy.ops.wm.read_homefile(app_template="")
    runner = rig()
    keyed_targets(runner)
    solved = {"NONE": legs(runner, "NONE"), "SIDE": legs(runner, "SIDE")}
    away = {plane: float(np.abs(points[..., 1] - points[:, :, :1, 1]).max()) for plane, points in solved.items()}
    tips = np.array([runner.data.bones[f"foot.{side}"].tail_local for side in SIDES])
    goals = tips + np.array([offset(frame) for frame in FRAMES])[:, None]

    figure, (front, side) = plt.subplots(1, 2, figsize=(6.4, 4.0), sharey=True)
    style = {
        "NONE": dict(color="tab:red", linestyle="--", label="Plane: None (3D)"),
        "SIDE": dict(color="tab:blue", label="Plane: Side (XZ)"),
    }
    shown = FRAMES[::4]
    for plane, points in solved.items():
        for n, frame in enumerate(shown):
            for leg in range(len(SIDES)):
                joints = points[frame - FRAMES[0], leg]
                label = style[plane]["label"] if n == 0 and leg == 0 else None
                kwargs = {**style[plane], "label": label, "linewidth": 1.2, "alpha": 0.8}
                front.plot(joints[:, 1], joints[:, 2], marker="o", markersize=2.5, **kwargs)
                side.plot(joints[:, 0], joints[:, 2], marker="o", markersize=2.5, **kwargs)
    for axis, (u, v) in ((front, (1, 2)), (side, (0, 2))):
        axis.scatter(goals[:, :, u].ravel(), goals[:, :, v].ravel(), s=8, color="0.55", label="foot targets")
        axis.set_aspect("equal")
        axis.tick_params(labelsize=7)
    for y in SIDES.values():
        front.axvline(y, color="tab:blue", linewidth=0.6, alpha=0.4)
    front.set_title("from the front, the legs' planes edge-on", fontsize=8)
    front.set_xlabel("Y (m)", fontsize=8)
    front.set_ylabel("Z (m)", fontsize=8)
    side.set_title("from the side, as the game shows it", fontsize=8)
    side.set_xlabel("X (m)", fontsize=8)
    handles, labels = side.get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    figure.suptitle("Feet chasing targets that drift off the legs' planes (every 4th frame)", fontsize=9)
    figure.tight_layout(rect=(0.0, 0.06, 1.0, 1.0))
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return away


def main(argv: list[str]) -> int:
    source_extension.enable()
    path = Path(argv[0]) if argv else ROOT / "docs" / "plane.png"
    away = picture(path)
    print(
        f"{path}: {path.stat().st_size / 1024:.0f} KB; knees and feet off the legs' planes: "
        + ", ".join(f"{plane} {1000.0 * distance:.1f} mm" for plane, distance in away.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
