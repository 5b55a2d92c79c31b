# SPDX-License-Identifier: GPL-3.0-or-later
"""Soles from the skinned mesh: a glTF character stands on its mesh, not on its bones' guessed tails.

Measured against the mesh itself (``plant_metrics.sample_sole``: the lowest vertex the foot's bones carry,
read from the evaluated mesh at each frame), not against the planting code's own idea of the sole.
"""

import bpy
import numpy as np
import pytest
import rigs

from takes import clips
from takes import measure as mocap


def _plan(lik, rig, ground):
    """The planting plan of the rig's detected legs, as the bake makes it."""
    lik.api.detect_limbs(rig)
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.enabled = "leg" in limb.name
    rig.limb_ik.ground = ground
    return lik.rig.plan.make(rig, from_source=True).planting


def test_a_skinned_foot_stands_on_its_lowest_vertices(lik):
    """CesiumMan's heel, ball and tip, as planting reads them over the walk, lie on the mesh's lowest foot
    vertex: never under it, 2 mm above it at the median (its bone tails: 2 to 15 cm above)."""
    rig, frames, ground = clips.stage("cesium_man", "flat")
    planting = _plan(lik, rig, ground)
    legs = lik.rig.planting.legs
    scene, samples = bpy.context.scene, []
    for frame in frames:
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        samples.append(legs.leg_sample(planting, lik.rig.pose.read_pose(rig, rig.evaluated_get(depsgraph))).at(0))
    track = legs.LegSample(*(np.array(column) for column in zip(*samples)))
    lowest = legs.sole_points(planting, track)[..., 2].min(axis=2)  # (F, n)
    mesh = mocap.plant_metrics.sample_sole(rig, clips.CLIPS["cesium_man"].legs, frames)
    for n, foot in enumerate(planting.feet):
        floor = np.array([mesh[frame][foot.limb[-1]]["ball"].z for frame in frames])
        above = lowest[:, n] - floor
        assert above.min() >= -0.003, (foot.limb, above.min())
        assert np.median(above) <= 0.005 and np.percentile(above, 95) <= 0.01, (foot.limb, np.percentile(above, 95))


def _apart(rig, frames, first: str, second: str) -> np.ndarray:
    """How far apart two bones' heads are (world) at each of ``frames``, as Blender poses them."""
    scene, out = bpy.context.scene, []
    for frame in frames:
        scene.frame_set(frame)
        bones = rig.pose.bones
        out.append((rig.matrix_world @ bones[first].head - rig.matrix_world @ bones[second].head).length)
    return np.array(out)


def _planted_lower(lik, rig, frames, ground, clip: str) -> dict:
    """Plant the staged ``clip`` onto its ``ground`` moved 20 cm under its feet (every foot goes down onto it),
    asserting the bake keys and names no problem; the shared measure's figures of the skinned feet."""
    legs = clips.CLIPS[clip].legs
    feet = mocap.plant_metrics.foot_bones(rig, legs, frames)
    source = mocap.plant_metrics.sample_sole(rig, legs, frames, feet=feet)
    for ground_object in ground.objects:
        ground_object.location.z -= 0.2
    report = lik.api.plant(rig, ground)
    assert report.keys > 0 and not report.problems, report.problems
    objects = list(ground.objects)
    result = mocap.plant_metrics.sample_sole(rig, legs, frames, feet=feet, ground=objects, like=source)
    with mocap.contacts_by_height(in_place=True):
        return mocap.plant_metrics.figures(source, result, objects, mocap.fps(), 0.0)


