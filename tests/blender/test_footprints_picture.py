# SPDX-License-Identifier: GPL-3.0-or-later
"""The demo's picture of the viewport overlay (demo/footprints.py): the footprints of the walk planted on the
course, rendered small with Workbench; the scene left as it was."""

import bpy
import numpy as np

from demo import footprints
from takes import clips


def test_the_demo_draws_the_footprints_on_the_course_and_leaves_the_scene_as_it_was(lik, tmp_path):
    rig, frames, ground = clips.stage("walk", "course")
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    scene = bpy.context.scene
    objects, scenes = set(bpy.data.objects.keys()), set(bpy.data.scenes.keys())
    path = footprints.render(lik, tmp_path / "footprints.png", rig, ground, width=800)
    assert set(bpy.data.objects.keys()) == objects and set(bpy.data.scenes.keys()) == scenes
    assert bpy.context.scene == scene
    image = bpy.data.images.load(str(path))
    try:
        width, height = image.size
        pixels = np.array(image.pixels[:]).reshape(height, width, 4)[..., :3]
    finally:
        bpy.data.images.remove(image)
    assert width == 800
    # On grey ground, each leg's lines in its colour, shaded: the left leg's orange, the right leg's blue.
    red, blue = pixels[..., 0] - pixels[..., 2], pixels[..., 2] - pixels[..., 0]
    assert lik.viewport.LEG_COLOURS[0][0] > lik.viewport.LEG_COLOURS[0][2]
    assert lik.viewport.LEG_COLOURS[1][2] > lik.viewport.LEG_COLOURS[1][0]
    assert (red > 0.15).sum() > 100 and (blue > 0.15).sum() > 100, ((red > 0.15).sum(), (blue > 0.15).sum())
