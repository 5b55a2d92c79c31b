# SPDX-License-Identifier: GPL-3.0-or-later
"""The planar law-of-cosines solver (article 000), on its own and against the 3D solver."""

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import finite, knee_tolerance

from solvers import SolverError, solve_two_bone, two_bone_angles

REL = 1e-9


def joints(upper, lower, angles):
    """Elbow and end of the chain from its angles (forward kinematics in the plane)."""
    elbow = (upper * math.cos(angles.shoulder), upper * math.sin(angles.shoulder))
    turn = angles.shoulder + angles.elbow
    return elbow, (elbow[0] + lower * math.cos(turn), elbow[1] + lower * math.sin(turn))


def dist2(a, b):
    return math.hypot(a[0] - b[0], a[1] - b[1])


lengths = st.tuples(finite(-2.0, 2.0), finite(0.05, 1.0), finite(0.05, 1.0)).map(
    lambda t: (10.0 ** t[0] * t[1], 10.0 ** t[0] * t[2])
)


@st.composite
def planar_targets(draw, upper, lower, low=0.001, high=0.999):
    """A target at a fraction of the way between the shortest and longest reach (or beyond)."""
    shortest, longest = abs(upper - lower), upper + lower
    distance = shortest + (longest - shortest) * draw(finite(low, high))
    angle = draw(finite(-math.pi, math.pi))
    return distance * math.cos(angle), distance * math.sin(angle)


@given(lengths.flatmap(lambda ul: st.tuples(st.just(ul), planar_targets(*ul), st.sampled_from([1, -1]))))
def test_reachable_targets_are_reached_on_the_chosen_side(case):
    (upper, lower), target, bend = case
    angles = two_bone_angles(upper, lower, *target, bend=bend)
    elbow, end = joints(upper, lower, angles)
    size = upper + lower
    assert angles.reachable
    assert dist2(end, target) <= REL * size
    assert math.hypot(*elbow) == pytest.approx(upper, abs=REL * size)
    # bend = 1: the elbow on the counter-clockwise side of the line to the target, turning clockwise
    side = target[0] * elbow[1] - target[1] * elbow[0]
    if abs(side) > 1e-6 * size * size:
        assert math.copysign(1, side) == bend
        assert math.copysign(1, angles.elbow) == -bend


@given(lengths, finite(1.001, 3.0), finite(-math.pi, math.pi), st.sampled_from([1, -1]))
def test_too_far_points_straight_at_the_target(ul, beyond, angle, bend):
    upper, lower = ul
    distance = (upper + lower) * beyond
    angles = two_bone_angles(upper, lower, distance * math.cos(angle), distance * math.sin(angle), bend)
    assert not angles.reachable
    assert angles.elbow == 0.0
    assert math.remainder(angles.shoulder - angle, 2 * math.pi) == pytest.approx(0.0, abs=1e-12)


@given(lengths, finite(0.0, 0.999), finite(-math.pi, math.pi), st.sampled_from([1, -1]))
def test_too_close_folds_with_the_longer_bone_toward_the_target(ul, fraction, angle, bend):
    upper, lower = ul
    assume(abs(upper - lower) > 1e-6 * (upper + lower))
    distance = abs(upper - lower) * fraction
    assume(distance > 0.0)
    x, y = distance * math.cos(angle), distance * math.sin(angle)
    angles = two_bone_angles(upper, lower, x, y, bend)
    assert not angles.reachable
    assert abs(angles.elbow) == pytest.approx(math.pi, abs=1e-12)
    aim = math.atan2(y, x)  # not ``angle``: a subnormal target keeps only a few digits of its direction
    toward = aim if upper > lower else aim + math.pi  # the upper bone points at the target if it is longer
    assert math.remainder(angles.shoulder - toward, 2 * math.pi) == pytest.approx(0.0, abs=1e-12)


@given(
    lengths,
    finite(-math.pi, math.pi),
    finite(-math.pi, math.pi),
    st.one_of(finite(0.0, 1.2), st.sampled_from([0.0, 1.0]), finite(1e-12, 1e-6)),
    finite(-math.pi, math.pi),
    st.sampled_from([1, -1]),
)
def test_the_angles_agree_with_the_3d_solver_in_its_plane(ul, a, b, fraction, aim, bend):
    """In the z = 0 plane, with the hinge along -z for bend = 1 (the elbow turns clockwise)."""
    upper, lower = ul
    size = upper + lower
    shortest, longest = abs(upper - lower), size
    distance = shortest + (longest - shortest) * fraction
    # Much nearer the root, the knee hangs on the last bit of upper - lower (divided by the distance),
    # and the lengths measured from the 3D points differ from the planar ones in that bit.
    assume(distance > 1e-6 * size)
    target = (distance * math.cos(aim), distance * math.sin(aim))
    angles = two_bone_angles(upper, lower, *target, bend=bend)
    elbow, end = joints(upper, lower, angles)

    knee = (upper * math.cos(a), upper * math.sin(a), 0.0)
    foot = (knee[0] + lower * math.cos(b), knee[1] + lower * math.sin(b), 0.0)
    solved = solve_two_bone((0.0, 0.0, 0.0), knee, foot, (*target, 0.0), hinge=(0.0, 0.0, -float(bend)))
    assert solved.knee[2] == 0.0 and solved.end[2] == 0.0
    assert dist2(solved.end, end) <= REL * size
    if solved.reached == angles.reachable:
        # near straight or folded the elbow's offset from the line is only defined to ~sqrt(1e-16)
        offset = abs(target[0] * elbow[1] - target[1] * elbow[0]) / distance
        assert dist2(solved.knee, elbow) <= knee_tolerance(size, distance, offset)
    else:  # the bone lengths measured from the 3D points differ in the last bit: only on the edge
        assert min(abs(distance - shortest), abs(distance - longest)) <= 1e-12 * size


@pytest.mark.parametrize(
    "arguments",
    [
        (math.nan, 1.0, 1.0, 1.0),
        (1.0, math.inf, 1.0, 1.0),
        (1.0, 1.0, -math.inf, 1.0),
        (1.0, 1.0, 1.0, math.nan),
        (1.0, 1.0, 1e13, 0.0),
    ],
)
def test_non_finite_input_is_rejected(arguments):
    with pytest.raises(SolverError, match="finite"):
        two_bone_angles(*arguments)


@pytest.mark.parametrize("upper, lower", [(0.0, 1.0), (1.0, 0.0), (-1.0, 1.0), (1.0, 1e-13)])
def test_zero_length_bones_are_rejected(upper, lower):
    with pytest.raises(SolverError, match="non-zero length"):
        two_bone_angles(upper, lower, 1.0, 0.0)


@pytest.mark.parametrize("bend", [0, 2, -2])
def test_the_bend_must_be_one_side_or_the_other(bend):
    with pytest.raises(SolverError, match="bend"):
        two_bone_angles(1.0, 1.0, 1.0, 0.0, bend)
