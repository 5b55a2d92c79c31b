# SPDX-License-Identifier: GPL-3.0-or-later
"""No silent wrong answers, as a bounded property over rig set-ups on real Blender.

Each example builds a leg: random bone rolls, connected or not, every rotation mode and way of inheriting
scale, a start pose
away from rest, uniform, uneven or negative scales on the armature, the hips and the limb's own
bones, sometimes disabled in viewports or a library override; then solves or bakes it toward a
target near its tip. The limb must reach its goal in Blender's own evaluated pose, or be reported
unreached, or be refused with a sentence; never reported reached while off.
"""

import itertools
import math
import re

import bpy
import numpy as np
import rigs
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mathutils import Euler, Matrix, Vector

#: A reached goal is this close, relative to the limb's length.
REACHED = 1e-5
EXAMPLES = settings(
    max_examples=250,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
MODES = ("QUATERNION", "AXIS_ANGLE", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
INHERIT_SCALE = ("FULL", "FIX_SHEAR", "ALIGNED", "AVERAGE", "NONE", "NONE_LEGACY")
_files = itertools.count()


def scales():
    """A scale: uniform, uneven across the axes, or mirrored on one axis."""
    size = st.floats(0.6, 1.6)
    return st.one_of(
        st.just((1.0, 1.0, 1.0)),
        size.map(lambda s: (s, s, s)),
        st.tuples(size, size, size),
        st.tuples(size, st.integers(0, 2)).map(lambda p: tuple(-p[0] if i == p[1] else p[0] for i in range(3))),
    )


set_ups = st.fixed_dictionaries(
    {
        "bones": st.sampled_from(["thigh.L shin.L", "thigh.L shin.L foot.L"]),
        "rolls": st.tuples(*[st.floats(-math.pi, math.pi)] * 3),
        "connected": st.booleans(),
        "modes": st.tuples(*[st.sampled_from(MODES)] * 3),
        "inherit_scale": st.tuples(*[st.sampled_from(("FULL",) * 24 + INHERIT_SCALE)] * 3),  # thigh, shin, foot
        "pose": st.tuples(*[st.tuples(*[st.floats(-0.4, 0.4)] * 3)] * 3),
        "armature": scales(),
        "hips": scales(),
        "own": st.tuples(scales(), scales(), scales()),
        "offset": st.tuples(*[st.floats(-0.1, 0.1)] * 3),
        "closer": st.floats(0.0, 0.3),  # a fraction of the way from the tip to the hip
        "turn": st.tuples(*[st.floats(-0.5, 0.5)] * 3),
        "entry": st.sampled_from(["solve", "bake"]),
        "hidden": st.tuples(st.booleans(), st.booleans()).map(all),  # one in four, as hypothesis draws
        "override": st.booleans(),
    }
)


def build(lik, folder, s) -> bpy.types.Object:
    """The leg of set-up ``s`` with its limb, in Object Mode; a library override when asked."""
    bpy.ops.wm.read_homefile(app_template="")
    rig = rigs.leg_armature(rolls=s["rolls"], connected=s["connected"], modes=s["modes"])
    bpy.ops.object.mode_set(mode="OBJECT")
    for name, inherit in zip(("thigh.L", "shin.L", "foot.L"), s["inherit_scale"]):
        rig.data.bones[name].inherit_scale = inherit
    lik.api.add_limb(rig, s["bones"].split())
    if s["override"]:
        library = folder / f"library{next(_files)}.blend"
        rigs.save_library(library, rig)
        bpy.ops.wm.read_homefile(app_template="")
        rig = rigs.library_override(library)
    rig.scale = s["armature"]
    rig.pose.bones["hips"].scale = s["hips"]
    for name, scale, turn in zip(("thigh.L", "shin.L", "foot.L"), s["own"], s["pose"]):
        bone = rig.pose.bones[name]
        bone.scale = scale
        rigs.set_rotation(bone, Euler(turn).to_quaternion())
    bpy.context.view_layer.update()
    return rig


def place_target(rig, limb, s) -> bpy.types.Object:
    """A target at the limb's tip moved by the set-up's offset and brought closer to the hip, turned from the end
    bone's nearest rotation; for a bake it moves on by the offset again over frames 1 to 3."""
    tip = Vector(rigs.world_tip(rig, rigs.tip_bone(limb)))
    hip = Vector(rigs.world_matrix(rig, limb.upper_bone)[:3, 3])
    turn = Matrix(rigs.world_matrix(rig, rigs.tip_bone(limb))).to_quaternion() @ Euler(s["turn"]).to_quaternion()
    target = rigs.empty("Target")
    target.matrix_world = Matrix.LocRotScale(tip.lerp(hip, s["closer"]) + Vector(s["offset"]), turn, None)
    limb.target = target
    if s["entry"] == "bake":
        for frame in (1, 3):
            target.keyframe_insert("location", frame=frame)
            target.location += Vector(s["offset"])
    return target


def miss(rig, limb) -> float:
    """The tip's distance from the target in Blender's evaluated pose, relative to the limb's length."""
    return rigs.goal_error(rig, limb) / rigs.limb_length(rig, limb)


@EXAMPLES
@given(set_ups)
def test_a_limb_reported_reached_is_on_its_goal_in_blenders_evaluated_pose(lik, tmp_path, s):
    event("a library override" if s["override"] else "a local rig")
    rig = build(lik, tmp_path, s)
    limb = rig.limb_ik.limbs["leg.L"]
    place_target(rig, limb, s)
    rig.hide_viewport = s["hidden"]
    try:
        if s["entry"] == "solve":
            report = lik.api.solve(rig)
        else:
            report = lik.api.bake(rig, frame_start=1, frame_end=3)
    except lik.api.LimbIKError as error:
        # Refused with a sentence, for a cause the set-up has: a rig Blender does not evaluate, or a limb bone
        # not inheriting the uneven scale of the one above it fully (the thigh: the hips' scale, as Aligned).
        message = str(error)
        hidden = message.startswith("Armature 'Leg' is disabled in viewports")
        partial = re.match(
            r"Limb 'leg\.L': bone '(thigh|shin|foot)\.L' inherits scale as '[A-Za-z ]+', not Full", message
        )
        assert (hidden and s["hidden"]) or (partial and set(s["inherit_scale"]) != {"FULL"}), message
        event("refused: not evaluated" if hidden else "refused: scale inherited in part")
        return
    assert not s["hidden"], "a rig Blender does not evaluate was solved"
    if s["entry"] == "solve":
        event("solve: unreached" if "leg.L" in report.unreached else "solve: reached")
        assert "leg.L" in report.unreached or miss(rig, limb) <= REACHED
        return
    off = 0
    for frame in (1, 2, 3):
        bpy.context.scene.frame_set(frame)
        off += miss(rig, limb) > REACHED
    event(f"bake: {report.unreached.get('leg.L', 0)} of 3 frames unreached")
    assert off <= report.unreached.get("leg.L", 0)
    assert np.isfinite(rigs.pose_snapshot(rig)).all()