def test_hooves_on_ik_bones_outside_the_leg_chains_are_planted_with_them(lik):
    """Quaternius' horse: its hooves hang from baked IK bones under the root (``IKFrontLeg.L`` > ``FF.L``), not
    from the two-bone leg chains. Detect Limbs takes those bones for foot and toe, saying so, and planting moves
    them with the legs: at every frame the fetlock (the IK bone's head) stays as far from the knee as animated
    (a chain that left its foot behind would stretch that by up to the ground's move), and the hooves' mesh, read
    by ``plant_metrics``, stands on the ground."""
    rig, frames, ground = clips.stage("quaternius_horse", "flat")
    bpy.context.view_layer.objects.active = rig
    assert "FINISHED" in bpy.ops.limb_ik.detect_limbs()
    limbs = rig.limb_ik.limbs
    assert [(limbs[f"{end}_leg.L"].end_bone, limbs[f"{end}_leg.L"].toe_bone) for end in ("front", "back")] == [
        ("IKFrontLeg.L", "FF.L"),
        ("IKBackLeg.L", "FFB.L"),
    ]
    assert "front_leg.L' on 'IKFrontLeg.L'" in lik.rig.limbs.setup.loose_feet(rig, limbs)
    animated = _apart(rig, frames, "IKFrontLeg.L", "FrontLowerLeg.L")
    figures = _planted_lower(lik, rig, frames, ground, "quaternius_horse")
    planted = _apart(rig, frames, "IKFrontLeg.L", "FrontLowerLeg.L")
    assert np.abs(planted - animated).max() <= 1e-4 * animated.max(), np.abs(planted - animated).max()
    assert figures["contact_frames"] > 0 and figures["points_without_ground"] == 0, figures
    assert figures["ball_height_median"] <= 0.005 and figures["deepest"] <= 0.005, figures


def _held_in(rig, frames, carrier: str, bone: str) -> np.ndarray:
    """(F, 3) the head of ``bone`` in the frame of ``carrier`` at each of ``frames``, as Blender poses them."""
    scene, out = bpy.context.scene, []
    for frame in frames:
        scene.frame_set(frame)
        bones = rig.pose.bones
        out.append(tuple(bones[carrier].matrix.inverted() @ bones[bone].head))
    return np.array(out)


def test_a_digitigrade_leg_is_planted_on_its_toe_outside_the_chain(lik):
    """Quaternius' mech (Leela): three-segment legs (``UpperLeg`` > ``MidLeg`` > ``LowerLeg``) whose foot is a baked
    IK bone under the root (``Foot.L``). Detect Limbs makes the third bone the end and that foot its toe, saying
    so; planting onto ground 20 cm under the feet carries the toe with the leg (its head stays where the animation
    has it in the long bone's frame, though no bone of the chain carries it) and stands its mesh on the ground."""
    rig, frames, ground = clips.stage("leela", "flat")
    bpy.context.view_layer.objects.active = rig
    assert "FINISHED" in bpy.ops.limb_ik.detect_limbs()
    limb = rig.limb_ik.limbs["leg.L"]
    assert (limb.upper_bone, limb.lower_bone, limb.end_bone, limb.toe_bone) == (
        "UpperLeg.L",
        "MidLeg.L",
        "LowerLeg.L",
        "Foot.L",
    )
    assert "'leg.L' on 'Foot.L' (its toe" in lik.rig.limbs.setup.loose_feet(rig, rig.limb_ik.limbs)
    animated = _held_in(rig, frames, "LowerLeg.L", "Foot.L")
    figures = _planted_lower(lik, rig, frames, ground, "leela")
    planted = _held_in(rig, frames, "LowerLeg.L", "Foot.L")
    assert np.abs(planted - animated).max() <= 1e-4, np.abs(planted - animated).max()
    assert np.abs(rig.pose.bones["Foot.L"].location).max() > 0.0
    assert figures["contact_frames"] > 0 and figures["points_without_ground"] == 0, figures
    assert figures["ball_height_median"] <= 0.005 and figures["deepest"] <= 0.005, figures


def test_legs_added_without_their_loose_feet_are_refused_naming_the_feet(lik):
    """The horse's legs added by hand as two bones each: planting refuses them in one sentence naming the bones
    their hooves hang from and what to do, and leaves the scene as it was; with those as end bones it plants."""
    rig, frames, ground = clips.stage("quaternius_horse", "flat")
    for end, part in (("front", "Front"), ("back", "Back")):
        lik.api.add_limb(rig, [f"{part}UpperLeg.L", f"{part}LowerLeg.L"], f"{end}_leg.L")
    with (
        rigs.unchanged(rig),
        pytest.raises(lik.api.LimbIKError, match="make the first of each a leg's end bone") as error,
    ):
        lik.api.plant(rig, ground)
    assert "'front_leg.L' to 'IKFrontLeg.L', 'FF.L'" in str(error.value)
    for end, part, foot in (("front", "Front", "IKFrontLeg.L"), ("back", "Back", "IKBackLeg.L")):
        lik.api.remove_limb(rig, f"{end}_leg.L")
        lik.api.add_limb(rig, [f"{part}UpperLeg.L", f"{part}LowerLeg.L", foot], f"{end}_leg.L")
    assert lik.api.plant(rig, ground).keys > 0


