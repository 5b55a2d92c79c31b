# SPDX-License-Identifier: GPL-3.0-or-later
"""The demo's filmstrip (demo/filmstrip.py): the bundled walk on the course, rendered small with Cycles
on the CPU, as animated above and planted below; the scene left as it was."""

import bpy
import numpy as np

from demo import filmstrip
from takes import clips


def pixels(path) -> np.ndarray:
    image = bpy.data.images.load(str(path))
    try:
        width, height = image.size
        return np.array(image.pixels[:]).reshape(height, width, 4)[::-1, :, :3]  # top row first
    finally:
        bpy.data.images.remove(image)


def test_filmstrip_of_the_walk_on_the_course(lik, tmp_path):
    rig, frames, ground = clips.stage("walk", "course")
    lik.api.detect_limbs(rig)
    feet = [leg[2] for leg in clips.CLIPS["walk"].legs.values()]
    shown = filmstrip.contact_frames(rig, feet, frames, count=3)
    assert len(shown) == 3 and shown == sorted(shown)
    bpy.context.scene.frame_set(1)
    for frame in shown:  # each a stance: some foot on the authored floor
        bpy.context.scene.frame_set(frame)
        assert min((rig.matrix_world @ rig.pose.bones[foot].tail).z for foot in feet) <= 0.03
    animated = filmstrip.snapshot(rig, shown)
    lik.api.plant(rig, ground)
    planted = filmstrip.snapshot(rig, shown)
    # The feet as animated stay on the flat floor; planted, they climb with the course.
    soles = [i for i, part in enumerate(filmstrip.BODY) if part[0].endswith("_ankle")]
    lowest = [shots.tails[:, soles, 2].min(axis=1) for shots in (animated, planted)]
    assert np.abs(lowest[0]).max() < 0.03 and lowest[1][-1] > lowest[0][-1] + 0.3

    scene = bpy.context.scene
    objects, settings = set(bpy.data.objects.keys()), (scene.render.engine, scene.camera, scene.world)
    counts = {name: len(getattr(bpy.data, name)) for name in ("meshes", "materials", "curves", "cameras", "lights")}
    path = tmp_path / "strip.png"
    rendered = filmstrip.render(path, [("As animated", animated), ("Planted", planted)], ground, width=240, samples=2)
    assert set(bpy.data.objects.keys()) == objects
    assert (scene.render.engine, scene.camera, scene.world) == settings
    assert {name: len(getattr(bpy.data, name)) for name in counts} == counts
    assert not any(obj.hide_render for obj in ground.all_objects)

    assert rendered.path == path and rendered.bytes == path.stat().st_size > 0
    image = pixels(path)
    assert image.shape == (rendered.size[1], 240, 3) and 0.5 < rendered.size[1] / 240 < 2.0
    top, bottom = image[: len(image) // 2], image[len(image) // 2 :]
    assert np.mean(top[..., 0] > top[..., 2] + 0.2) > 0.02  # red bodies above
    assert np.mean(bottom[..., 2] > bottom[..., 0] + 0.2) > 0.02  # blue bodies below
    assert np.mean(top[..., 2] > top[..., 0] + 0.2) < 0.002 and np.mean(bottom[..., 0] > bottom[..., 2] + 0.2) < 0.002
