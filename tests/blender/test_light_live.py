# SPDX-License-Identifier: GPL-3.0-or-later
"""The light path for a character's few limbs: the same plan, gather and write as for crowds, solved by
the scalar kernel, giving the pose the batch kernel gives; the kernel chosen by the number of limbs."""

import bpy
import numpy as np
import pytest
import rigs

#: The two kernels agree on a rig's solve to this (float64, armature units and quaternion components).
SAME = 1e-9


def _human(tmp_path):
    """The human metarig with targets, its limbs set up every way the solve reads: a pole, stretch out
    of reach, influence, the end-plane swivel, a plane."""
    rig = rigs.human_with_targets()
    limbs = rig.limb_ik.limbs
    limbs["leg.R"].reach = "STRETCH"
    rigs.target_at_tip(rig, limbs["leg.R"], (0.0, -0.3, -0.4))
    limbs["arm.L"].influence = 0.6
    limbs["arm.R"].swivel = "END_PLANE"
    limbs["leg.L"].pole = rigs.empty("Knee pole", (0.1, -1.0, 0.5))
    limbs["arm.R"].plane = "FRONT"
    return rig


def _detected(rig, offset, turn):
    """``rig`` with the limbs Detect Limbs finds, each chasing a target moved by ``offset`` and turned by ``turn``."""
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.limb_ik.detect_limbs() == {"FINISHED"}
    for limb in rig.limb_ik.limbs:
        rigs.target_at_tip(rig, limb, offset, turn)
    return rig


def _bvh(tmp_path):
    return _detected(rigs.bvh_rig(tmp_path), (0.03, -0.05, 0.08), (0.1, 0.2, -0.1))


def _gltf(tmp_path):
    return _detected(rigs.gltf_rig(tmp_path), (0.02, -0.04, 0.06), (0.2, -0.1, 0.1))


@pytest.mark.parametrize("make", [_human, _bvh, _gltf], ids=["human metarig", "BVH", "glTF"])
def test_the_light_path_poses_real_rigs_as_the_batch_kernel(lik, tmp_path, monkeypatch, make):
    rig = make(tmp_path)
    assert rig.limb_ik.limbs
    depsgraph = bpy.context.evaluated_depsgraph_get()
    planned = lik.rig.plan.make(rig)
    groups, pose = lik.rig.solve.gather(planned, depsgraph)
    scalar = lik.solvers.scalar_chains
    for group in groups:
        assert len(group.layout.limbs) <= scalar.SCALAR_LIMIT
        light, batch = scalar.solve_by_count(group.batch), lik.solvers.solve_chains(group.batch)
        for name in ("rotations", "y_scale", "points", "off_plane"):
            np.testing.assert_allclose(getattr(light, name), getattr(batch, name), rtol=0.0, atol=SAME, err_msg=name)
        np.testing.assert_array_equal(light.reached, batch.reached)

    # The whole path, as Live runs it: written the same by either kernel (to the channels' float32).
    before = rigs.channels(rig)
    lik.rig.live.frame.solve_live(rig, depsgraph)
    light_pose = rigs.channels(rig)
    assert not np.array_equal(light_pose, before)
    lik.rig.animator.restore(rig)
    np.testing.assert_array_equal(rigs.channels(rig), before)
    monkeypatch.setattr(scalar, "SCALAR_LIMIT", 0)  # every rig to the batch kernel
    lik.rig.live.frame.solve_live(rig, bpy.context.evaluated_depsgraph_get())
    np.testing.assert_allclose(rigs.channels(rig), light_pose, rtol=0.0, atol=1e-6)


@pytest.mark.parametrize("legs", [2, 16, 18])
def test_the_kernel_follows_the_number_of_limbs(lik, monkeypatch, legs):
    chains = [(f"thigh.{n}", f"shin.{n}", f"foot.{n}") for n in range(legs)]
    rig = rigs.named_armature(chains, name="Crowd")
    for chain in chains:
        lik.api.add_limb(rig, list(chain))
    for limb in rig.limb_ik.limbs:
        rigs.target_at_tip(rig, limb, (0.02, -0.05, 0.05))
    scalar = lik.solvers.scalar_chains
    used = []
    for name in ("solve_scalar", "solve_chains"):
        kernel = getattr(scalar, name)
        monkeypatch.setattr(scalar, name, lambda batch, name=name, kernel=kernel: used.append(name) or kernel(batch))
    rig.limb_ik.live = True  # solved at once, then on every frame change
    used.clear()
    bpy.context.scene.frame_set(2)
    assert used == ["solve_scalar" if legs <= scalar.SCALAR_LIMIT else "solve_chains"]
    for limb in rig.limb_ik.limbs:
        assert rigs.goal_error(rig, limb) <= 1e-5, limb.name
