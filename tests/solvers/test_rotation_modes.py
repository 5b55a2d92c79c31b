# SPDX-License-Identifier: GPL-3.0-or-later
"""Rotation-mode conversions: Blender's Euler convention for all six orders, round trips,
continuity of Euler and quaternion sequences, axis-angle and slerp."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import finite, quaternion_matrix, rodrigues

from solvers import SolverError
from solvers import rotation_modes as rm

AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
ORDERS = rm.EULER_ORDERS
#: Properties run once per Euler order: a sixth of the usual examples each, the same in all.
PER_ORDER = settings(max_examples=max(settings().max_examples // 6, 10))


def euler_matrix(angles, order: str) -> np.ndarray:
    """Blender's convention, built from axis rotations: 'XYZ' applies X first, so it is Rz @ Ry @ Rx."""
    m = np.eye(3)
    for axis in order:
        m = rodrigues(AXES[axis], angles["XYZ".index(axis)]) @ m
    return m


def close_rotations(a, b, tol=1e-12) -> bool:
    return np.abs(quaternion_matrix(a) - quaternion_matrix(b)).max() <= tol


quaternions = (
    st.tuples(*[finite(-1.0, 1.0)] * 4)
    .filter(lambda q: math.hypot(*q) > 0.1)
    .map(lambda q: np.array(q) / math.hypot(*q))
)
angles = st.tuples(finite(-10.0, 10.0), finite(-10.0, 10.0), finite(-10.0, 10.0))


