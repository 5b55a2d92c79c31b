# SPDX-License-Identifier: GPL-3.0-or-later
"""Random :class:`solvers.chains.ChainBatch` inputs for holding one solve kernel to another: anything the rig
layer hands over, and the degenerate cases.

Chains come from the forward-kinematics model of test_local_rotation (any roll, offsets, a sheared or
mirrored parent, bones scaled evenly, across their axis only, unevenly or by negative factors), with
targets reachable, anywhere, on the root, where the tip is or far out of reach, and every option of the
batch: reach mode, softness, stretch, bend limits, poles (on the root-target line too) with a mask,
hinges (given, zero, off), the end-plane swivel, influence, goal rotations as quaternions or as scaled,
sheared or mirrored matrices, a toe, and planes the chains are held in. Hypothesis draws the structure;
a seeded generator fills in the numbers.
"""

import math
from dataclasses import replace

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from test_local_rotation import random_chain, random_quaternion

from solvers import Reach
from solvers import rotation_modes as rm
from solvers.chains import ChainBatch

#: Each example solves a few chains with two kernels, and one below an uneven scale runs the refinement's
#: searches (up to a second where they never settle): a quarter of the usual examples.
KERNEL_EXAMPLES = settings(max_examples=max(settings().max_examples // 4, 10))


def sizes(batch: ChainBatch) -> np.ndarray:
    """(N,) each chain's length plus its distance from the origin: what tolerances on points are relative to."""
    points = np.asarray(batch.points)
    return np.linalg.norm(np.diff(points, axis=1), axis=2).sum(axis=1) + np.abs(points).max(axis=(1, 2))


def assert_results_agree(a, b, batch: ChainBatch, tolerance) -> None:
    """Two :class:`solvers.chains.ChainResult` of ``batch``: the same rotations (either sign of a quaternion),
    Y scales, joints (relative to each chain's size) and verdicts. ``tolerance``: one, or one per chain."""
    tolerance = np.broadcast_to(tolerance, len(a.reached))
    rotations = np.minimum(np.abs(a.rotations - b.rotations).max(axis=-1), np.abs(a.rotations + b.rotations).max(-1))
    assert (rotations.max(axis=-1) <= tolerance).all(), rotations.max(axis=-1)
    assert (np.abs(a.y_scale - b.y_scale).max(axis=-1) <= tolerance).all()
    points = np.abs(a.points - b.points).max(axis=(1, 2)) / sizes(batch)
    assert (points <= tolerance).all(), points
    assert np.array_equal(a.reached, b.reached)
    assert (np.abs(a.off_plane - b.off_plane) <= tolerance * sizes(batch)).all()


def settings_of(rng, draw, n: int, kind: str, low: float, high: float):
    """A setting shared by every chain (a number) or one per chain (an array)."""
    if draw(st.booleans()):
        return float(rng.uniform(low, high)) if kind == "float" else kind(rng.integers(low, high))
    return rng.uniform(low, high, n) if kind == "float" else rng.integers(low, high, n)


def goal_matrices(rng, quaternions: np.ndarray, kind: str) -> np.ndarray:
    """Goal rotations as matrices, as a target seen from an armature scaled evenly, unevenly or by -1 is."""
    matrices = rm.quat_to_matrix(quaternions)
    if kind == "scaled":
        return matrices * rng.uniform(0.3, 3.0, (len(matrices), 1, 1))
    if kind == "sheared":
        return np.diag(rng.uniform(0.5, 2.0, 3)) @ matrices
    return matrices * np.array([-1.0, 1.0, 1.0]) * rng.uniform(0.5, 2.0, (len(matrices), 1, 1))  # mirrored


@st.composite
def chain_batches(draw, max_rows: int = 4) -> ChainBatch:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = draw(st.sampled_from([2, 3]))
    n = draw(st.integers(1, max_rows))
    toe = k == 3 and draw(st.booleans())
    bones = k + toe
    own_scale = draw(st.sampled_from(["uniform", "uniform", "uniform", "xz", "any"]))
    chains = [random_chain(rng, bones, draw(st.booleans()), own_scale, draw(st.booleans())) for _ in range(n)]
    if draw(st.booleans()):  # a parent scaled by -1 along one axis
        for c in chains:
            c.parent[:3, rng.integers(3)] *= -1.0
    if draw(st.booleans()):  # bones scaled by negative factors
        for c in chains:
            c.scales *= rng.choice([-1.0, 1.0], size=(bones, 3))
    matrices = np.array([c.matrices() for c in chains])
    joints = np.array([c.joints() for c in chains])
    points = joints[:, : k + 1]
    size = np.linalg.norm(np.diff(points, axis=1), axis=2).sum(axis=1)

    where = draw(st.sampled_from(["reachable", "reachable", "anywhere", "root", "tip", "far"]))
    if where == "reachable":
        posed = [replace(c, quats=np.array([random_quaternion(rng) for _ in range(bones)])) for c in chains]
        target = np.array([p.joints()[k] for p in posed])
    elif where == "anywhere":
        target = points[:, 0] + rng.normal(size=(n, 3)) * size[:, None]
    elif where == "root":
        target = points[:, 0].copy()
    elif where == "tip":
        target = points[:, k].copy()
    else:
        target = points[:, 0] + rng.normal(size=(n, 3)) * 10.0 * size[:, None]

    options = {"mode": settings_of(rng, draw, n, Reach, 0, 3)}
    if draw(st.booleans()):
        options["softness"] = settings_of(rng, draw, n, "float", 0.0, 0.2) * float(size.mean())
    if draw(st.booleans()):
        options["max_stretch"] = settings_of(rng, draw, n, "float", 1.0, 2.0)
        options["stretch_start"] = settings_of(rng, draw, n, "float", 0.5, 1.0)
    if draw(st.booleans()):
        options["min_bend"] = settings_of(rng, draw, n, "float", 0.0, 0.5)
        options["max_bend"] = math.pi - settings_of(rng, draw, n, "float", 0.0, 0.5)
    extra = {}
    pole = draw(st.sampled_from([None, "front", "on the line"]))
    if pole is not None:
        knee_side = points[:, 1] + rng.normal(size=(n, 3)) * size[:, None]
        on_line = points[:, 0] + (target - points[:, 0]) * rng.uniform(-1.0, 2.0, (n, 1))
        extra["pole"] = knee_side if pole == "front" else on_line
        extra["pole_mask"] = rng.random(n) < 0.7 if draw(st.booleans()) else True
    hinge = draw(st.sampled_from([None, "given", "some zero", "along the aim"]))
    if hinge is not None:
        axes = rng.normal(size=(n, 3))
        if hinge == "some zero":
            axes[rng.random(n) < 0.5] = 0.0
        elif hinge == "along the aim":  # the first bone's frame maps it onto the root-target line, or near it
            frames = matrices[:, 0, :3, :3]
            axes = np.linalg.solve(frames, (target - points[:, 0])[..., None])[..., 0]
        extra["hinge"] = axes
    extra["use_hinge"] = draw(st.sampled_from([True, False, "mask"]))
    if isinstance(extra["use_hinge"], str):
        extra["use_hinge"] = rng.random(n) < 0.5
    extra["end_plane"] = rng.random(n) < 0.5 if draw(st.booleans()) else draw(st.booleans())
    influence = draw(st.sampled_from([1.0, 0.0, "random"]))
    extra["influence"] = rng.uniform(0.0, 1.0, n) if influence == "random" else influence

    if k == 3:
        goals = np.array([random_quaternion(rng) for _ in range(n)])
        kind = draw(st.sampled_from(["quaternions", "matrices", "scaled", "sheared", "mirrored"]))
        extra["end_rotation"] = goals if kind == "quaternions" else goal_matrices(rng, goals, kind)
    held = draw(st.sampled_from([None, None, "any", "some", "bent"]))
    if held is not None:  # planes through the first joint: any, for some chains only, the one a chain is bent in
        normals = rng.normal(size=(n, 3))
        if held == "bent":
            normals = np.cross(points[:, 1] - points[:, 0], points[:, 2] - points[:, 1])
        elif held == "some":
            normals[rng.random(n) < 0.5] = 0.0
        extra["plane"] = normals
    if toe:
        extra["toe_matrices"], extra["toe_scales"] = matrices[:, 3], np.array([c.scales[3] for c in chains])
        extra["toe_rotations"] = np.array([c.quats[3] for c in chains])
        toe_goals = np.array([random_quaternion(rng) for _ in range(n)])
        extra["toe_goal"] = toe_goals if draw(st.booleans()) else rm.quat_to_matrix(toe_goals)
    return ChainBatch(
        matrices=matrices[:, :k],
        scales=np.array([c.scales[:k] for c in chains]),
        rotations=np.array([c.quats[:k] for c in chains]),
        points=points,
        target=target,
        options=options,
        **extra,
    )
