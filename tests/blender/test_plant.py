# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting on real motion capture and keyed animals, measured independently.

Every clip in ``../shared/mocap`` is planted by the API on a 10° slope, a 20 cm step and walkable
rough ground, baked, and measured by ``plant_metrics`` (contacts from the source motion, bone
heads and tails, Blender's ray cast): nothing of the planting code measures itself.
"""

import math
import re

import bpy
import numpy as np
import pytest
import rigs
from test_bake import all_fcurves

from takes import clips, grounds
from takes import measure as mocap

GROUNDS = ("slope", "step", "rough")


@pytest.mark.parametrize("ground", GROUNDS)
@pytest.mark.parametrize("clip", clips.HUMANS)
def test_human_clips_plant_within_the_limits(clip, ground):
    """Ball height kept above the surface, nothing sinks, pitch kept, no knee pops, no slide."""
    planted = mocap.planted(clip, ground)
    figures = planted["figures"]
    assert figures["contact_frames"] > 0 and figures["points_without_ground"] == 0
    assert not mocap.over(figures, mocap.LIMITS), figures
    assert not planted["bake"].warnings and not planted["bake"].problems  # nothing said where nothing is wrong


#: The human clips' rows on boulders beyond a limit (benchmarks/planting.py --set first), and why.
BOULDER_MISSES = {
    "run": "knee 11.2° in one frame as the left foot lands on a boulder (frame 36): the frame before, in the air, "
    "it bends early to clear the boulder",
}


@pytest.mark.parametrize(
    "clip",
    [
        pytest.param(clip, marks=pytest.mark.xfail(strict=True, reason=BOULDER_MISSES[clip]))
        if clip in BOULDER_MISSES
        else clip
        for clip in clips.HUMANS
    ],
)
def test_human_clips_plant_on_boulders_within_the_limits(clip):
    """Boulders smaller than a foot and bigger than one: the limits as elsewhere, the bake naming a leg exactly
    where a figure misses."""
    planted = mocap.planted(clip, "boulders")
    figures = planted["figures"]
    assert figures["contact_frames"] > 0 and figures["points_without_ground"] == 0
    assert bool(planted["bake"].warnings) == bool(mocap.over(figures, mocap.LIMITS)), planted["bake"].warnings
    assert not mocap.over(figures, mocap.LIMITS), figures


@pytest.mark.parametrize("ground", GROUNDS)
@pytest.mark.parametrize("clip", clips.QUADRUPEDS)
def test_quadrupeds_plant_all_four_legs(clip, ground):
    """Held to height and depth; where they miss the human limits (knees, pitch), the bake names a leg."""
    planted = mocap.planted(clip, ground)
    figures, bake = planted["figures"], planted["bake"]
    assert figures["contact_frames"] > 0 and figures["points_without_ground"] == 0
    assert not mocap.over(figures, mocap.QUADRUPED_LIMITS), figures
    assert bool(bake.warnings or bake.problems) == bool(mocap.over(figures, mocap.limits(clip))), bake.warnings


@pytest.mark.parametrize(
    "clip,ground,cause",
    [
        ("wolf_run", "slope", "the take walks in place"),
        ("quaternius_wolf_gallop", "slope", "the take walks in place"),
        ("run", "boulders", "the ground there asks more of the leg"),
        ("quaternius_wolf_gallop", "flat", "frame 4, with its foot down but not standing: the take keys this foot"),
    ],
)
def test_a_knee_pop_says_why(clip, ground, cause):
    """A cycle walked in place slides its feet back along the ground while they are down: on a slope the ground
    under them rises or falls as they do, which no height of a body that stays follows for every leg (the 0 A.D.
    wolf's run and the Quaternius wolf's gallop up the slope). A take that keys a mesh's sole into its floor has
    that foot stood on the ground, and a nearly straight leg bends for it (the wolf's gallop, whose front paws land
    15 and 27 mm deep, down on its floor but sliding, not standing: on flat ground it was said to be the ground, and
    then to be in the air). Else the ground asks more of the leg than its
    motion gives (the run landing on a boulder)."""
    bake = mocap.planted(clip, ground)["bake"]
    popping = [text for text in {**bake.problems, **bake.warnings}.values() if "its knee turns" in text]
    assert popping, bake.warnings
    assert all(cause in text for text in popping), popping


def test_a_knee_the_bones_turn_but_not_the_joints_says_so():
    """CesiumMan walked in place up the slope: its knees' bones turn 13.6° and 20.5° in a frame beyond the take's as
    the measure reads them (frames 32-34 and 5-11), while the joints planting placed turn less than the limit there;
    each leg's sentence says so. (Before, the left gave no cause, and the right the walk in place at frame 45, where
    the joints turn fast but the keys do not.)"""
    bake = mocap.planted("cesium_man", "slope")["bake"]
    said = {**bake.problems, **bake.warnings}
    for limb in ("leg.L", "leg.R"):
        assert "its knee turns up to" in said[limb] and "its bones, read head to tail, turn further" in said[limb]
        assert "planting turns it most" not in said[limb]


@pytest.mark.parametrize("ground", ["descent", "across"])
def test_a_knee_the_keys_do_not_turn_fast_is_not_named(ground):
    """CesiumMan walked in place with the Lowest pelvis mode down the 20° descent and across the slope: planting's
    joints turn a knee 10.9° and 10.6° in a frame beyond the take's, and the bake named those legs, while the keys
    turn its bones no more than 7.5° and 6.4°, as the independent measure reads them (a glTF's bones are not joined
    head to tail). What the keys do, read back, says whether a knee turns beyond the limit and how far; planting's
    joints say why."""
    planted = mocap.planted("cesium_man", ground, pelvis_mode="LOWEST")
    assert not mocap.over(planted["figures"], mocap.limits("cesium_man")), planted["figures"]
    assert not {**planted["bake"].problems, **planted["bake"].warnings}


@pytest.mark.parametrize("clip", clips.HUMANS)
def test_on_flat_ground_at_the_authored_floor_nothing_moves(lik, clip):
    """Without foot lock (which removes the capture's own slide on purpose), planting on the floor
    the motion was made on moves no bone more than 1 mm."""
    rig, frames, ground = clips.stage(clip, "flat")
    before = mocap.play(rig, frames)
    lik.api.detect_limbs(rig)
    rig.limb_ik.use_foot_lock = False
    lik.api.plant(rig, ground)
    moved = np.linalg.norm(mocap.play(rig, frames) - before, axis=-1).max()
    assert moved <= 0.001


@pytest.mark.parametrize("clip,ground", [("walk", "step"), ("horse_walk", "slope")])
def test_a_rig_whose_object_is_turned_and_scaled_plants_as_one_that_is_not(lik, clip, ground):
    """An FBX import's armature (centimetre bones lying Y up, the object turned and scaled by 0.01) standing where
    the staged one stands is planted where that one is, every bone within 1 mm at every frame."""
    played = []
    for exported in (False, True):
        rig, frames, collection = clips.stage(clip, ground)
        if exported:
            staged = mocap.play(rig, frames)
            rigs.as_exported(rig)
            assert np.linalg.norm(mocap.play(rig, frames) - staged, axis=-1).max() <= 1e-4
        lik.api.detect_limbs(rig)
        lik.api.plant(rig, collection)
        played.append(mocap.play(rig, frames))
    assert np.linalg.norm(played[1] - played[0], axis=-1).max() <= 0.001


@pytest.mark.parametrize("scale", [1.0, 100.0, 0.005])
def test_legs_of_a_size_no_body_has_are_named_with_their_length(lik, capfd, scale):
    """The captured walk and its ground held by an empty scaled 100 times (a take in centimetres imported at scale 1)
    or 0.005 times: planting reads a Blender unit as a metre, so the bake, check and the operator name each leg with
    its length; at its real size nothing is named."""
    rig, frames, collection = clips.stage("walk", "flat")
    world = bpy.data.objects.new("World", None)
    bpy.context.scene.collection.objects.link(world)
    world.scale = (scale,) * 3
    for obj in (rig, *collection.objects):
        obj.parent = world
    rig.limb_ik.floor_height *= scale
    lik.api.detect_limbs(rig)
    report = lik.api.plant(rig, collection)
    sentence = re.compile(r"Limb 'leg\.L' is ([\d.e+-]+) m from hip to ankle, reading a Blender unit as a metre")
    if scale == 1.0:
        assert not report.problems and not lik.api.check(rig)
        return
    assert set(report.problems) == {"leg.L", "leg.R"}
    length = float(sentence.search(report.problems["leg.L"]).group(1))
    assert length == pytest.approx(0.83 * scale, rel=0.02)
    assert sentence.search(lik.api.check(rig)["leg.L"])
    capfd.readouterr()
    assert bpy.ops.limb_ik.bake(frame_start=frames.start, frame_end=frames.stop - 1) == {"FINISHED"}
    assert sentence.search(capfd.readouterr().out)


def test_a_blocking_pass_planted_on_its_keys_stays_a_blocking_pass(lik):
    """The captured walk made a blocking pass (every channel keyed every 4th frame, constant) and planted on the slope
    on those frames (step 4): every key the bake writes holds as the keys it replaces did, so the planted legs hold
    their pose between keys as the rest of the body does. Written as Bézier, they moved between the held poses."""
    rig, frames, collection = clips.stage("walk", "slope")
    for curve in all_fcurves(rig):
        points = curve.keyframe_points
        for i in reversed(range(len(points))):
            if (round(points[i].co.x) - frames.start) % 4:
                points.remove(points[i], fast=True)
        for point in points:
            point.interpolation = "CONSTANT"
        curve.update()
    lik.api.detect_limbs(rig)
    report = lik.api.plant(rig, collection, step=4)
    assert report.keys > 0
    kinds = {point.interpolation for curve in all_fcurves(rig) for point in curve.keyframe_points}
    assert kinds == {"CONSTANT"}
    played = mocap.play(rig, frames)
    held = played[(np.arange(len(frames)) // 4) * 4]  # each frame as the last key before it has it
    assert np.abs(played - held).max() <= 1e-5


def test_an_fbx_round_trip_plants_whatever_bone_orientation_its_import_guessed(lik, tmp_path):
    """A captured walk exported to FBX and imported again, with and without the importer's Automatic Bone Orientation,
    is planted the same way: every joint (bone head; the tails are the importer's guess) within 1 mm at every frame.
    The automatic orientation points the root bone's tail a metre under the floor, which was taken for the rig's
    lowest point, and planting refused the feet as never coming near it."""
    played = []
    for automatic in (False, True):
        rig, frames, collection = clips.stage("bandai_walk_elderly", "step")
        with bpy.context.temp_override(selected_objects=[rig], active_object=rig):
            bpy.ops.export_scene.fbx(filepath=str(tmp_path / "walk.fbx"), use_selection=True, add_leaf_bones=False)
        bpy.data.objects.remove(rig)
        bpy.ops.import_scene.fbx(filepath=str(tmp_path / "walk.fbx"), automatic_bone_orientation=automatic)
        rig = next(obj for obj in bpy.context.scene.objects if obj.type == "ARMATURE")
        lik.api.detect_limbs(rig)
        assert lik.api.plant(rig, collection).keys > 0
        played.append(mocap.play(rig, frames)[:, :, 0])
    assert np.linalg.norm(played[1] - played[0], axis=-1).max() <= 0.001


def test_foot_lock_holds_what_the_capture_lets_slide():
    locked, free = mocap.planted("boxing", "flat")["figures"], mocap.planted("boxing", "flat", lock=False)["figures"]
    assert free["stance_slide"] > 0.02  # the capture's standing feet do slide
    assert locked["stance_slide"] <= mocap.LIMITS["stance_slide"]


def test_a_frame_does_not_depend_on_how_much_around_it_is_baked(lik):
    """Frames 200-300 of the boxing take, baked as part of 1-600 and of 150-350, agree within 2 mm."""
    poses = []
    for first, last in ((1, 600), (150, 350)):
        rig, _, ground = clips.stage("boxing", "step")
        lik.api.detect_limbs(rig)
        lik.api.plant(rig, ground, frame_start=first, frame_end=last)
        poses.append(mocap.play(rig, range(200, 301)))
    assert np.linalg.norm(poses[0] - poses[1], axis=-1).max() <= 0.002


@pytest.mark.parametrize("clip,ground", [("walk", "course"), ("boxing", "step")])
def test_live_shows_what_the_bake_writes(lik, clip, ground):
    rig, frames, collection = clips.stage(clip, ground)
    frames = frames[:300]
    lik.api.detect_limbs(rig)
    for limb in rig.limb_ik.limbs:
        limb.plant = "leg" in limb.name
        limb.enabled = limb.plant
    rig.limb_ik.ground = collection
    rig.limb_ik.live = True
    live = mocap.play(rig, frames)
    lik.api.plant(rig)
    assert not rig.limb_ik.live
    assert np.linalg.norm(mocap.play(rig, frames) - live, axis=-1).max() <= 0.001


def test_plant_keys_only_the_legs_and_the_pelvis(lik):
    rig, _, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    before = rigs.fcurve_keys(rig)
    lik.api.plant(rig, ground)
    after = rigs.fcurve_keys(rig)
    changed = {path.split('"')[1] for path in after if not np.array_equal(before.get(path), after[path])}
    legs = {bone for side in ("left", "right") for bone in (f"{side}_hip", f"{side}_knee", f"{side}_ankle")}
    assert changed == legs | {"root"}


def test_plant_refuses_a_limb_without_a_foot_on_the_ground_side(lik):
    rig, _, ground = clips.stage("boxing", "slope")  # three-bone arms: upper arm, forearm, hand
    lik.api.detect_limbs(rig)
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match="'arm.L' has no foot on the ground side"):
        lik.api.plant(rig, ground, limbs=["arm.L"])
    assert not any(limb.plant for limb in rig.limb_ik.limbs)


def test_feet_with_no_ground_under_them_are_a_problem_not_the_floor(lik):
    """Ground far to the side: planting refuses with a sentence, and check names it."""
    rig, _, ground = clips.stage("walk", "flat")
    ground.objects[0].location.y += 50.0
    lik.api.detect_limbs(rig)
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match="no ground under its foot"):
        lik.api.plant(rig, ground)
    rig.limb_ik.ground = ground
    for limb in rig.limb_ik.limbs:
        limb.plant = "leg" in limb.name
    problems = lik.api.check(rig)
    assert set(problems) == {"leg.L", "leg.R"} and "no ground under its foot" in problems["leg.L"]


def test_ground_far_above_the_floor_is_found(lik):
    """A plane 2 m above the floor the walk was made on: the feet stand on it, not 2 m inside it."""
    rig, frames, ground = clips.stage("walk", "flat")
    ground.objects[0].location.z += 2.0
    legs = clips.CLIPS["walk"].legs
    source = mocap.plant_metrics.sample(rig, legs, frames)
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    result = mocap.plant_metrics.sample(rig, legs, frames)
    figures = mocap.plant_metrics.figures(source, result, list(ground.objects), mocap.fps(), 0.0)
    assert not mocap.over(figures, mocap.LIMITS), figures


def test_the_foot_report_agrees_with_the_independent_measure(lik):
    rig, frames, ground = clips.stage("walk", "slope")
    legs = clips.CLIPS["walk"].legs
    source = mocap.plant_metrics.sample(rig, legs, frames)
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    figures = mocap.plant_metrics.figures(
        source, mocap.plant_metrics.sample(rig, legs, frames), list(ground.objects), mocap.fps(), 0.0
    )
    report = lik.api.foot_report(rig)
    assert report["authored"].startswith("the take recorded")
    feet = report["feet"]
    assert sum(f["contact_frames"] for f in feet) == figures["contact_frames"]
    assert max(f["deepest"] for f in feet) == pytest.approx(figures["deepest"], abs=1e-4)
    assert max(f["knee_pop"] for f in feet) == pytest.approx(figures["knee_pop_deg"], abs=0.05)
    assert max(f["slide"] for f in feet) == pytest.approx(figures["stance_slide"], abs=1e-4)


def test_the_foot_report_names_the_feet_beyond_the_limits_as_they_play(lik):
    """With Live on and nothing baked, the foot report holds what plays to the limits as a planting bake holds its
    keys: the horse walking up the 10° slope with its feet let follow no more than 3° of it misses the pitch, for
    that cause, and the walk nothing."""
    for clip, named in (("horse_walk", True), ("walk", False)):
        rig, _, ground = clips.stage(clip, "slope")
        lik.api.detect_limbs(rig)
        rig.limb_ik.ground = ground
        if named:
            rig.limb_ik.max_foot_angle = math.radians(3.0)
        for limb in rig.limb_ik.limbs:
            limb.plant = limb.enabled = "leg" in limb.name
        rig.limb_ik.live = True
        report = lik.api.foot_report(rig)
        assert report["authored"] == "the animation"
        assert bool(report["beyond"]) == named, report["beyond"]
        assert all(
            text.startswith(f"Limb '{limb}' plays beyond the planting limits")
            and "pitch" in text
            and "Max Foot Angle" in text
            for limb, text in report["beyond"].items()
        )
        assert report["lines"][len(report["feet"]) + 1 :] == list(dict.fromkeys(report["beyond"].values()))


def test_the_bake_reads_knees_as_the_bones_turn(lik):
    """CesiumMan's bones are not joined head to tail (the glTF importer guesses their tails): a shin turned about
    its length against the thigh turns the bones apart though the joints keep their bend, and the independent
    measure reads the knee between the bones. Turned 37° and moved, on rough ground, planting turns the nearly
    straight left shin so at frames 18-19: the measure's knee turns 14.2° in a frame beyond the source's, while the
    joints' bend turns 6.7°. The bake read the joints and said nothing; it now reads the bones as the measure does
    (the same figure to 0.05°) and names the leg with those frames."""
    rig, frames, ground = clips.stage("cesium_man", "flat")
    for obj in list(ground.objects):
        bpy.data.objects.remove(obj)
    rig.rotation_mode = "XYZ"  # the importer's is quaternions
    rig.rotation_euler.z += math.radians(37.0)
    rig.location.xy += type(rig.location.xy)((3.0, -2.0))
    path, feet, leg = clips.footprint(rig, "cesium_man", frames)
    grounds.build("rough", path, feet, ground, clips.CLIPS["cesium_man"].floor, leg)
    legs, metrics = clips.CLIPS["cesium_man"].legs, mocap.plant_metrics
    feet = metrics.foot_bones(rig, legs, frames)
    source = metrics.sample_sole(rig, legs, frames, feet=feet)
    lik.api.detect_limbs(rig)
    bake = lik.api.plant(rig, ground)
    played = metrics.sample_sole(rig, legs, frames, feet=feet, ground=list(ground.objects), like=source)
    knee = metrics.figures(source, played, list(ground.objects), mocap.fps())["knee_pop_deg"]
    assert knee > 10.0, knee
    report = {f["limb"]: f["knee_pop"] for f in lik.api.foot_report(rig)["feet"]}
    assert max(report.values()) == pytest.approx(knee, abs=0.05)
    said = {**bake.problems, **bake.warnings}
    assert "leg.L" in said and "knee turns up to" in said["leg.L"], said


def test_pelvis_drop_is_measured_against_the_ground_under_it_before_and_after_a_bake(lik, tmp_path):
    """On a slope the ground under the walker rises 0.9 m; the pelvis keeps its height above it,
    lowered only where the lower leg needs. The report says so with live planting, after the bake,
    and from check on the saved file."""
    rig, _, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    for limb in rig.limb_ik.limbs:
        limb.plant = "leg" in limb.name
    rig.limb_ik.ground = ground
    rig.limb_ik.live = True
    live = lik.api.foot_report(rig)["pelvis_drop"]
    lik.api.plant(rig)
    baked = lik.api.foot_report(rig)["pelvis_drop"]
    assert 0.0 <= live <= 0.1 and baked == pytest.approx(live, abs=0.002)
    path, name = tmp_path / "planted.blend", rig.name
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    assert lik.api.foot_report(name)["pelvis_drop"] == pytest.approx(baked, abs=1e-6)


def test_planting_without_ground_says_so(lik):
    rig, _, _ = clips.stage("walk", "flat")
    lik.api.detect_limbs(rig)
    rig.limb_ik.limbs["leg.L"].plant = True
    with rigs.unchanged(rig), pytest.raises(RuntimeError, match="no ground collection"):
        bpy.ops.limb_ik.solve()


def test_planting_a_two_bone_leg_says_it_needs_a_foot(lik):
    rig, _, ground = clips.stage("walk", "flat")
    lik.api.detect_limbs(rig)
    rig.limb_ik.limbs["leg.L"].end_bone = ""
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match="'leg.L' has no foot to plant"):
        lik.api.plant(rig, ground, limbs="leg.L")


def test_a_toe_that_is_not_below_the_foot_is_refused(lik):
    rig, _, ground = clips.stage("boxing", "flat")
    lik.api.detect_limbs(rig)
    rig.limb_ik.ground = ground
    rig.limb_ik.limbs["leg.L"].plant = True
    rig.limb_ik.limbs["leg.L"].toe_bone = "LeftWrist"
    with rigs.unchanged(rig), pytest.raises(RuntimeError, match="toe bone 'LeftWrist' is not a child of the foot"):
        bpy.ops.limb_ik.solve()


def test_a_ground_without_a_mesh_is_refused(lik):
    rig, _, _ = clips.stage("walk", "flat")
    lik.api.detect_limbs(rig)
    nothing = bpy.data.collections.new("Nothing")
    bpy.context.scene.collection.children.link(nothing)
    nothing.objects.link(rigs.empty("Marker"))
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match="has no mesh to stand on"):
        lik.api.plant(rig, nothing)


def test_loading_a_file_forgets_the_planting_analysis_and_the_ground_trees(lik):
    """Live planting keeps its analysis of the take and the ground's ray-cast trees between frames; a
    file loaded afterwards starts without the last file's."""
    rig, _, ground = clips.stage("walk", "flat")
    lik.api.detect_limbs(rig)
    for limb in rig.limb_ik.limbs:
        limb.plant = "leg" in limb.name
    rig.limb_ik.ground = ground
    rig.limb_ik.live = True  # solved at once: the take analysed, the ground's trees built
    assert lik.rig.planting.legs._cache and lik.rig.planting.ground._trees
    bpy.ops.wm.read_homefile(app_template="")
    assert not lik.rig.planting.legs._cache and not lik.rig.planting.ground._trees


def test_plant_takes_the_legs_detection_would_call_legs(lik):
    """By default the enabled legs are planted: limbs named as Detect Limbs names legs, and limbs over bones
    named as a leg's, whatever the limb is called; arms are not."""
    rig, _, ground = clips.stage("walk", "flat")
    lik.api.detect_limbs(rig)
    rig.limb_ik.limbs["leg.L"].name = "Left"  # over left_hip, left_knee, left_ankle
    lik.api.plant(rig, ground)
    assert {limb.name for limb in rig.limb_ik.limbs if limb.plant} == {"Left", "leg.R"}


def _metarig_over(lik, height: float):
    """The human metarig, its limbs detected, and a ground collection holding a plane ``height`` above its feet."""
    rig = rigs.human_metarig()
    lik.api.detect_limbs(rig)
    ground = rigs.plane_ground(size=10.0)
    ground.objects[0].location.z = height
    bpy.context.view_layer.objects.active = rig
    return rig, ground


@pytest.mark.parametrize("height,way", [(2.0, "up"), (-5.0, "down")])
def test_a_ground_far_from_the_feet_is_a_problem_with_the_distance(lik, capfd, height, way):
    """Planted on a plane 2 m above (or 5 m below) the feet, the whole body moves that far: the keys are
    written, but the bake report, the operator's message, check and the foot report name the distance."""
    rig, ground = _metarig_over(lik, height)
    report = lik.api.plant(rig, ground, frame_start=1, frame_end=5)
    assert report.lift == pytest.approx(height, abs=1e-4)
    assert set(report.problems) == {"leg.L", "leg.R"}
    sentence = f"Planting moves the body of 'metarig' {abs(height):.2f} m {way} or more on every frame"
    assert report.problems["leg.L"].startswith(sentence) and "further than its legs reach" in report.problems["leg.L"]
    assert lik.api.foot_report(rig, 1, 5)["pelvis_lift"] == pytest.approx(height, abs=1e-4)
    problems = lik.api.check(rig)
    assert set(problems) == {"leg.L", "leg.R"} and problems["leg.L"].startswith(sentence)
    capfd.readouterr()
    assert bpy.ops.limb_ik.bake(frame_start=1, frame_end=5) == {"FINISHED"}
    assert capfd.readouterr().out.startswith(f"Warning: {sentence}")


def test_a_ground_within_a_leg_of_the_feet_is_no_problem(lik):
    rig, ground = _metarig_over(lik, 0.3)
    report = lik.api.plant(rig, ground, frame_start=1, frame_end=5)
    assert report.lift == pytest.approx(0.3, abs=1e-4) and not report.problems
    assert not lik.api.check(rig)
    assert lik.api.foot_report(rig, 1, 5)["pelvis_lift"] == pytest.approx(0.3, abs=1e-4)


def test_no_ground_is_counted_over_the_frames_asked(lik):
    """Ground 50 m to the side: the sentence counts the 5 frames asked, then the rest of the take it reads."""
    rig, ground = _metarig_over(lik, 0.0)
    ground.objects[0].location.y = 50.0
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError) as refused:
        lik.api.plant(rig, ground, frame_start=1, frame_end=5)
    assert "no ground under its foot at 5 frames from 1 to 5 (and 245 more of the take around them" in str(
        refused.value
    )


def _raised_plane_instance(height: float) -> bpy.types.Object:
    """An Empty instancing a collection (in no scene) that holds a plane ``height`` above the floor."""
    bpy.ops.mesh.primitive_plane_add(size=10.0, location=(0.0, 0.0, height))
    plane = bpy.context.object
    source = bpy.data.collections.new("Raised")
    for collection in plane.users_collection:
        collection.objects.unlink(plane)
    source.objects.link(plane)
    instancer = rigs.empty("Raised instance")
    instancer.instance_type, instancer.instance_collection = "COLLECTION", source
    return instancer


def _geometry_nodes_plane(height: float) -> bpy.types.Object:
    """A mesh object whose Geometry Nodes output only an instance of a grid ``height`` above the floor."""
    tree = bpy.data.node_groups.new("Raised grid", "GeometryNodeTree")
    tree.interface.new_socket(name="Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    grid, move = tree.nodes.new("GeometryNodeMeshGrid"), tree.nodes.new("GeometryNodeTransform")
    instance, output = tree.nodes.new("GeometryNodeGeometryToInstance"), tree.nodes.new("NodeGroupOutput")
    grid.inputs["Size X"].default_value = grid.inputs["Size Y"].default_value = 10.0
    move.inputs["Translation"].default_value = (0.0, 0.0, height)
    tree.links.new(grid.outputs["Mesh"], move.inputs["Geometry"])
    tree.links.new(move.outputs["Geometry"], instance.inputs["Geometry"])
    tree.links.new(instance.outputs["Instances"], output.inputs["Geometry"])
    obj = bpy.data.objects.new("Raised nodes", bpy.data.meshes.new("Raised nodes"))
    obj.modifiers.new("Grid", "NODES").node_group = tree
    return obj


@pytest.mark.parametrize("beside_a_plane", [True, False], ids=["beside a plane", "instances only"])
@pytest.mark.parametrize("make", [_raised_plane_instance, _geometry_nodes_plane], ids=["collection", "nodes"])
def test_feet_stand_on_the_instanced_ground_the_render_shows(lik, make, beside_a_plane):
    """A plane 30 cm up that the ground collection shows as an instance (of a collection, or made by Geometry
    Nodes), over a real plane at the floor (or alone): the feet stand on it, not 28 cm inside it."""
    rig, ground = _metarig_over(lik, 0.0)
    if not beside_a_plane:
        bpy.data.objects.remove(ground.objects[0])
    ground.objects.link(make(0.3))
    toe = rigs.world_matrix(rig, "toe.L")[2, 3]
    report = lik.api.plant(rig, ground, frame_start=1, frame_end=5)
    assert report.lift == pytest.approx(0.3, abs=1e-4)
    assert rigs.world_matrix(rig, "toe.L")[2, 3] - toe == pytest.approx(0.3, abs=1e-4)


def test_a_knee_planting_cannot_keep_within_the_limit_is_named_with_its_frames(lik):
    """The wolf running in place up the slope turns a knee 16.7° in a frame, as the shared measure finds: the bake
    names the limb, the figure and the frames (the largest named is the measure's), keyed all the same; a walk within
    the limits has no such sentence."""
    figure = mocap.planted("wolf_run", "slope")["figures"]["knee_pop_deg"]
    rig, _, ground = clips.stage("wolf_run", "slope")
    lik.api.detect_limbs(rig)
    report = lik.api.plant(rig, ground)
    assert figure > 10.0 and report.warnings and not report.problems and report.keys
    said = {
        limb: re.search(r"its knee turns up to ([\d.]+)° more in one frame", text)
        for limb, text in report.warnings.items()
    }
    named = {limb: float(found.group(1)) for limb, found in said.items() if found}
    assert max(named.values()) == pytest.approx(figure, abs=0.1), report.warnings
    knees = [report.warnings[limb] for limb in named]
    assert all(re.search(r"\(beyond 10\.0° at (frame \d+|\d+ frames from \d+ to \d+)", text) for text in knees), knees
    assert not mocap.planted("walk", "slope")["bake"].warnings
