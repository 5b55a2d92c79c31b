# SPDX-License-Identifier: GPL-3.0-or-later
"""Replacing a range of keys: spliced in place on a long curve, or the whole curve rewritten, the same keys."""

import bpy
import numpy as np
import pytest
from test_bake import all_fcurves, key_table

PATH = "location"


def keyed_empty(keys: np.ndarray, extrapolation: str = "CONSTANT") -> bpy.types.Object:
    """An Empty whose X location holds ``keys`` (frame, value) pairs, with a mix of handle types and
    interpolations, as Blender's own keying leaves them."""
    obj = bpy.data.objects.new("Keyed", None)
    bpy.context.scene.collection.objects.link(obj)
    obj.keyframe_insert(PATH, index=0, frame=float(keys[0, 0]))
    curve = all_fcurves(obj)[0]
    points = curve.keyframe_points
    points.add(len(keys) - 1)
    points.foreach_set("co", keys.astype(np.float32).ravel())
    kinds = np.arange(len(keys))
    types = bpy.types.Keyframe.bl_rna.properties["handle_left_type"].enum_items
    handle = np.array([types[name].value for name in ("AUTO_CLAMPED", "AUTO", "VECTOR", "ALIGNED", "FREE")])
    for name in ("handle_left_type", "handle_right_type"):
        points.foreach_set(name, handle[kinds % 5].astype(np.int32))
    ipo = bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items
    interpolation = np.where(kinds % 7 == 3, ipo["LINEAR"].value, ipo["BEZIER"].value)
    points.foreach_set("interpolation", interpolation.astype(np.int32))
    curve.extrapolation = extrapolation
    curve.update()
    return obj


def replace(lik, obj, frames, spliced: bool, monkeypatch):
    """Replace the range of ``frames`` on the curve, forcing the splice or the whole rewrite; the edit."""
    monkeypatch.setattr(lik.rig.keys.splice, "cheaper", lambda *args: spliced)
    edit = lik.rig.keys.actions.ActionEdit(obj)
    curve = edit.fcurve(PATH, 0, "Object Transforms")
    values = np.cos(np.asarray(frames, dtype=np.float64) / 3.0)
    edit.replace_range(curve, np.asarray(frames, dtype=np.float64), values, frames[0], frames[-1])
    monkeypatch.undo()
    return edit


CASES = {
    "every frame, same count": (np.arange(0.0, 400.0), range(100, 110)),
    "every third frame: keys added": (np.arange(0.0, 400.0, 3.0), range(100, 120)),
    "half frames: keys removed": (np.arange(0.0, 400.0, 0.5), range(100, 110)),
    "range at the start": (np.arange(10.0, 400.0), range(0, 15)),
    "range at the end": (np.arange(0.0, 400.0), range(390, 420)),
    "range between keys": (np.array([0.0, 50.0, 60.0, 100.0]), range(52, 58)),
}


@pytest.mark.parametrize("extrapolation", ["CONSTANT", "LINEAR"])
@pytest.mark.parametrize("case", CASES)
def test_splicing_writes_the_keys_a_whole_rewrite_writes(lik, monkeypatch, case, extrapolation):
    frames_of, baked = CASES[case]
    keys = np.column_stack([frames_of, np.sin(frames_of / 7.0)])
    results = []
    for spliced in (True, False):
        bpy.ops.wm.read_homefile(app_template="")
        obj = keyed_empty(keys, extrapolation)
        before = key_table(lik, obj)
        edit = replace(lik, obj, list(baked), spliced, monkeypatch)
        results.append(key_table(lik, obj))
        edit.rollback()
        after = key_table(lik, obj)
        for name, array in before[(PATH, 0)].items():
            assert np.array_equal(array, after[(PATH, 0)][name]), (spliced, name)
    spliced, whole = (r[(PATH, 0)] for r in results)
    new = np.isin(whole["co"][:, 0], np.asarray(baked, dtype=np.float32))
    for name, array in whole.items():
        assert np.array_equal(array[~new], spliced[name][~new]), name
        if name.startswith("handle_") and not name.endswith("_type"):  # the smoothing reaches a little further
            assert np.abs(array[new] - spliced[name][new]).max() <= 1e-6, name
        else:
            assert np.array_equal(array[new], spliced[name][new]), name
    baked_frames = set(float(f) for f in baked)
    assert baked_frames <= set(spliced["co"][:, 0].tolist())


def test_a_short_range_on_a_long_curve_is_spliced(lik):
    """With 100,000 keys, replacing ten reads and writes only those: the whole curve is not read."""
    frames_of = np.arange(0.0, 100_000.0)
    obj = keyed_empty(np.column_stack([frames_of, np.sin(frames_of / 7.0)]))
    points = all_fcurves(obj)[0].keyframe_points
    first, stop = lik.rig.keys.splice.bounds(points, 500.0 - 1e-3, 509.0 + 1e-3)
    assert (first, stop) == (500, 510)
    assert lik.rig.keys.splice.cheaper(all_fcurves(obj)[0], points, first, stop, 10)
    assert not lik.rig.keys.splice.cheaper(all_fcurves(obj)[0], points, 0, 99_000, 99_000)


@pytest.mark.parametrize("spliced", [True, False])
@pytest.mark.parametrize("baked", [range(190, 211), range(0, 15), range(390, 420)])
def test_new_keys_interpolate_as_the_keys_they_replace(lik, monkeypatch, spliced, baked):
    """A blocking pass (constant keys every 4 frames from frame 8, linear from frame 200, its last key at 396 Bézier,
    which Blender never uses) keyed on every frame of a range: each new key takes the interpolation of the key in
    effect at its frame (the last at or before it, else the first; past the curve's end, the last segment's), by
    either way of writing; the keys outside the range keep theirs."""
    frames_of = np.arange(8.0, 400.0, 4.0)
    obj = keyed_empty(np.column_stack([frames_of, np.sin(frames_of / 7.0)]))
    points = all_fcurves(obj)[0].keyframe_points
    ipo = bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items
    held = np.where(frames_of < 200.0, ipo["CONSTANT"].value, ipo["LINEAR"].value).astype(np.int32)
    held[-1] = ipo["BEZIER"].value
    points.foreach_set("interpolation", held)
    replace(lik, obj, list(baked), spliced, monkeypatch)
    table = key_table(lik, obj)[(PATH, 0)]
    frames, interpolation = table["co"][:, 0], table["interpolation"]
    new = (frames >= baked[0] - 1e-3) & (frames <= baked[-1] + 1e-3)
    assert sorted(frames[new].tolist()) == [float(f) for f in baked]
    expected = np.where(frames < 200.0, ipo["CONSTANT"].value, ipo["LINEAR"].value)
    if not new[-1]:  # the last key kept: its own
        expected[-1] = ipo["BEZIER"].value
    assert np.array_equal(interpolation, expected), (
        frames[interpolation != expected],
        interpolation[interpolation != expected],
    )