def test_a_loose_foot_planted_live_is_baked_alike_and_planted_again_alike(lik):
    """The horse on the slope, its feet the IK bones under the root: what Live shows at every frame is what the
    bake keys (the IK bones moved by their location keys), and planting the baked rig again gives the same
    keys: the feet's animated locations are kept with the animator's motion, not read back from the bake."""
    rig, frames, ground = clips.stage("quaternius_horse", "slope")
    lik.api.detect_limbs(rig)
    for limb in rig.limb_ik.limbs:
        limb.plant = True
    rig.limb_ik.ground = ground
    names, scene = ("IKFrontLeg.L", "FF.L", "IKBackLeg.R", "FrontLowerLeg.L"), bpy.context.scene

    def heads():
        out = []
        for frame in frames:
            scene.frame_set(frame)
            out.append([tuple(rig.matrix_world @ rig.pose.bones[name].head) for name in names])
        return np.array(out)

    animated = heads()
    rig.limb_ik.live = True
    live = heads()
    rig.limb_ik.live = False
    assert np.abs(live - animated).max() > 0.1  # the slope moves the feet
    lik.api.plant(rig, ground)
    baked = heads()
    assert np.abs(live - baked).max() <= 1e-5, np.abs(live - baked).max()
    lik.api.plant(rig, ground)
    assert np.abs(heads() - baked).max() <= 1e-6


def test_a_leg_whose_hoof_hangs_outside_its_chain_is_planted_with_a_warning(lik):
    """A three-bone hind leg made by hand on the horse (imported with bone tails pointing at their children,
    so the chain reaches the ground): planted by its chain's end bone, and the bake says the hoof's bones do
    not follow."""
    rig, frames, ground = clips.stage("quaternius_horse", "flat", bone_heuristic="TEMPERANCE")
    for side in "LR":
        lik.api.add_limb(rig, [f"BackLeg.{side}", f"BackUpperLeg.{side}", f"BackLowerLeg.{side}"], f"hind_leg.{side}")
    report = lik.api.plant(rig, ground, limbs=["hind_leg.L", "hind_leg.R"])
    assert report.keys > 0
    assert "'IKBackLeg.L', 'FFB.L', outside its chain" in report.problems["hind_leg.L"], report.problems
    assert "'BackLowerLeg.L'" in report.problems["hind_leg.L"]
    assert "'IKBackLeg.R', 'FFB.R', outside its chain" in lik.api.check(rig)["hind_leg.R"]


def test_at_rest_the_ball_and_tip_lie_on_the_sole(lik):
    """In CesiumMan's rest pose, the ball planting reads is at the height of the lowest vertex its foot and toe
    bones carry (read here from the mesh's vertex groups), and the tip within the 2 cm sole band above it (the
    toe bone's head, which was the ball, stands 2.1 cm above it)."""
    rig, frames, ground = clips.stage("cesium_man", "flat")
    planting = _plan(lik, rig, ground)
    rig.data.pose_position = "REST"
    depsgraph = bpy.context.evaluated_depsgraph_get()
    sample = lik.rig.planting.legs.leg_sample(planting, lik.rig.pose.read_pose(rig, rig.evaluated_get(depsgraph))).at(0)
    mesh = bpy.data.objects["Cesium_Man"]
    for n, foot in enumerate(planting.feet):
        bones = {rig.pose.bones[foot.foot].name, rig.pose.bones[foot.toe].name}
        groups = {g.index for g in mesh.vertex_groups if g.name in bones}
        lowest = min(
            (mesh.matrix_world @ v.co).z
            for v in mesh.data.vertices
            if sum(g.weight for g in v.groups if g.group in groups) >= 0.5
        )
        assert abs(sample.balls[n, 2] - lowest) <= 0.001, (foot.limb, sample.balls[n, 2], lowest)
        assert -1e-6 <= sample.tips[n, 2] - lowest <= 0.02, (foot.limb, sample.tips[n, 2], lowest)


