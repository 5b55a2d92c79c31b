# SPDX-License-Identifier: GPL-3.0-or-later
"""Limbs held in a plane on real Blender: a side-on character live and baked with goals animated off its
plane, a 2D cut-out rig found flat by Detect Limbs and solved in its plane, the API and the command line."""

import importlib
import json
import math

import bpy
import numpy as np
import pytest
import rigs
import source_extension
from mathutils import Euler, Matrix, Vector

from demo import side_on

#: Joints stay in the plane, and tips reach the goal's projection, to this fraction of the limb's length:
#: Blender's pose matrices are single precision.
FLAT = 1e-5
#: The armature's place in the world: turned, moved and scaled, so goals really are converted.
PLACE = Matrix.LocRotScale(Vector((0.4, -0.3, 0.1)), Euler((0.0, 0.0, math.radians(30.0))), Vector((1.5,) * 3))
FRAMES = side_on.FRAMES


def joints(obj, limb) -> np.ndarray:
    """The limb's evaluated joints, first head to last tail, in the armature's space."""
    bones = rigs.evaluated(obj).pose.bones
    names = [limb.upper_bone, limb.lower_bone, limb.end_bone]
    return np.array([bones[n].head for n in names] + [bones[names[-1]].tail])


def goal(obj, limb) -> np.ndarray:
    """The limb's target in the armature's space."""
    world = np.array(rigs.evaluated(limb.target).matrix_world.translation)
    return (np.linalg.inv(np.array(obj.matrix_world)) @ np.append(world, 1.0))[:3]


def length(points: np.ndarray) -> float:
    return float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())


def check_in_plane(obj, limb, normal=(0.0, 1.0, 0.0)) -> float:
    """Every joint in the plane through the first with ``normal`` (armature space), the tip on the goal's
    projection into it; returns how far (armature units) the goal lay off the plane."""
    points, normal = joints(obj, limb), np.asarray(normal)
    size = length(points)
    heights = (points - points[0]) @ normal
    assert np.abs(heights).max() <= FLAT * size, (limb.name, heights)
    lift = (goal(obj, limb) - points[0]) @ normal
    assert np.linalg.norm(points[-1] - (goal(obj, limb) - lift * normal)) <= FLAT * size, limb.name
    return float(abs(lift))


def bend(obj, limb, normal=(0.0, 1.0, 0.0)) -> float:
    """How the knee bends about the plane's normal: (knee - hip) x (ankle - knee), along it."""
    points = joints(obj, limb)
    return float(np.cross(points[1] - points[0], points[2] - points[1]) @ np.asarray(normal))


def test_a_side_on_rig_stays_in_its_plane_live_and_baked(lik):
    """Goals animated off the legs' plane: live, every frame has the knees and feet in it, bending forward as
    at rest, the feet on the goals' projections; baked, the keys play back the same, and the bake says on
    how many frames each goal lay off the plane, and how far. Without a plane the same goals pull the
    knees out of it."""
    rig = side_on.rig(place=PLACE)
    side_on.keyed_targets(rig)
    limbs, scene = rig.limb_ik.limbs, bpy.context.scene
    rest_bends = {limb.name: bend(rig, limb) for limb in limbs}
    assert all(b > 0.0 for b in rest_bends.values())

    rig.limb_ik.live = True
    live = {}
    for frame in FRAMES:
        scene.frame_set(frame)
        for limb in limbs:
            lift = check_in_plane(rig, limb)
            assert lift == pytest.approx(abs(side_on.offset(frame)[1]), abs=1e-6)
            assert bend(rig, limb) > 0.0
            assert limb.status == ""
        live[frame] = rigs.pose_snapshot(rig)

    report = lik.api.bake(rig, frame_start=FRAMES[0], frame_end=FRAMES[-1])
    assert not rig.limb_ik.live
    off = [f for f in FRAMES if abs(side_on.offset(f)[1]) > 1e-5]
    for limb in limbs:
        frames, farthest = report.off_plane[limb.name]
        assert frames == len(off)
        assert farthest == pytest.approx(1.5 * max(abs(side_on.offset(f)[1]) for f in off), rel=1e-5)  # world units
    for frame in FRAMES:
        scene.frame_set(frame)
        for limb in limbs:
            check_in_plane(rig, limb)
        np.testing.assert_allclose(rigs.pose_snapshot(rig), live[frame], atol=1e-5)

    for limb in limbs:
        limb.plane = "NONE"
    scene.frame_set(FRAMES[-1])
    assert lik.api.solve(rig).off_plane == {}
    for limb in limbs:
        points = joints(rig, limb)
        assert np.abs(points[1:, 1] - points[0, 1]).max() > 0.01  # the knee or the foot left the plane


