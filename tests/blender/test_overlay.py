# SPDX-License-Identifier: GPL-3.0-or-later
"""The viewport overlay's geometry on real motion capture: footprints on the ground under the planted soles
(checked by Blender's own ray cast), the knee circle through the solved knee, and a draw handler that
registers once and never raises without a window."""

import bpy
import numpy as np
import pytest
from mathutils import Vector

from takes import clips

GROUND_TOLERANCE = 0.005  #: metres between a footprint and the ground under it


def planted_walk(lik, ground_kind: str):
    rig, frames, ground = clips.stage("walk", ground_kind)
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    return rig, frames


def ground_under(points: np.ndarray) -> np.ndarray:
    """Heights of the topmost surface under each point, by the scene's ray cast (NaN where none)."""
    scene, depsgraph = bpy.context.scene, bpy.context.evaluated_depsgraph_get()
    heights = np.full(len(points), np.nan)
    for i, (x, y, _) in enumerate(points):
        hit, location, *_ = scene.ray_cast(depsgraph, Vector((x, y, 50.0)), Vector((0.0, 0.0, -1.0)))
        if hit:
            heights[i] = location.z
    return heights


def inside(polygon: np.ndarray, point: np.ndarray) -> bool:
    """Whether the 2D ``point`` is inside the closed 2D ``polygon`` (even-odd rule)."""
    x, y = point
    count = 0
    for (x0, y0), (x1, y1) in zip(polygon[:-1], polygon[1:]):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            count += 1
    return count % 2 == 1


@pytest.mark.parametrize("ground_kind", ["slope", "step"])
def test_every_footprint_lies_on_the_ground_under_the_planted_sole(lik, ground_kind):
    rig, frames = planted_walk(lik, ground_kind)
    footing = lik.rig.planting.overlay.footing(rig, bpy.context.evaluated_depsgraph_get())
    assert [leg.limb for leg in footing] == [limb.name for limb in rig.limb_ik.limbs if limb.plant]
    scene = bpy.context.scene
    for leg in footing:
        foot = rig.limb_ik.limbs[leg.limb].end_bone  # the walk's feet have no toe: the ball is the foot's tail
        assert len(leg.footprints) >= 3, leg.limb  # the walk takes several steps with each foot
        assert len(leg.paths) >= 2, leg.limb
        for outline, frame in zip(leg.footprints, leg.frames):
            np.testing.assert_array_equal(outline[0], outline[-1])  # closed
            under = ground_under(outline)
            assert not np.isnan(under).any()
            assert np.abs(outline[:, 2] - under).max() <= GROUND_TOLERANCE, (leg.limb, frame)
            scene.frame_set(frame)  # the baked pose at the footprint's frame: the sole stands in it
            world = rig.matrix_world
            ankle, ball = (np.array(world @ p) for p in (rig.pose.bones[foot].head, rig.pose.bones[foot].tail))
            for point in (ankle, ball):
                assert inside(outline[:, :2], point[:2]), (leg.limb, frame)
            height = ball[2] - ground_under(ball[None])[0]
            assert -GROUND_TOLERANCE <= height <= 0.1, (leg.limb, frame, height)  # standing on it, not in it
        for path in leg.paths:  # through the air, from one stance to the next: never into the ground
            assert len(path) >= 2
            assert (path[:, 2] - ground_under(path) >= -GROUND_TOLERANCE).all(), leg.limb


