# SPDX-License-Identifier: GPL-3.0-or-later
"""Every row of seeds/ERRATA.md as a test: what the source articles get wrong, and that we do not.

Article 000 is the inverse-kinematics study (2D law of cosines, three-link IK); article 001 is
the 3D two-bone IK by sphere intersection with the minimal-rotation write-back. Each test's
docstring says what the article has and what is right; the test shows the article's version
failing where it can, and ours holding.
"""

import itertools
import math

import numpy as np
import pytest
from strategies import cross, dist, dot, mul, norm, quaternion_matrix, rodrigues, sub, unit

from solvers import (
    Reach,
    ReachOptions,
    SolverError,
    chain_local_rotations,
    rotation_between,
    solve_two_bone,
    solve_two_bone_batch,
    two_bone_angles,
    vectors,
)
from solvers import rotation_modes as rm
from solvers.constants import IDENTITY
from solvers.rotation import quat_rotate

LENGTHS = [0.1, 0.2, 0.3, 0.35, 0.6, 0.7, 1.1, 1.3, 1.7, 2.9]


def elbow_and_end(upper, lower, angles):
    elbow = (upper * math.cos(angles.shoulder), upper * math.sin(angles.shoulder), 0.0)
    turn = angles.shoulder + angles.elbow
    return elbow, (elbow[0] + lower * math.cos(turn), elbow[1] + lower * math.sin(turn), 0.0)


def test_law_of_cosines_takes_the_upper_bone_as_the_side_adjacent_to_the_shoulder():
    """000, two-link law of cosines. The article: ``l2^2 = d^2 + l1^2 - 2 d l2 cos(theta_a)``, so
    ``cos(theta_a) = (d^2 + l1^2 - l2^2) / (2 d l2)``. Right: the sides adjacent to the shoulder's
    angle are ``d`` and ``l1``: ``cos(theta_a) = (d^2 + l1^2 - l2^2) / (2 d l1)``."""

    def article_cos(l1, l2, d):
        return (d * d + l1 * l1 - l2 * l2) / (2.0 * d * l2)

    # A different, wrong angle: the elbow it gives is not l2 from the target.
    l1, l2, d = 1.0, 2.0, 2.5
    wrong = math.acos(article_cos(l1, l2, d))
    wrong_elbow = (l1 * math.cos(wrong), l1 * math.sin(wrong), 0.0)
    assert abs(dist(wrong_elbow, (d, 0.0, 0.0)) - l2) > 0.1
    ours = two_bone_angles(l1, l2, d, 0.0)
    elbow, end = elbow_and_end(l1, l2, ours)
    assert ours.reachable
    assert ours.shoulder == pytest.approx(math.acos((d * d + l1 * l1 - l2 * l2) / (2.0 * d * l1)), abs=1e-15)
    assert dist(elbow, (d, 0.0, 0.0)) == pytest.approx(l2, abs=1e-15)  # the triangle closes
    assert dist(end, (d, 0.0, 0.0)) <= 1e-15

    # And a reachable target for which the article's cosine is not a cosine at all.
    l1, l2 = 2.0, 1.0
    assert article_cos(l1, l2, d) > 1.0
    with pytest.raises(ValueError, match="math domain error"):
        math.acos(article_cos(l1, l2, d))
    ours = two_bone_angles(l1, l2, d, 0.0)
    assert ours.reachable and dist(elbow_and_end(l1, l2, ours)[1], (d, 0.0, 0.0)) <= 1e-15