def test_the_outline_is_where_the_armature_modifier_puts_its_vertices(lik):
    """The T-rex's claws are skinned partly to the root and the shin, not only to the foot: at push-off the skin
    drags them 8 cm under the floor while the foot bone stands. The outline planting reads (each vertex carried by
    all its bones) is, at every frame, on vertices of the mesh as Blender evaluates it, and as low as the lowest
    vertex the foot carries wherever that is under the floor (``plant_metrics.sample_sole``)."""
    rig, frames, ground = clips.stage("trex", "flat")
    planting = _plan(lik, rig, ground)
    legs, mesh = lik.rig.planting.legs, bpy.data.objects["Trex"]
    lowest = mocap.plant_metrics.sample_sole(rig, clips.CLIPS["trex"].legs, frames)
    scene, under = bpy.context.scene, 0
    for frame in frames:
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        sample = legs.leg_sample(planting, lik.rig.pose.read_pose(rig, rig.evaluated_get(depsgraph))).at(0)
        evaluated = mesh.evaluated_get(depsgraph).data
        vertices = np.empty(len(evaluated.vertices) * 3)
        evaluated.vertices.foreach_get("co", vertices)
        world = np.array(mesh.matrix_world)
        vertices = vertices.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]
        for n, foot in enumerate(planting.feet):
            outline = sample.outline[n]
            apart = np.linalg.norm(outline[:, None] - vertices[None], axis=-1).min(axis=1)
            assert apart.max() <= 1e-4, (foot.limb, frame, apart.max())
            mesh_lowest = lowest[frame][foot.limb[-1]]["ball"].z
            if mesh_lowest < -0.01:
                under += 1
                assert outline[:, 2].min() <= mesh_lowest + 0.005, (foot.limb, frame, outline[:, 2].min(), mesh_lowest)
    assert under >= 4, under


@pytest.mark.parametrize(
    "clip",
    [
        "cesium_man",
        "knight_run",
        "leela_run_tall",
        "trex_run",
        "triceratops_run",
        "quaternius_horse_gallop",
        "quaternius_wolf_gallop",
        "quaternius_stag_gallop",
    ],
)
def test_near_the_ground_the_outline_reaches_as_low_as_the_foot(lik, clip):
    """Wherever a foot's skin comes within 5 cm of the floor, the lowest point of the outline planting holds above
    the ground is within 3 mm of the lowest vertex the foot carries, at every frame of a run or gallop on each rig
    of the second set. Chosen at rest alone, the outline missed the vertices the rest of the leg drags under the
    foot as the ankle bends, and the sole's middle: 381 mm on the mech's tall run (its long bone's skin, lying low
    at push-off), 35 mm on the triceratops' run, 6 mm on the T-rex's walk."""
    rig, frames, ground = clips.stage(clip, "flat")
    planting = _plan(lik, rig, ground)
    legs, scene, near = lik.rig.planting.legs, bpy.context.scene, 0
    for frame in frames:
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        sample = legs.leg_sample(planting, lik.rig.pose.read_pose(rig, rig.evaluated_get(depsgraph)), skin=True).at(0)
        for n, foot in enumerate(planting.feet):
            lowest = sample.skin[n][:, 2].min()
            if foot.sole is not None and lowest <= 0.05:
                near += 1
                assert sample.outline[n][:, 2].min() - lowest <= 0.003, (foot.limb, frame)
    assert near >= len(planting.feet), near


