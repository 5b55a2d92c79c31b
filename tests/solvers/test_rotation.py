# SPDX-License-Identifier: GPL-3.0-or-later
"""Minimal rotations between directions and the quaternion helpers, scalar and structure-of-arrays."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    add,
    cross,
    dot,
    finite,
    mul,
    norm,
    perpendicular_units,
    quaternion_matrix,
    sub,
    tilted,
    unit,
    unit_vectors,
)

from solvers import SolverError, rotation_between, vectors
from solvers.constants import IDENTITY
from solvers.rotation import any_perpendicular, quat_multiply, quat_rotate


@st.composite
def direction_pairs(draw):
    """Two non-zero vectors of any length from 1e-300 to 1e11: random, parallel, anti-parallel,
    or within 1e-12..1e-3 radians of either."""
    u = draw(unit_vectors())
    kind = draw(st.sampled_from(["random", "parallel", "opposite", "near", "nearly opposite", "axis"]))
    if kind == "random":
        v = draw(unit_vectors())
    elif kind == "parallel":
        v = u
    elif kind == "opposite":
        v = mul(u, -1.0)
    elif kind == "near":
        v = draw(tilted(u))
    elif kind == "nearly opposite":
        v = mul(draw(tilted(u)), -1.0)
    else:
        v = draw(perpendicular_units(u))

    def scale():
        return 10.0 ** draw(st.one_of(finite(-3.0, 11.0), finite(-300.0, -100.0)))

    return mul(u, scale()), mul(v, scale())


@given(direction_pairs())
def test_the_rotation_takes_u_onto_v(pair):
    u, v = pair
    q = rotation_between(u, v)
    assert math.fsum(c * c for c in q) == pytest.approx(1.0, abs=1e-15)
    assert norm(sub(quat_rotate(q, unit(u)), unit(v))) <= 2e-15
    assert np.abs(quaternion_matrix(q) @ np.array(unit(u)) - np.array(unit(v))).max() <= 4e-15


@given(direction_pairs())
def test_the_rotation_is_minimal(pair):
    """Its axis is perpendicular to both directions and its angle is the angle between them."""
    u, v = pair
    q = rotation_between(u, v)
    angle = 2.0 * math.atan2(norm(q[1:]), q[0])
    expected = math.atan2(norm(cross(unit(u), unit(v))), dot(unit(u), unit(v)))
    assert q[0] >= 0.0
    assert angle == pytest.approx(expected, abs=1e-15)
    assert abs(dot(q[1:], unit(u))) <= 1e-15


def test_parallel_zero_and_opposite_directions():
    assert rotation_between((0.0, 2.0, 0.0), (0.0, 5.0, 0.0)) == IDENTITY
    assert rotation_between((0.0, 0.0, 0.0), (1.0, 0.0, 0.0)) == IDENTITY
    assert rotation_between((1.0, 0.0, 0.0), (0.0, 0.0, 0.0)) == IDENTITY
    for u in [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, -1.0), unit((1.0, 2.0, 3.0))]:
        q = rotation_between(u, mul(u, -3.0))
        assert q[0] == 0.0 and abs(dot(q[1:], u)) <= 1e-16 and norm(q[1:]) == pytest.approx(1.0)
        assert norm(add(quat_rotate(q, u), u)) <= 1e-15


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("which", [0, 1])
def test_non_finite_directions_are_rejected(value, which):
    vectors = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]
    vectors[which] = (0.0, value, 1.0)
    with pytest.raises(SolverError, match="finite"):
        rotation_between(*vectors)


@st.composite
def quaternions(draw):
    axis = draw(unit_vectors())
    half = draw(finite(-math.pi, math.pi))
    return (math.cos(half), *mul(axis, math.sin(half)))


@given(quaternions(), quaternions(), unit_vectors())
def test_quaternion_product_and_rotation_match_matrices(a, b, v):
    v = np.array(v)
    assert np.abs(np.array(quat_rotate(a, v)) - quaternion_matrix(a) @ v).max() <= 1e-14
    ab = quat_multiply(a, b)  # b first, then a
    assert np.abs(quaternion_matrix(ab) - quaternion_matrix(a) @ quaternion_matrix(b)).max() <= 1e-14


@given(unit_vectors())
def test_any_perpendicular_is_a_unit_vector_at_right_angles(d):
    p = any_perpendicular(d)
    assert norm(p) == pytest.approx(1.0, abs=1e-15)
    assert abs(dot(p, d)) <= 1e-15
    sp = vectors.join(vectors.any_perpendicular(vectors.split(np.array([d]))))[0]
    assert np.abs(sp - np.array(p)).max() <= 1e-15


# ---------------------------------------------------------------------------------------------
# Structure-of-arrays versions


@given(st.lists(direction_pairs(), min_size=1, max_size=20))
def test_soa_rotation_between_agrees_with_the_scalar_one(pairs):
    u = np.array([p[0] for p in pairs])
    v = np.array([p[1] for p in pairs])
    batch = vectors.join(vectors.rotation_between(vectors.split(u), vectors.split(v)))
    for i, (a, b) in enumerate(pairs):
        q = rotation_between(a, b)
        # The same minimal rotation: it takes u onto v, about an axis across u, by the same angle.
        # (Nearly opposite directions fix the axis only to 1e-16 / sin(angle), so no closer comparison.)
        assert np.abs(quaternion_matrix(batch[i]) @ unit(a) - np.array(unit(b))).max() <= 4e-15
        assert abs(dot(batch[i][1:], unit(a))) <= 1e-15 and batch[i][0] >= 0.0
        assert 2.0 * math.atan2(norm(batch[i][1:]), batch[i][0]) == pytest.approx(
            2.0 * math.atan2(norm(q[1:]), q[0]), abs=1e-15
        )


@given(st.lists(quaternions(), min_size=1, max_size=10), st.lists(quaternions(), min_size=1, max_size=10))
def test_soa_quaternions_and_matrices(qa, qb):
    n = min(len(qa), len(qb))
    a, b = np.array(qa[:n]), np.array(qb[:n])
    ma = vectors.join_matrices(vectors.quat_to_mat(vectors.split(a)))
    for i in range(n):
        assert np.abs(ma[i] - quaternion_matrix(a[i])).max() <= 1e-14
    back = vectors.join(vectors.mat_to_quat(vectors.split_matrices(ma)))
    assert np.minimum(np.abs(back - a).max(axis=1), np.abs(back + a).max(axis=1)).max() <= 1e-14
    ab = vectors.join(vectors.quat_mul(vectors.split(a), vectors.split(b)))
    assert np.abs(ab - np.array([quat_multiply(x, y) for x, y in zip(a, b)])).max() <= 1e-15
    v = np.array([unit((1.0, 2.0, 3.0))] * n)
    rotated = vectors.join(vectors.quat_rotate(vectors.split(a), vectors.split(v)))
    assert np.abs(rotated - np.array([quat_rotate(x, y) for x, y in zip(a, v)])).max() <= 1e-15


@given(st.lists(st.lists(finite(-10.0, 10.0), min_size=9, max_size=9), min_size=1, max_size=10))
def test_soa_matrix_inverse_and_determinant(rows):
    m = np.array(rows).reshape(-1, 3, 3)
    m[:, [0, 1, 2], [0, 1, 2]] += 30.0  # well conditioned
    inverse, det = vectors.mat_inv(vectors.split_matrices(m))
    assert np.allclose(det, np.linalg.det(m), rtol=1e-12)
    assert np.abs(vectors.join_matrices(inverse) @ m - np.eye(3)).max() <= 1e-13
    assert np.allclose(vectors.mat_det(vectors.split_matrices(m)), det, rtol=1e-13)
    assert (
        np.abs(vectors.join_matrices(vectors.mat_transpose(vectors.split_matrices(m))) - m.transpose(0, 2, 1)).max()
        == 0.0
    )