def test_reach_is_from_the_difference_to_the_sum_and_clamped_at_both_ends():
    """000, error checks. The article: ``d in [l1 + l2, |l1 - l2|]`` (an interval written backwards,
    which holds nothing). Right: reachable iff ``|l1 - l2| <= d <= l1 + l2``; at both ends the
    ``acos`` arguments leave [-1, 1] by rounding, so they must be clamped (we use atan2 of the
    triangle's area, which needs no clamp)."""
    l1, l2, d = 1.0, 0.5, 1.2
    assert not (l1 + l2 <= d <= abs(l1 - l2))  # the article's interval as written
    assert two_bone_angles(l1, l2, d, 0.0).reachable

    def naive_arguments(l1, l2, d):
        return (l1 * l1 + d * d - l2 * l2) / (2.0 * l1 * d), (l1 * l1 + l2 * l2 - d * d) / (2.0 * l1 * l2)

    for end in ("sum", "difference"):
        leaking = []
        for l1, l2 in itertools.permutations(LENGTHS, 2):
            d = l1 + l2 if end == "sum" else abs(l1 - l2)
            if any(abs(c) > 1.0 for c in naive_arguments(l1, l2, d)):
                leaking.append((l1, l2, d))
        assert leaking, f"rounding pushes some acos argument out of [-1, 1] at the {end}"
        for l1, l2, d in leaking:
            with pytest.raises(ValueError, match="math domain error"):
                [math.acos(c) for c in naive_arguments(l1, l2, d)]
            angles = two_bone_angles(l1, l2, d, 0.0)
            assert angles.reachable and all(map(math.isfinite, angles))
            assert dist(elbow_and_end(l1, l2, angles)[1], (d, 0.0, 0.0)) <= 1e-15 * (l1 + l2)
            solution = solve_two_bone((0.0, 0.0, 0.0), (0.0, l1, 0.0), (0.0, l1, l2), (d, 0.0, 0.0))
            assert all(map(math.isfinite, solution.knee + solution.end))
            assert dist(solution.end, (d, 0.0, 0.0)) <= 1e-15 * (l1 + l2)


def test_out_of_reach_extends_folds_or_holds_and_never_leaves_nan():
    """000, out of reach. The article: ``return`` (do nothing). Right: that is one option (HOLD);
    the other article extends the limb straight toward a far target and folds it toward a near
    one (EXTEND). Offer both, and never leave NaN in a pose."""
    root, knee, end = (0.0, 0.0, 0.0), (0.0, 2.0, 0.0), (1.0, 2.0, 0.0)
    far, near = (0.0, 0.0, 10.0), (0.0, 0.0, 0.5)
    extended = solve_two_bone(root, knee, end, far)
    assert extended.knee == pytest.approx((0.0, 0.0, 2.0)) and extended.end == pytest.approx((0.0, 0.0, 3.0))
    folded = solve_two_bone(root, knee, end, near)  # the longer upper bone toward the target
    assert folded.knee == pytest.approx((0.0, 0.0, 2.0)) and folded.end == pytest.approx((0.0, 0.0, 1.0))
    for target in (far, near):
        held = solve_two_bone(root, knee, end, target, options=ReachOptions(mode=Reach.HOLD))
        assert held.held and (held.knee, held.end) == (knee, end)
    for x, y in ((10.0, 0.0), (0.2, 0.0), (0.0, 0.0)):
        assert all(map(math.isfinite, two_bone_angles(2.0, 1.0, x, y)))


def test_the_target_is_a_3_vector():
    """000, 3D code. The article: ``Vector2 t = target.position - origin.position``, which drops the
    target's height. Right: a 3-vector."""
    root, knee, end, target = (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 2.0, 0.0), (1.0, 0.0, 1.5)
    flattened = solve_two_bone(root, knee, end, (target[0], target[1], 0.0))
    assert dist(flattened.end, target) == pytest.approx(1.5)  # what the 2-vector reaches
    solution = solve_two_bone(root, knee, end, target)
    assert solution.reached and dist(solution.end, target) <= 1e-15
    with pytest.raises(SolverError, match=r"target must be an \(N, 3\) array"):
        solve_two_bone_batch([root], [knee], [end], [target[:2]])
    with pytest.raises(ValueError):
        solve_two_bone(root, knee, end, target[:2])


