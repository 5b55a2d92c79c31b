# SPDX-License-Identifier: GPL-3.0-or-later
"""Live planting keeps its analysis of the take between frames, and makes it anew when the animated legs at
the frame shown are not those it analysed (the animator edited the take there)."""

import bpy
import numpy as np

from takes import clips


def _planted_walk(lik):
    rig, frames, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    for limb in rig.limb_ik.limbs:
        limb.enabled = limb.plant = "leg" in limb.name
    rig.limb_ik.ground = ground
    rig.limb_ik.live = True
    return rig, frames


def _analysis(lik, rig):
    return lik.rig.planting.legs._cache[rig.session_uid].result


def test_the_analysis_is_kept_while_the_take_is_unchanged(lik):
    rig, frames = _planted_walk(lik)
    scene = bpy.context.scene
    scene.frame_set(frames[10])
    first = _analysis(lik, rig)
    for frame in frames[11:40]:
        scene.frame_set(frame)
    assert _analysis(lik, rig) is first


def test_an_edit_at_the_frame_shown_is_analysed_anew(lik):
    rig, frames = _planted_walk(lik)
    scene = bpy.context.scene
    frame = frames[20]
    scene.frame_set(frame)
    first = _analysis(lik, rig)
    row = frame - first.frames.start
    knees = lik.rig.planting.legs._cache[rig.session_uid].track.knees[row].copy()
    path = 'pose.bones["left_hip"].rotation_euler'
    curve = next(c for c in lik.rig.keys.actions.fcurves(rig) if c.data_path == path and c.array_index == 0)
    curve.keyframe_points.insert(frame, curve.evaluate(frame) + 0.2)
    scene.frame_set(frame)
    assert _analysis(lik, rig) is not first
    edited = lik.rig.planting.legs._cache[rig.session_uid].track.knees[row]
    assert np.abs(edited - knees).max() > 0.01  # the left knee moved with its hip