def test_the_knee_circle_passes_through_the_solved_knee(lik):
    rig, frames = planted_walk(lik, "slope")
    overlay = lik.rig.planting.overlay
    for index, limb in enumerate(rig.limb_ik.limbs):
        rig.limb_ik.active_limb_index = index
        for frame in (frames[0], frames[len(frames) // 3], frames[-1]):
            bpy.context.scene.frame_set(frame)
            circle = overlay.knee_circle(rig)
            assert circle is not None and circle.limb == limb.name
            knee = np.array(rig.matrix_world @ rig.pose.bones[limb.lower_bone].head)
            offset = knee - circle.centre
            along = offset @ circle.normal
            across = np.linalg.norm(offset - along * circle.normal)
            assert np.hypot(along, across - circle.radius) <= 1e-3, (limb.name, frame)
            np.testing.assert_allclose(np.linalg.norm(circle.points - circle.centre, axis=1), circle.radius, atol=1e-9)
            assert np.abs((circle.points - circle.centre) @ circle.normal).max() <= 1e-9
            # without a pole the line points at the knee: the side the leg bends to
            assert not circle.poled
            direction = (circle.pole[1] - circle.pole[0]) / np.linalg.norm(circle.pole[1] - circle.pole[0])
            assert direction @ (offset - along * circle.normal) / across > 0.999


def test_the_knee_line_points_at_the_pole(lik):
    rig, frames = planted_walk(lik, "slope")
    limb = rig.limb_ik.limbs[0]
    pole = bpy.data.objects.new("Pole", None)
    bpy.context.scene.collection.objects.link(pole)
    knee = rig.matrix_world @ rig.pose.bones[limb.lower_bone].head
    pole.location = knee + (knee - rig.matrix_world @ rig.pose.bones[limb.upper_bone].head)
    limb.pole = pole
    rig.limb_ik.active_limb_index = 0
    bpy.context.view_layer.update()
    circle = lik.rig.planting.overlay.knee_circle(rig)
    assert circle.poled
    toward = np.array(pole.matrix_world.translation) - circle.centre
    toward -= (toward @ circle.normal) * circle.normal
    direction = circle.pole[1] - circle.pole[0]
    assert direction @ toward / (np.linalg.norm(direction) * np.linalg.norm(toward)) > 0.999


def test_a_rig_never_planted_has_no_footprints_and_a_limb_less_rig_no_circle(lik):
    rig, frames, _ = clips.stage("walk", "slope")
    depsgraph = bpy.context.evaluated_depsgraph_get()
    assert lik.rig.planting.overlay.footing(rig, depsgraph) == []
    assert lik.rig.planting.overlay.knee_circle(rig) is None
    assert lik.viewport.lines(rig, depsgraph) == []


def test_the_overlay_draws_the_footprints_in_each_legs_colour(lik):
    rig, frames = planted_walk(lik, "step")
    depsgraph = bpy.context.evaluated_depsgraph_get()
    footing = lik.rig.planting.overlay.footing(rig, depsgraph)
    drawn = lik.viewport.lines(rig, depsgraph)
    assert len(drawn) == len(footing) + 1  # every leg, and the active limb's knee circle
    for n, leg in enumerate(footing):
        colour, ends = drawn[n]
        assert colour == lik.viewport.LEG_COLOURS[n]
        expected = sum(len(line) - 1 for line in [*leg.footprints, *leg.paths])
        assert len(ends) == 2 * expected
        np.testing.assert_allclose(ends[0], leg.footprints[0][0], atol=1e-12)
    assert drawn[-1][0] == lik.viewport.KNEE_COLOUR
    assert lik.viewport.lines(rig, depsgraph)[0][1] == drawn[0][1]  # kept: drawn again as it was


def test_the_draw_handler_registers_once_and_never_raises_without_a_window(lik):
    viewport = lik.viewport
    handle = viewport._handle
    assert handle is not None  # added when the extension was enabled
    viewport.register()
    assert viewport._handle is handle  # not a second one
    rig, frames = planted_walk(lik, "slope")
    viewport.draw()  # the Overlay setting is off: nothing drawn, the gpu module not even asked
    rig.limb_ik.show_overlay = True
    # The lines are made; drawing them fails without a GPU context, which background mode has only once
    # something rendered (the demo's pictures, earlier in the suite), so either way is right here.
    try:
        viewport.draw()
    except SystemError as error:
        assert "GPU functions for drawing" in str(error)
    viewport._draw()  # the callback itself: caught
    viewport.unregister()
    assert viewport._handle is None
    viewport.unregister()  # removing it twice is harmless
    viewport.register()
    assert viewport._handle is not None


def test_live_planting_shows_its_footprints_too(lik):
    """Without a bake: the take live solving planted at the frame change."""
    rig, frames, ground = clips.stage("walk", "step")
    lik.api.detect_limbs(rig)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    assert lik.rig.planting.overlay.footing(rig, depsgraph) == []
    rig.limb_ik.ground = ground
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.name.startswith("leg")
    rig.limb_ik.live = True
    bpy.context.scene.frame_set(frames[10])
    footing = lik.rig.planting.overlay.footing(rig, bpy.context.evaluated_depsgraph_get())
    assert len(footing) == 2
    for leg in footing:
        assert len(leg.footprints) >= 3
        for outline in leg.footprints:
            assert np.abs(outline[:, 2] - ground_under(outline)).max() <= GROUND_TOLERANCE