def test_blender_is_right_handed_and_bones_point_along_local_plus_y():
    """000, three-link code. The article: ``localUp = -targetUp`` (an undefined name) on Unity's
    left-handed axes. Right: Blender is right-handed with Z up, and a bone points along its local +Y."""
    quarter = math.cos(math.pi / 4), math.sin(math.pi / 4)
    x, y, z = np.eye(3)
    for axis, before, after in ((x, y, z), (y, z, x), (z, x, y)):  # a quarter turn about each axis, right-handed
        q = np.concatenate([[quarter[0]], quarter[1] * axis])
        m = rm.quat_to_matrix(q[None])[0]
        assert np.abs(m @ before - after).max() <= 1e-15 and np.linalg.det(m) == pytest.approx(1.0)
        assert np.abs(np.array(quat_rotate(tuple(q), tuple(before))) - after).max() <= 1e-15
    assert np.cross(x, y) == pytest.approx(z)
    # Blender's 'XYZ' Euler is Rz @ Ry @ Rx
    e = np.array([0.3, -0.4, 1.1])
    expected = rodrigues(z, e[2]) @ rodrigues(y, e[1]) @ rodrigues(x, e[0])
    assert np.abs(quaternion_matrix(rm.euler_to_quat(e[None], "XYZ")[0]) - expected).max() <= 1e-15
    # A bone at rest points along +Y: turning its tail from +Y to +Z is a quarter turn about +X.
    assert rotation_between((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)) == pytest.approx((quarter[0], quarter[1], 0.0, 0.0))
    result = chain_local_rotations(
        [[np.eye(4)]], [[(1.0, 1.0, 1.0)]], [[(1.0, 0.0, 0.0, 0.0)]], [[(0, 0, 0), (0, 1, 0)]], [[(0, 0, 0), (0, 0, 1)]]
    )
    assert result.rotations[0, 0] == pytest.approx((quarter[0], quarter[1], 0.0, 0.0), abs=1e-15)


def test_the_scale_matrix_has_a_one_only_in_its_corner():
    """001, scale matrix. The article writes ``scale(s)`` with ones down its last column. Right: only
    the bottom-right entry is 1; the article's matrix also translates by (1, 1, 1), moving the head."""
    s = (1.0, 2.0, 3.0)
    article = np.array([[s[0], 0, 0, 1], [0, s[1], 0, 1], [0, 0, s[2], 1], [0, 0, 0, 1]], dtype=float)
    right = np.diag([*s, 1.0])
    origin = np.array([0.0, 0.0, 0.0, 1.0])
    assert np.array_equal(right @ origin, origin)
    assert np.array_equal(article @ origin, [1.0, 1.0, 1.0, 1.0])  # not a scale: the head moves
    # The write-back treats a bone's matrix as T @ R @ S with the right S: a scaled bone's head
    # stays at its matrix's translation, and the turn it returns puts the tail where it should be.
    turn = quaternion_matrix(np.array([0.9, 0.1, -0.3, 0.2]) / math.sqrt(0.95))
    matrix = np.eye(4)
    matrix[:3, :3], matrix[:3, 3] = turn @ np.diag(s), (0.5, -1.0, 2.0)
    tail = (matrix @ [0.0, 1.0, 0.0, 1.0])[:3]
    new_tail = matrix[:3, 3] + 2.0 * np.array(unit((1.0, 1.0, 0.0)))  # |S (0, 1, 0)| = 2
    result = chain_local_rotations(
        [[matrix]], [[s]], [[(1.0, 0.0, 0.0, 0.0)]], [[matrix[:3, 3], tail]], [[matrix[:3, 3], new_tail]]
    )
    posed = matrix.copy()
    posed[:3, :3] = turn @ quaternion_matrix(result.rotations[0, 0]) @ np.diag(s)
    assert np.abs((posed @ [0.0, 1.0, 0.0, 1.0])[:3] - new_tail).max() <= 1e-15
    wrong = posed @ article
    assert np.abs(wrong[:3, 3] - matrix[:3, 3]).max() > 0.5  # the article's S would shift the head


