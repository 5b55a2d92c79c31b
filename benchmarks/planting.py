# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting figures: motions keyed on flat ground, planted on a ramp and a step, baked.

    ~/.cache/limb_ik/venv-blender-5.0/bin/python benchmarks/planting.py

Rigify's human metarig walks (0.78 m/s) and jogs (1.73 m/s) over the demo's course: a 15° ramp
up 0.40 m and a 20 cm step (``demo/terrain.py``). Each motion is planted and baked by
``api.plant`` and measured by ``demo/measure.py`` as the planting tests measure it: the surface
by Blender's own ray cast, stance from the motion's own ground truth. The same motions on a flat
plane at the authored floor show how much planting changes where there is nothing to fix; the
walk at 24 fps shows what a coarser frame rate costs.
"""

import sys
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCHMARKS.parent), str(BENCHMARKS.parent / "tools")]

import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # before the first `import bpy`

import bpy  # noqa: E402, F401, I001  (bpy first: it puts addon_utils on the path)
import addon_utils  # noqa: E402
import report  # noqa: E402

from demo import measure  # noqa: E402

#: (motion, ground, frames per second)
CASES = (
    ("walk", "terrain", 60),
    ("jog", "terrain", 60),
    ("walk", "terrain", 24),
    ("walk", "rough", 60),
    ("walk", "flat", 60),
    ("jog", "flat", 60),
)
#: The planting criteria the tests hold at 60 fps (tests/blender/test_plant.py).
LIMITS = "stance gap ≤ 10 mm, penetration ≤ 5 mm, sole angle ≤ 5°, knee ≤ 10°/frame, slide ≤ 5 mm, pelvis ≤ 50 mm"


def row(lik, gait: str, ground: str, fps: int) -> list[str]:
    began = time.perf_counter()
    result = measure.plant_and_measure(lik, gait, ground, fps)
    seconds = time.perf_counter() - began
    f = measure.figures(result)
    bake = result["bake"]
    flat = f"{1e3 * f.flat_change:.2f}" if ground == "flat" else "–"
    return [
        gait, ground, fps, bake.frames, f"{1e3 * f.stance_distance:.1f}", f"{1e3 * f.penetration:.1f}",
        f"{f.normal_angle:.1f}", f"{1e3 * f.slide:.1f}", f"{f.knee_change:.1f} ({f.authored_knee_change:.1f})",
        f"{1e3 * f.pelvis_change:.1f}", flat, f"{bake.seconds:.2f}", f"{seconds:.0f}",
    ]  # fmt: skip


def main() -> int:
    with report.quiet():
        lik = source_extension.enable()
        addon_utils.enable("rigify", default_set=True)
    report.header(
        "Foot planting: flat-ground motions planted on a ramp and a step",
        (
            "stance gap: worst distance of a standing foot's closest sole point to the surface (mm); penetration: "
            "deepest any sole point goes into the ground (mm); sole angle: between sole and surface while the "
            "foot stands flat (°); slide: farthest a sole point the animation has on the floor moves during a "
            "contact (mm); knee: largest change between two frames, baked (as animated) (°); pelvis: largest "
            "difference of its height above the ground from its authored height above the floor (mm); flat: "
            "largest movement of any bone when the ground is the authored floor (mm)",
            "bake: seconds of `api.plant` (plan, solve every frame, key); total: building, keying, measuring twice",
            f"the tests' limits at 60 fps: {LIMITS}",
        ),
    )
    headings = ["motion", "ground", "fps", "frames", "stance gap", "penetration", "sole angle", "slide",
                "knee °/frame", "pelvis", "flat", "bake s", "total s"]  # fmt: skip
    rows = []
    for case in CASES:
        with report.quiet():
            rows.append(row(lik, *case))
        print(f"measured {' '.join(map(str, case))}", file=sys.stderr, flush=True)
    print(report.table(headings, rows, right=[False, False] + [True] * 11), flush=True)
    return 0


if __name__ == "__main__":
    source_extension.leave(main())
