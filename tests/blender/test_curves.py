# SPDX-License-Identifier: GPL-3.0-or-later
"""F-curves evaluated in bulk against Blender's own ``FCurve.evaluate``, on random curves."""

import bpy
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PLAIN = ("CONSTANT", "LINEAR", "BEZIER")
EASED = ("SINE", "BACK", "ELASTIC", "BOUNCE")
HANDLES = ("AUTO_CLAMPED", "AUTO", "VECTOR", "ALIGNED", "FREE")
CYCLES = ("NONE", "REPEAT", "REPEAT_OFFSET", "MIRROR")

key = st.fixed_dictionaries(
    {
        "value": st.floats(-3.0, 3.0),
        "interpolation": st.sampled_from(PLAIN),
        "handle": st.sampled_from(HANDLES),
        "free": st.tuples(st.floats(0.0, 8.0), st.floats(-3.0, 3.0), st.floats(0.0, 8.0), st.floats(-3.0, 3.0)),
    }
)
curve = st.fixed_dictionaries(
    {
        "frames": st.lists(st.integers(-40, 60), min_size=1, max_size=8, unique=True).map(sorted),
        "subframe": st.booleans(),
        "keys": st.lists(key, min_size=8, max_size=8),
        "extrapolation": st.sampled_from(("CONSTANT", "LINEAR")),
        "cycles": st.none()
        | st.tuples(st.sampled_from(CYCLES), st.integers(0, 2), st.sampled_from(CYCLES), st.integers(0, 2)),
    }
)


def made(spec: dict, eased: str | None = None) -> bpy.types.FCurve:
    """An F-curve (of an Empty's custom property) as ``spec`` says; its first key ``eased`` if given."""
    obj = bpy.data.objects.new("Curve", None)
    bpy.context.scene.collection.objects.link(obj)
    obj["value"] = 0.0
    obj.keyframe_insert('["value"]', frame=0)
    fcurve = _channelbag(obj).fcurves[0]
    points = fcurve.keyframe_points
    points.clear()
    for frame, k in zip(spec["frames"], spec["keys"]):
        point = points.insert(frame + (0.37 if spec["subframe"] else 0.0), k["value"])
        point.interpolation = eased or k["interpolation"]
        point.handle_left_type = point.handle_right_type = k["handle"]
    fcurve.extrapolation = spec["extrapolation"]
    fcurve.update()
    for point, k in zip(points, spec["keys"]):
        if k["handle"] == "FREE":
            x, y = point.co
            point.handle_left, point.handle_right = (
                (x - k["free"][0], y + k["free"][1]),
                (x + k["free"][2], y + k["free"][3]),
            )
    if spec["cycles"] is not None:
        modifier = fcurve.modifiers.new("CYCLES")
        modifier.mode_before, modifier.cycles_before, modifier.mode_after, modifier.cycles_after = spec["cycles"]
    return fcurve


def _channelbag(obj):
    from bpy_extras import anim_utils

    return anim_utils.action_get_channelbag_for_slot(obj.animation_data.action, obj.animation_data.action_slot)


def scale(fcurve, values) -> float:
    """How large the curve's numbers and the ``values`` it takes are (extrapolated far, they grow):
    Blender's single precision errs in proportion."""
    keys = max(abs(v) for p in fcurve.keyframe_points for v in (*p.co, *p.handle_left, *p.handle_right))
    return 1.0 + max(keys, float(np.abs(values).max()))


TIMES = np.concatenate([np.arange(-120.0, 140.0), np.linspace(-120.0, 140.0, 97) + 0.013])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=curve)
def test_numpy_evaluation_is_blenders(lik, spec):
    bpy.ops.wm.read_homefile(app_template="")
    fcurve = made(spec)
    keys = lik.rig.frames.curves.Keys([fcurve])
    assert keys.covered.all()
    ours = keys.evaluate(TIMES)[0]
    blender = np.array([fcurve.evaluate(t) for t in TIMES])
    np.testing.assert_allclose(ours, blender, rtol=0.0, atol=1e-5 * scale(fcurve, blender))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=curve, eased=st.sampled_from(EASED))
def test_curves_numpy_does_not_cover_are_evaluated_by_blender(lik, spec, eased):
    bpy.ops.wm.read_homefile(app_template="")
    fcurve = made(spec, eased if len(spec["frames"]) > 1 else None)
    covered = lik.rig.frames.curves.Keys([fcurve]).covered[0]
    assert covered == (len(spec["frames"]) == 1)  # a lone key's interpolation is never used
    values = lik.rig.frames.curves.evaluate([fcurve], TIMES)[0]
    blender = np.array([fcurve.evaluate(t) for t in TIMES])
    np.testing.assert_allclose(values, blender, rtol=0.0, atol=1e-5 * scale(fcurve, blender))
