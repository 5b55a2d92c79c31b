# SPDX-License-Identifier: GPL-3.0-or-later
"""Object and bone matrices from channels (:mod:`solvers.posing`) against a model written bone by bone from
Blender's rules: ``pose = parent_pose @ parent_rest^-1 @ rest @ T(location) @ R @ S``, a connected bone's
location ignored, a bone without Local Location moved along its parent's posed axes."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import quaternion_matrix
from test_local_rotation import random_quaternion

from solvers import SolverError
from solvers.posing import bone_locals, compose, down_tree, rotation_matrices
from solvers.rotation_modes import EULER_ORDERS, euler_to_quat, quat_to_matrix

SEEDS = st.integers(0, 2**32 - 1)


def random_tree(rng, count: int) -> np.ndarray:
    """Parents of ``count`` nodes given in any order: each node's parent, or -1 for a root."""
    order = rng.permutation(count)
    parents = np.full(count, -1)
    for position, node in enumerate(order[1:], 1):
        if rng.random() < 0.8:
            parents[node] = order[rng.integers(0, position)]
    return parents


def rigid(rng) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = quaternion_matrix(random_quaternion(rng)), rng.normal(size=3)
    return m


def model(parents, rest, connected, local_location, location, rotation, scale) -> np.ndarray:
    """(F, B, 4, 4) pose matrices bone by bone, parents first, in Blender's terms."""
    frames, count = location.shape[:2]
    pose = np.full((frames, count, 4, 4), np.nan)
    done: set[int] = set()
    while len(done) < count:
        for b in range(count):
            parent = parents[b]
            if b in done or (parent >= 0 and parent not in done):
                continue
            for f in range(frames):
                loc = np.zeros(3) if connected[b] else location[f, b]
                turn = np.eye(4)
                turn[:3, :3] = rotation[f, b] @ np.diag(scale[f, b])
                base = rest[b] if parent < 0 else pose[f, parent] @ np.linalg.inv(rest[parent]) @ rest[b]
                if local_location[b]:
                    moved = np.eye(4)
                    moved[:3, 3] = loc
                    pose[f, b] = base @ moved @ turn
                else:  # along the parent's posed axes (a root's: the armature's)
                    axes = np.eye(3) if parent < 0 else pose[f, parent, :3, :3]
                    pose[f, b] = base @ turn
                    pose[f, b, :3, 3] = base[:3, 3] + axes @ loc
            done.add(b)
    return pose


@given(SEEDS, st.integers(1, 9), st.integers(1, 3))
def test_bones_are_posed_as_blender_poses_them(seed, count, frames):
    rng = np.random.default_rng(seed)
    parents = random_tree(rng, count)
    rest = np.array([rigid(rng) for _ in range(count)])
    connected, local_location = rng.random(count) < 0.3, rng.random(count) < 0.7
    location = rng.normal(size=(frames, count, 3))
    rotation = quat_to_matrix(rng.normal(size=(frames * count, 4))).reshape(frames, count, 3, 3)
    scale = rng.uniform(0.3, 2.0, (frames, count, 3)) * rng.choice([-1.0, 1.0], (frames, count, 3))
    expected = model(parents, rest, connected, local_location, location, rotation, scale)
    ours = down_tree(parents, bone_locals(parents, rest, connected, local_location, location, rotation, scale))
    np.testing.assert_allclose(ours, expected, rtol=0.0, atol=1e-9 * (1.0 + np.abs(expected).max()))


@given(SEEDS, st.integers(1, 9))
def test_bones_with_no_channels_set_stand_at_rest(seed, count):
    rng = np.random.default_rng(seed)
    parents = random_tree(rng, count)
    rest = np.array([rigid(rng) for _ in range(count)])
    flags = rng.random((2, count)) < 0.5
    turns = np.broadcast_to(np.eye(3), (1, count, 3, 3))
    pose = down_tree(
        parents, bone_locals(parents, rest, *flags, np.zeros((1, count, 3)), turns, np.ones((1, count, 3)))
    )
    np.testing.assert_allclose(pose[0], rest, rtol=0.0, atol=1e-12)


@given(SEEDS, st.integers(1, 12))
def test_objects_are_their_parents_times_their_own(seed, count):
    rng = np.random.default_rng(seed)
    parents = random_tree(rng, count)
    local = rng.normal(size=(2, count, 4, 4))
    world = down_tree(parents, local)
    for node in range(count):
        chain, up = [], node
        while up >= 0:
            chain.insert(0, up)
            up = parents[up]
        expected = np.stack([np.linalg.multi_dot([np.eye(4), *(local[f, n] for n in chain)]) for f in range(2)])
        np.testing.assert_allclose(world[:, node], expected, rtol=1e-9, atol=1e-9)


def test_a_cycle_of_parents_is_refused():
    with pytest.raises(SolverError, match="tree"):
        down_tree([1, 0], np.zeros((1, 2, 4, 4)))


@given(SEEDS, st.sampled_from((*EULER_ORDERS, "QUATERNION", "AXIS_ANGLE")))
def test_rotation_channels_give_rotations(seed, mode):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(5, 3 if mode in EULER_ORDERS else 4)) * 2.0
    turns = rotation_matrices(values, mode)
    np.testing.assert_allclose(turns @ np.swapaxes(turns, 1, 2), np.broadcast_to(np.eye(3), (5, 3, 3)), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(turns), 1.0, atol=1e-12)
    if mode in EULER_ORDERS:
        np.testing.assert_allclose(turns, quat_to_matrix(euler_to_quat(values, mode)), atol=1e-12)
    elif mode == "QUATERNION":  # a quaternion of any length stands for its rotation
        np.testing.assert_allclose(rotation_matrices(values * 3.7, mode), turns, atol=1e-12)


def test_a_zero_quaternion_is_blenders_half_turn_about_x():
    np.testing.assert_array_equal(rotation_matrices(np.zeros((1, 4)), "QUATERNION")[0], np.diag([1.0, -1.0, -1.0]))


@given(SEEDS)
def test_compose_moves_scales_then_turns_then_moves(seed):
    rng = np.random.default_rng(seed)
    location, scale, point = rng.normal(size=3), rng.uniform(0.1, 3.0, 3), rng.normal(size=3)
    turn = quaternion_matrix(random_quaternion(rng))
    matrix = compose(location, turn, scale)
    np.testing.assert_allclose(matrix @ np.append(point, 1.0), np.append(location + turn @ (scale * point), 1.0))