def test_solve_reports_how_far_goals_lay_off_the_plane(lik, capfd):
    rig = side_on.rig(place=PLACE)
    limbs = rig.limb_ik.limbs
    to_world = np.array(rig.matrix_world)[:3, :3]
    rigs.target_at_tip(rig, limbs["leg.L"], to_world @ np.array([0.05, 0.2, 0.1]))
    rigs.target_at_tip(rig, limbs["leg.R"], to_world @ np.array([-0.05, 0.0, 0.1]))
    report = lik.api.solve(rig)
    assert report.off_plane.keys() == {"leg.L"}
    assert report.off_plane["leg.L"] == pytest.approx(0.3, rel=1e-5)  # 0.2 armature units, scaled 1.5
    assert check_in_plane(rig, limbs["leg.L"]) == pytest.approx(0.2, abs=1e-6)
    check_in_plane(rig, limbs["leg.R"])
    assert report.unreached == []
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    assert "Solved 2 limbs; goals off their planes: leg.L (30 cm)" in capfd.readouterr().out


def test_a_custom_plane_holds_the_limb_and_needs_a_normal():
    rig = side_on.rig(place=PLACE)
    limb = rig.limb_ik.limbs["leg.L"]
    normal = np.array([0.0, 1.0, 0.5]) / np.linalg.norm([0.0, 1.0, 0.5])
    limb.plane, limb.plane_normal = "CUSTOM", (0.0, 2.0, 1.0)  # any length
    rigs.target_at_tip(rig, limb, (0.1, 0.2, 0.1))
    assert bpy.ops.limb_ik.solve() == {"FINISHED"}
    check_in_plane(rig, limb, normal)

    limb.plane_normal = (0.0, 0.0, 0.0)
    with rigs.unchanged(rig), pytest.raises(RuntimeError, match="leg.L': its Custom plane has no normal"):
        bpy.ops.limb_ik.solve()


# A 2D cut-out rig


def cut_out_rig(animated: str = "in the plane") -> bpy.types.Object:
    """A 2D cut-out character drawn in Blender's front view: every bone in the armature's XZ plane, none
    connected (each joint a little off its parent's tail, in the plane), rolled to turn in the plane about
    its Z axis, Euler XYZ; knees bent forward (+X),
    elbows back. ``animated``: its limbs keyed turning about Y ("in the plane"), one of them also about X
    ("off the plane"), or not at all ("")."""
    obj, bones = rigs.edit_armature("CutOut")
    torso = bones.new("torso")
    torso.head, torso.tail = (0.0, 0.0, 1.0), (0.0, 0.0, 1.5)
    chains = {
        "leg": (("thigh", "shin", "foot"), [(0.0, 0.95), (0.06, 0.52), (0.01, 0.09), (0.15, 0.03)], 0.02),
        "arm": (("upper_arm", "forearm", "hand"), [(0.0, 1.45), (-0.05, 1.18), (0.02, 0.93), (0.05, 0.83)], 0.01),
    }
    for side, shift in (("L", 0.03), ("R", -0.03)):
        for names, points, gap in chains.values():
            parent = torso
            for index, name in enumerate(names):
                bone = bones.new(f"{name}.{side}")
                (hx, hz), (tx, tz) = points[index], points[index + 1]
                bone.head = (hx + shift + (gap if index else 0.0), 0.0, hz)
                bone.tail = (tx + shift, 0.0, tz)
                bone.parent, bone.use_connect = parent, False
                bone.align_roll((0.0, -1.0, 0.0))  # local Z along the plane's normal: a turn in it is Euler Z alone
                parent = bone
    bpy.ops.object.mode_set(mode="POSE")
    for bone in obj.pose.bones:
        bone.rotation_mode = "XYZ"
    bpy.context.scene.frame_end = 20
    if animated:
        for frame, angle in ((1, 0.0), (10, 0.3), (20, -0.2)):
            for bone in obj.pose.bones:
                if bone.name == "torso":
                    continue
                turn = Matrix.Rotation(angle, 3, "Y")
                if animated == "off the plane" and bone.name == "shin.R" and frame == 10:
                    turn = Matrix.Rotation(0.3, 3, "X") @ turn
                rest = bone.bone.matrix_local.to_3x3()
                bone.rotation_euler = (rest.transposed() @ turn @ rest).to_euler("XYZ")
                bone.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_set(1)
    return obj