def test_rotation_matrix_third_row_second_entry_is_a_sum():
    """001, rotation matrix. The article's third row, second entry: ``2(qy qz - qw qx)``. Right:
    ``2(qy qz + qw qx)``, as an independent construction (axis and angle, Rodrigues) confirms."""
    rng = np.random.default_rng(1)
    for _ in range(50):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        w, x, y, z = q
        ours = rm.quat_to_matrix(q[None])[0]
        independent = quaternion_matrix(q)
        assert np.abs(ours - independent).max() <= 1e-15
        assert ours[2, 1] == pytest.approx(2.0 * (y * z + w * x), abs=1e-15)
        article = ours.copy()
        article[2, 1] = 2.0 * (y * z - w * x)
        assert abs(article[2, 1] - independent[2, 1]) == pytest.approx(abs(4.0 * w * x), abs=1e-15)
        if abs(w * x) > 1e-3:
            assert np.abs(article @ article.T - np.eye(3)).max() > 1e-3  # not even a rotation
        assert (
            np.abs(vectors.join_matrices(vectors.quat_to_mat(vectors.split(q[None])))[0] - independent).max() <= 1e-15
        )


def test_the_identity_quaternion_has_w_one():
    """001, GetRotationBetween. The article returns ``glm::quat(0, 0, 0, 1)`` for "identity". glm's
    constructor takes (w, x, y, z): that value is a half turn about Z. Identity is w = 1."""
    half_turn = rm.quat_to_matrix(np.array([[0.0, 0.0, 0.0, 1.0]]))[0]
    assert np.abs(half_turn - np.diag([-1.0, -1.0, 1.0])).max() <= 1e-15
    assert IDENTITY == (1.0, 0.0, 0.0, 0.0)
    assert np.array_equal(rm.quat_to_matrix(np.array([IDENTITY]))[0], np.eye(3))
    u = (0.3, -0.2, 0.9)
    assert rotation_between(u, mul(u, 2.0)) == IDENTITY
    assert quat_rotate(IDENTITY, u) == u


def test_anti_parallel_directions_are_half_a_turn_apart():
    """001, GetRotationBetween. The article returns "identity" for parallel *and* anti-parallel
    vectors, and takes ``acos`` of an unclamped dot product. Right: anti-parallel needs a half turn
    about an axis perpendicular to ``u``, and the dot product must be clamped (or avoided) before
    ``acos``."""
    for u in [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), unit((1.0, -2.0, 0.5))]:
        q = rotation_between(u, mul(u, -1.0))
        assert q[0] == 0.0 and abs(dot(q[1:], u)) <= 1e-16
        assert norm(sub(quat_rotate(q, u), mul(u, -1.0))) <= 1e-15  # identity would miss by 2
    # Within 1e-12 rad of opposite, the turn still lands on v (to the last digits).
    rng = np.random.default_rng(2)
    for tilt in (1e-6, 1e-9, 1e-12, 1e-14):
        u = unit(tuple(rng.normal(size=3)))
        side = unit(cross(u, tuple(rng.normal(size=3))))
        v = tuple(-(np.array(u) * math.cos(tilt) + np.array(side) * math.sin(tilt)))
        assert norm(sub(quat_rotate(rotation_between(u, v), u), v)) <= 2e-15
    # Normalised vectors whose dot product with themselves rounds above 1.
    over = [unit(v) for v in [(1.0, 1.0, 1.0), (3.0, 4.0, 12.0), (7.0, 11.0, 13.0)] if dot(unit(v), unit(v)) > 1.0]
    assert over
    for u in over:
        with pytest.raises(ValueError, match="math domain error"):
            math.acos(dot(u, u))
        assert rotation_between(u, u) == IDENTITY