#: The Khronos glTF sample fox (``tests/data/khronos-fox``, with its licence): a rig and takes planting was not
#: developed on, its front legs named as arms, its front paws flat pads without a toe bone.
FOX = clips.Clip(
    str(rigs.DATA / "khronos-fox" / "Fox.glb"),
    0.01,  # made in centimetres
    {
        **{
            f"front.{s}": (f"b_{side}UpperArm_{a}", f"b_{side}ForeArm_{b}", f"b_{side}Hand_{c}", None)
            for s, side, a, b, c in (("L", "Left", "09", "010", "011"), ("R", "Right", "06", "07", "08"))
        },
        **{
            f"hind.{s}": (f"b_{side}Leg01_{a}", f"b_{side}Leg02_{b}", f"b_{side}Foot01_{c}", f"b_{side}Foot02_{d}")
            for s, side, a, b, c, d in (
                ("L", "Left", "015", "016", "017", "018"),
                ("R", "Right", "019", "020", "021", "022"),
            )
        },
    },
    "b_Hip_01",
    "quadruped",
    in_place=True,
    part="tests",
    action="Survey",
)


@pytest.mark.parametrize("ground", ["slope", "step"])
def test_flat_pads_keep_their_pitch_where_a_leg_falls_short(monkeypatch, ground):
    """The fox standing and looking round (its Survey) on the 10° slope and the 20 cm step holds every limit by the
    shared measure. Its straight front legs fall short there: their paws, flat pads, used to lift their heels up to
    4° to reach, which stood them on their front edges, and the measure read them 30° off their pitch (the bake
    named both front legs). A mesh's sole lifts no heel (``solvers/planting/__init__.py``)."""
    monkeypatch.setitem(clips.CLIPS, "fox_survey", FOX)
    planted = mocap.planted("fox_survey", ground)
    figures = planted["figures"]
    assert figures["contact_frames"] > 0 and figures["points_without_ground"] == 0, figures
    assert not mocap.over(figures, mocap.limits("fox_survey")), mocap.over(figures, mocap.limits("fox_survey"))
    assert not {**planted["bake"].problems, **planted["bake"].warnings}


def test_the_overlay_draws_footprints_as_long_as_the_mesh_sole(lik):
    """CesiumMan's footprints in the viewport overlay span its mesh's sole (the lowest 2 cm of the vertices its
    foot and toe bones carry, at rest), not its bones' (10 to 13 cm long where the sole spans 26)."""
    rig, frames, ground = clips.stage("cesium_man", "flat")
    mesh = bpy.data.objects["Cesium_Man"]
    groups = {g.index for g in mesh.vertex_groups if g.name in {"leg_joint_L_3", "leg_joint_L_5"}}
    carried = np.array(
        [
            mesh.matrix_world @ v.co
            for v in mesh.data.vertices
            if sum(g.weight for g in v.groups if g.group in groups) >= 0.5
        ]
    )
    sole = carried[carried[:, 2] <= carried[:, 2].min() + 0.02, :2]
    length = np.linalg.norm(sole[:, None] - sole[None], axis=-1).max()
    lik.api.detect_limbs(rig)
    lik.api.plant(rig, ground)
    footing = lik.rig.planting.overlay.footing(rig, bpy.context.evaluated_depsgraph_get())
    left = next(f for f in footing if f.limb == "leg.L")
    assert left.footprints
    for outline in left.footprints:
        span = np.linalg.norm(outline[:, None, :2] - outline[None, :, :2], axis=-1).max()
        assert 0.75 * length <= span <= 1.5 * length, (span, length)


@pytest.mark.parametrize(
    "change,words",
    [
        (lambda bone, pose_bone: setattr(pose_bone, "lock_location", (True, False, False)), "which is locked"),
        (lambda bone, pose_bone: setattr(bone, "use_local_location", False), "which is not local"),
    ],
)
def test_a_toe_outside_the_chain_that_cannot_be_moved_is_refused(lik, change, words):
    """Leela's toe hangs from no bone of its leg, so the solve moves it by its location: one whose location cannot
    be written is refused in a sentence naming it and what to do, and the scene is left as it was."""
    rig, _, ground = clips.stage("leela", "flat")
    lik.api.detect_limbs(rig)
    change(rig.data.bones["Foot.L"], rig.pose.bones["Foot.L"])
    with rigs.unchanged(rig), pytest.raises(lik.api.LimbIKError, match=words) as error:
        lik.api.plant(rig, ground)
    assert "toe bone 'Foot.L' hangs from no bone of the chain" in str(error.value)
