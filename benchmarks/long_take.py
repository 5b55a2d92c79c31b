# SPDX-License-Identifier: GPL-3.0-or-later
"""Long takes and big grounds: what an animator waits for.

    ~/.cache/limb_ik/venv-blender-5.2/bin/python benchmarks/long_take.py [--frames 20000] [--faces 1000000]

The DeepMimic walk (bundled in ``demo/clips``), its F-curves cycled (the root's with an offset, so it
walks on) into a take of ``--frames`` frames on a 10° slope, both legs planted:

- Live switched on: the analysis of the whole take, before the first live frame shows;
- a live frame after it;
- ``api.plant`` over the whole take (analysis, solve and keys), and how much the process grew (peak
  resident memory, from the operating system);
- a ground of about ``--faces`` faces (a subdivided grid): Blender's own first evaluation of it once added
  (timed apart: it happens whether Limb IK is used or not), the first planted frame, which builds what the
  ray casts use, and the first after the ground moved.
"""

import argparse
import math
import resource
import sys
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCHMARKS.parent), str(BENCHMARKS.parent / "tools")]

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, I001  (bpy first: it puts addon_utils on the path)
import report  # noqa: E402
from mathutils import Matrix, Vector  # noqa: E402

from takes import clips  # noqa: E402

GOALS = {"live": 2.0, "plant": 5.0, "memory": 100.0, "ground": 1.0}  #: issue 24: seconds, MB, seconds


def long_walk(lik, frames: int):
    """The walk cycled to ``frames`` frames on a 10° slope long enough for it, legs detected and planted
    (not yet live)."""
    rig, _, ground = clips.stage("walk", "flat")
    for curve in lik.rig.keys.actions.fcurves(rig):
        cycles = curve.modifiers.new("CYCLES")
        if curve.data_path.endswith(".location"):
            cycles.mode_before = cycles.mode_after = "REPEAT_OFFSET"
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    start, end = (clips.footprint(rig, "walk", range(f, f + 1))[0].mean(axis=0) for f in (1, 100))
    along = Vector(end - start).to_2d().normalized()
    plane = ground.objects[0]
    plane.scale = (2.0 * frames, 2.0 * frames, 1.0)  # a metre a frame is faster than any walk
    plane.rotation_euler = (0.0, 0.0, 0.0)
    plane.rotation_euler.rotate(Matrix.Rotation(math.radians(10.0), 3, Vector((-along.y, along.x, 0.0))))
    scene.frame_set(1)
    lik.api.detect_limbs(rig)
    rig.limb_ik.ground = ground
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.enabled = limb.name.startswith("leg")
    return rig, ground


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def take_rows(lik, frames: int) -> list[list[str]]:
    rig, ground = long_walk(lik, frames)
    scene = bpy.context.scene
    began = time.perf_counter()
    rig.limb_ik.live = True
    live = time.perf_counter() - began
    began = time.perf_counter()
    for frame in range(100, 200):
        scene.frame_set(frame)
    per_frame = (time.perf_counter() - began) / 100
    rig.limb_ik.live = False
    before = peak_mb()
    began = time.perf_counter()
    lik.api.plant(rig, ground)
    planted = time.perf_counter() - began
    grown = peak_mb() - before
    return [
        [f"Live switched on ({frames} frames)", f"{live:.2f} s", f"≤ {GOALS['live']:.0f} s", _met(live, "live")],
        ["a live frame after it", f"{1e3 * per_frame:.2f} ms", "", ""],
        [f"plant and bake ({frames} frames)", f"{planted:.2f} s", f"≤ {GOALS['plant']:.0f} s", _met(planted, "plant")],
        ["peak memory grown by it", f"{grown:.0f} MB", f"≤ {GOALS['memory']:.0f} MB", _met(grown, "memory")],
    ]


def ground_rows(lik, faces: int) -> list[list[str]]:
    rig, ground = long_walk(lik, 300)
    plane = ground.objects[0]
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=int(faces**0.5), y_subdivisions=int(faces**0.5), size=40.0)
    grid = bpy.context.object
    for collection in grid.users_collection:
        collection.objects.unlink(grid)
    ground.objects.link(grid)
    grid.matrix_world = plane.matrix_world
    grid.location.z -= 0.001  # under the slope: found by every ray, hit by none first
    count = len(grid.data.polygons)
    scene = bpy.context.scene
    began = time.perf_counter()
    bpy.context.view_layer.update()  # as the viewport would once the grid is added, Limb IK or not
    evaluated = time.perf_counter() - began
    began = time.perf_counter()
    rig.limb_ik.live = True
    first = time.perf_counter() - began
    grid.location.x += 0.01
    began = time.perf_counter()
    scene.frame_set(2)
    moved = time.perf_counter() - began
    return [
        [
            f"Blender evaluating the {count:,}-face ground once added (before Limb IK uses it)",
            f"{evaluated:.2f} s",
            "",
            "",
        ],
        [
            f"a {count:,}-face ground: the first live frame",
            f"{first:.2f} s",
            f"≤ {GOALS['ground']:.0f} s",
            _met(first, "ground"),
        ],
        ["the first frame after it moved", f"{moved:.2f} s", f"≤ {GOALS['ground']:.0f} s", _met(moved, "ground")],
    ]


def _met(value: float, goal: str) -> str:
    return "met" if value <= GOALS[goal] else f"**missed** by {value - GOALS[goal]:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--faces", type=int, default=1_000_000)
    args = parser.parse_args()
    with report.quiet():
        lik = source_extension.enable()
    report.header("Long takes and big grounds", ("the DeepMimic walk cycled over the 10° slope, both legs planted",))
    rows = take_rows(lik, args.frames) + ground_rows(lik, args.faces)
    print(report.table(["what", "took", "goal", ""], rows))
    return 0


if __name__ == "__main__":
    source_extension.leave(main())