def test_there_are_six_orders():
    assert sorted(ORDERS) == sorted(["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])


@pytest.mark.parametrize("order", ORDERS)
@PER_ORDER
@given(angles)
def test_euler_to_quaternion_follows_blender(order, e):
    q = rm.euler_to_quat(np.array([e]), order)[0]
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-15)
    assert np.abs(quaternion_matrix(q) - euler_matrix(e, order)).max() <= 1e-13
    assert np.abs(rm.quat_to_matrix(q[None])[0] - euler_matrix(e, order)).max() <= 1e-13


@pytest.mark.parametrize("order", ORDERS)
@PER_ORDER
@given(quaternions)
def test_quaternion_to_euler_and_back_is_the_same_rotation(order, q):
    e = rm.quat_to_euler(q[None], order)[0]
    assert abs(e["XYZ".index(order[1])]) <= math.pi / 2 + 1e-12  # the principal triple
    assert np.abs(euler_matrix(e, order) - quaternion_matrix(q)).max() <= 1e-12
    assert close_rotations(rm.euler_to_quat(e[None], order)[0], q)


@pytest.mark.parametrize("order", ORDERS)
@PER_ORDER
@given(finite(-math.pi, math.pi), finite(-math.pi, math.pi), st.sampled_from([0.0, 1e-15, 1e-12, 1e-8, 1e-4]))
def test_at_and_near_gimbal_lock_the_rotation_is_kept(order, first, last, off):
    """Middle angle within ``off`` of +-90 degrees: first and last are not separately defined, but
    the triple returned is the same rotation to full precision; exactly at the lock, last = 0."""
    for sign in (1.0, -1.0):
        e = [0.0, 0.0, 0.0]
        e["XYZ".index(order[0])], e["XYZ".index(order[2])] = first, last
        e["XYZ".index(order[1])] = sign * (math.pi / 2 - off)
        q = rm.euler_to_quat(np.array([e]), order)[0]
        back = rm.quat_to_euler(q[None], order)[0]
        assert np.abs(euler_matrix(back, order) - quaternion_matrix(q)).max() <= 1e-14
        if off == 0.0:
            assert back["XYZ".index(order[2])] == 0.0


@pytest.mark.parametrize("order", ORDERS)
@PER_ORDER
@given(angles)
def test_euler_round_trip_returns_the_same_angles_near_the_previous_ones(order, e):
    """Whole turns and the equivalent (a + pi, pi - b, c + pi) triple are resolved by the previous key."""
    e = np.array(e)
    assume(abs(math.cos(e["XYZ".index(order[1])])) > 1e-3)  # gimbal lock: no unique triple
    back = rm.quat_to_euler(rm.euler_to_quat(e[None], order), order, previous=e[None])[0]
    assert np.abs(back - e).max() <= 1e-9


@pytest.mark.parametrize("order", ORDERS)
@PER_ORDER
@given(angles, angles, st.integers(2, 60))
def test_a_smooth_turn_gives_continuous_euler_keys(order, start, speed, frames):
    """Rotations sampled along a smooth path convert to keys with no jumps of whole or half turns."""
    start, speed = np.array(start), np.array(speed) * 0.1
    path = start + np.arange(frames)[:, None] * speed
    assume((np.abs(np.cos(path[:, "XYZ".index(order[1])])) > 0.05).all())
    q = rm.euler_to_quat(path, order)
    q *= np.where(np.arange(frames) % 3 == 0, -1.0, 1.0)[:, None]  # sign flips change nothing
    keys = rm.quat_to_euler_sequence(q[:, None], order, previous=start[None])[:, 0]
    assert np.abs(keys - path).max() <= 1e-9


@given(st.lists(quaternions, min_size=2, max_size=20))
def test_quaternion_sequences_are_made_continuous(qs):
    q = np.array(qs)
    out = rm.make_quat_continuous(q)
    assert (np.einsum("ij,ij->i", out[1:], out[:-1]) >= 0.0).all()
    assert np.all(np.abs(np.abs(out) - np.abs(q)) == 0.0)  # only signs changed
    reference = np.roll(q, 1, axis=0)
    near = rm.same_hemisphere(q, reference)
    assert (np.einsum("ij,ij->i", near, reference) >= 0.0).all()
    assert all(close_rotations(a, b) for a, b in zip(near, q))


@given(quaternions)
def test_axis_angle_round_trip(q):
    aa = rm.quat_to_axis_angle(q[None])[0]
    assert np.linalg.norm(aa[1:]) == pytest.approx(1.0, abs=1e-15)
    assert np.abs(rodrigues(aa[1:], aa[0]) - quaternion_matrix(q)).max() <= 1e-12
    assert close_rotations(rm.axis_angle_to_quat(aa[None])[0], q)


def test_axis_angle_of_no_rotation_and_of_a_tiny_axis():
    assert np.array_equal(rm.quat_to_axis_angle(np.array([[1.0, 0.0, 0.0, 0.0]]))[0], [0.0, 0.0, 1.0, 0.0])
    assert np.array_equal(rm.axis_angle_to_quat(np.array([[1.5, 0.0, 0.0, 0.0]]))[0], [1.0, 0.0, 0.0, 0.0])
    # an axis too short to square is still a direction
    q = rm.axis_angle_to_quat(np.array([[1.0, 0.0, 0.0, 1e-170]]))[0]
    assert q == pytest.approx([math.cos(0.5), 0.0, 0.0, math.sin(0.5)], abs=1e-16)


@given(quaternions, quaternions, finite(0.0, 1.0))
def test_slerp_moves_at_constant_speed_along_the_shorter_arc(a, b, t):
    def angle(p, q):
        return 2.0 * math.atan2(np.linalg.norm(p - q), np.linalg.norm(p + q))  # robust, sign-free

    b_near = b if a @ b >= 0.0 else -b
    total = angle(a, b_near)
    out = rm.slerp(a[None], b[None], t)[0]
    assert np.linalg.norm(out) == pytest.approx(1.0, abs=1e-15)
    assert total <= math.pi + 1e-12
    assert angle(a, out) == pytest.approx(t * total, abs=1e-9)
    # Half a turn apart (a @ b near 0) both arcs are as short: slerp may take either, by b's own sign.
    ends = [b_near, -b_near] if abs(a @ b) < 1e-9 else [b_near]
    assert min(abs(angle(out, end) - (1.0 - t) * total) for end in ends) <= 1e-9
    assert close_rotations(rm.slerp(a[None], b[None], 0.0)[0], a)
    assert close_rotations(rm.slerp(a[None], b[None], 1.0)[0], b)


@given(quaternions, st.sampled_from([0.0, 1e-12, 1e-6, 0.1]))
def test_matrix_to_quaternion_round_trip_including_near_half_turns(q, near):
    """Every branch of the largest-diagonal choice, including rotations within ``near`` of a half turn."""
    if near:
        q = np.array([near, *q[1:]])
        q /= np.linalg.norm(q)
    back = rm.matrix_to_quat(rm.quat_to_matrix(q[None]))[0]
    assert close_rotations(back, q, 1e-14)
    assert np.linalg.norm(back) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("order", ["xyz", "XXY", "", "XYZW"])
def test_unknown_euler_orders_are_rejected(order):
    with pytest.raises(SolverError, match="Euler order"):
        rm.euler_to_quat(np.zeros((1, 3)), order)
    with pytest.raises(SolverError, match="Euler order"):
        rm.quat_to_euler(np.array([[1.0, 0.0, 0.0, 0.0]]), order)


BAD_VALUES = [math.nan, math.inf, -math.inf]
CONVERSIONS = {
    "euler_to_quat": lambda v: rm.euler_to_quat(v[:, :3], "XYZ"),
    "quat_to_euler": lambda v: rm.quat_to_euler(v, "ZXY"),
    "quat_to_euler previous": lambda v: rm.quat_to_euler(np.ones((1, 4)), "ZXY", previous=v[:, :3]),
    "quat_to_euler_sequence": lambda v: rm.quat_to_euler_sequence(v[None], "YZX"),
    "quat_to_axis_angle": rm.quat_to_axis_angle,
    "axis_angle_to_quat": rm.axis_angle_to_quat,
    "quat_to_matrix": rm.quat_to_matrix,
    "matrix_to_quat": lambda v: rm.matrix_to_quat(np.tile(v[:, :3, None], (1, 1, 3))),
    "nearest_rotation": lambda v: rm.nearest_rotation(np.diag(v[0, :3])[None]),
    "same_hemisphere": lambda v: rm.same_hemisphere(v, v),
    "same_hemisphere reference": lambda v: rm.same_hemisphere(np.ones((1, 4)), v),
    "make_quat_continuous": lambda v: rm.make_quat_continuous(np.vstack([v, v])),
    "slerp": lambda v: rm.slerp(v, np.ones((1, 4)), 0.5),
    "slerp factor": lambda v: rm.slerp(np.ones((1, 4)), np.ones((1, 4)), v[0, 1]),
}


@pytest.mark.parametrize("value", BAD_VALUES)
@pytest.mark.parametrize("conversion", CONVERSIONS)
def test_non_finite_input_is_rejected(conversion, value):
    """A NaN or infinite angle, quaternion, axis or matrix entry raises instead of giving a NaN rotation."""
    with pytest.raises(SolverError, match="must be finite"):
        CONVERSIONS[conversion](np.array([[0.5, value, 0.25, 1.0]]))


@pytest.mark.parametrize(
    "conversion", ["quat_to_euler", "quat_to_axis_angle", "quat_to_matrix", "same_hemisphere", "slerp"]
)
def test_a_zero_quaternion_is_rejected(conversion):
    with pytest.raises(SolverError, match="must not be zero"):
        CONVERSIONS[conversion](np.zeros((1, 4)))


def test_a_flat_matrix_has_no_nearest_rotation():
    with pytest.raises(SolverError, match="must not be flat"):
        rm.nearest_rotation(np.diag([1.0, 0.0, 1.0])[None])


@given(quaternions, st.floats(0.0, 1.0))
def test_half_a_turn_apart_either_sign_of_the_end_blends_the_same_way(a, t):
    """Two kernels can return the same rotation as q or -q; half a turn from the start, the sign of a cosine of
    rounding size must not choose the arc (the kernels blended a partly influenced leg 1.5 apart)."""
    helper = np.array([a[1], -a[0], a[3], -a[2]])  # orthogonal to a: half a turn away
    b = helper / np.linalg.norm(helper)
    assert abs(a @ b) < 1e-12
    np.testing.assert_allclose(rm.slerp(a[None], b[None], t)[0], rm.slerp(a[None], -b[None], t)[0], atol=1e-12)