def test_a_cut_out_rig_is_found_flat_and_solved_in_its_plane(lik):
    """Detect Limbs finds the four limbs by name and holds them in the side plane, since all their bones lie
    in it at rest and as animated. Targets pulled off the plane: every joint stays in it, the gaps between
    unconnected bones stay, and only the Euler channels change."""
    rig = cut_out_rig()
    assert lik.api.detect_limbs(rig, with_targets=True) == dict.fromkeys(("leg.L", "leg.R", "arm.L", "arm.R"), "name")
    limbs = rig.limb_ik.limbs
    assert [limb.plane for limb in limbs] == ["SIDE"] * 4
    before, quaternions = rigs.segments(rig), rigs.channels(rig)[: 4 * len(rig.pose.bones)]
    for number, limb in enumerate(limbs):
        limb.target.location += Vector((0.03 * number - 0.05, 0.1 + 0.05 * number, 0.06))
    report = lik.api.solve(rig)
    assert sorted(report.off_plane) == sorted(limb.name for limb in limbs)
    for limb in limbs:
        assert check_in_plane(rig, limb) > 0.09
    np.testing.assert_allclose(rigs.segments(rig), before, atol=1e-5)
    np.testing.assert_array_equal(rigs.channels(rig)[: 4 * len(rig.pose.bones)], quaternions)
    assert rig.pose.bones["shin.L"].rotation_euler[:] != (0.0, 0.0, 0.0)


@pytest.mark.parametrize("animated", ["off the plane", ""])
def test_detect_leaves_the_plane_off_unless_the_limbs_lie_in_one(animated):
    """A cut-out rig one of whose bones leaves the plane in its animation, the human metarig, and one leg
    alone (it always lies in some plane) keep Plane at None. The cut-out rig is found flat unanimated too."""
    rig = cut_out_rig(animated)
    assert bpy.ops.limb_ik.detect_limbs() == {"FINISHED"}
    expected = "NONE" if animated else "SIDE"
    assert [limb.plane for limb in rig.limb_ik.limbs] == [expected] * 4
    bpy.ops.object.mode_set(mode="OBJECT")
    for build in (rigs.human_metarig, rigs.leg_armature):
        other = build()
        assert bpy.ops.limb_ik.detect_limbs() == {"FINISHED"}
        assert {limb.plane for limb in other.limb_ik.limbs} == {"NONE"}
        bpy.ops.object.mode_set(mode="OBJECT")


# The command line


def test_the_command_line_bakes_a_rig_in_its_plane(tmp_path):
    """``limb_ik bake`` on a saved side-on rig: the keys it writes hold the legs in their plane, and its report
    says how far the goals lay off it."""
    rig = side_on.rig(place=PLACE)
    side_on.keyed_targets(rig)
    path, output, report = tmp_path / "runner.blend", tmp_path / "out", tmp_path / "report.json"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    cli = importlib.import_module(source_extension.MODULE).cli
    frames = f"{FRAMES[0]}:{FRAMES[-1]}"
    assert cli.main(["bake", str(path), "--frames", frames, "--output-dir", str(output), "--json", str(report)]) == 0
    (armature,) = json.loads(report.read_text())["files"][0]["armatures"]
    off = [f for f in FRAMES if abs(side_on.offset(f)[1]) > 1e-5]
    assert {name: entry["frames"] for name, entry in armature["off_plane"].items()} == dict.fromkeys(
        ("leg.L", "leg.R"), len(off)
    )
    bpy.ops.wm.open_mainfile(filepath=str(output / path.name))
    rig = bpy.data.objects["Runner"]
    assert not rig.limb_ik.live
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        for limb in rig.limb_ik.limbs:
            check_in_plane(rig, limb)


def test_the_readme_picture(tmp_path):
    """demo/side_on.py draws the README's picture small, from legs that leave their planes without one and
    stay in them with Plane = Side."""
    path = tmp_path / "plane.png"
    away = side_on.picture(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size < 100_000
    assert away["NONE"] > 0.05 and away["SIDE"] <= FLAT