@pytest.mark.parametrize("angle", [1e-4, 1e-6, 1e-8, 1e-10, 1e-12])
def test_small_angles_come_from_atan2_not_acos(angle):
    """001, GetRotationBetween. The article: ``angle = acos(u . v)``. For small angles ``acos``
    loses most digits (in single precision a turn of 1e-4 rad is lost entirely). Right:
    ``atan2(|u x v|, u . v)``: the rotation then takes u onto v to ~1e-15."""
    rng = np.random.default_rng(int(-math.log10(angle)))
    u = np.array(unit(tuple(rng.normal(size=3))))
    axis = np.array(unit(cross(tuple(u), tuple(rng.normal(size=3)))))
    v = rodrigues(axis, angle) @ u
    q = rotation_between(tuple(u), tuple(v))
    assert np.abs(np.array(quat_rotate(q, tuple(u))) - v).max() <= 1e-15
    assert 2.0 * math.atan2(norm(q[1:]), q[0]) == pytest.approx(angle, rel=1e-6)
    by_acos = math.acos(min(float(u @ v), 1.0))
    if angle <= 1e-8:
        assert abs(by_acos - angle) > 0.3 * angle  # float64 acos: most or all digits gone
    u32, v32 = u.astype(np.float32), v.astype(np.float32)
    single = float(np.arccos(np.clip(np.dot(u32, v32), -1.0, 1.0)))
    assert abs(single - angle) > 0.5 * angle  # single precision: the turn is lost


def test_the_sine_at_full_reach_comes_from_a_clamped_cosine():
    """001, ``sin(theta) = sqrt(1 - cos^2(theta))`` with ``cos(theta)`` unclamped. At full reach the
    cosine leaves [-1, 1] by rounding and the knee becomes NaN. Right: clamp it (we use Heron's
    product for the circle's radius, which cannot go negative, and take no square root of a
    negative)."""
    found = 0
    for l_ab, l_bc in itertools.permutations(LENGTHS, 2):
        l_at = l_ab + l_bc
        cos_theta = (l_bc * l_bc - l_ab * l_ab - l_at * l_at) / (-2.0 * l_ab * l_at)
        if cos_theta <= 1.0:
            continue
        found += 1
        with pytest.raises(ValueError, match="math domain error"):
            math.sqrt(1.0 - cos_theta * cos_theta)
        with np.errstate(invalid="ignore"):
            assert np.isnan(np.sqrt(np.float64(1.0) - cos_theta * cos_theta))
        solution = solve_two_bone((0.0, 0.0, 0.0), (l_ab, 0.0, 0.0), (l_ab, l_bc, 0.0), (0.0, l_at, 0.0))
        assert all(map(math.isfinite, solution.knee + solution.end))
        assert dist(solution.knee, (0.0, 0.0, 0.0)) == pytest.approx(l_ab, abs=1e-15)
        assert dist(solution.end, solution.knee) == pytest.approx(l_bc, abs=1e-15)
    assert found


def test_knees_are_hinges_that_never_bend_backwards():
    """001, conclusion. The article has no joint limits ("I could add that"). Right: knees and
    elbows are hinges that must not bend backwards, and bend limits are part of this product."""
    root, knee, end = (0.0, 0.0, 0.0), (0.0, 1.0, 0.2), (0.0, 2.0, 0.0)  # bent about -X
    hinge = cross(sub(knee, root), sub(end, knee))
    limits = ReachOptions(min_bend=0.2, max_bend=2.0)
    for i in range(360):  # the target circles the root, passing behind the knee
        a = math.radians(i)
        target = (0.0, 1.5 * math.cos(a), 1.5 * math.sin(a))
        solution = solve_two_bone(root, knee, end, target, hinge=hinge, options=limits)
        bend = cross(sub(solution.knee, root), sub(solution.end, solution.knee))
        assert dot(bend, hinge) >= -1e-12
        angle = math.atan2(norm(bend), dot(sub(solution.knee, root), sub(solution.end, solution.knee)))
        assert 0.2 - 1e-12 <= angle <= 2.0 + 1e-12
        # without the hinge, the least-motion choice does bend it backwards for some targets
    unhinged = [
        solve_two_bone(root, knee, end, (0.0, 1.5 * math.cos(math.radians(i)), 1.5 * math.sin(math.radians(i))))
        for i in range(0, 360, 10)
    ]
    assert any(dot(cross(sub(s.knee, root), sub(s.end, s.knee)), hinge) < -1e-3 for s in unhinged)
