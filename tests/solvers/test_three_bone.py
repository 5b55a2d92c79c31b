# SPDX-License-Identifier: GPL-3.0-or-later
"""Three-bone IK: the tip reaches the target with the end bone along the given direction, the
end-plane swivel keeps all four joints in one plane, and the rest is the two-bone solver's."""

import math
from dataclasses import dataclass

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import (
    Limb,
    Vec3,
    add,
    all_finite,
    angle_between,
    axes,
    cross,
    dist,
    dot,
    finite,
    knee_tolerance,
    limbs,
    mul,
    norm,
    perpendicular_part,
    poles,
    reach_options,
    sub,
    unit,
    unit_vectors,
)

from solvers import Reach, ReachOptions, SolverError, solve_three_bone, solve_two_bone

REL = 1e-9


@dataclass
class Leg:
    root: Vec3
    knee: Vec3
    ankle: Vec3
    tip: Vec3

    @property
    def lengths(self) -> tuple[float, float, float]:
        return dist(self.knee, self.root), dist(self.ankle, self.knee), dist(self.tip, self.ankle)

    @property
    def size(self) -> float:
        return sum(self.lengths)

    def args(self):
        return (self.root, self.knee, self.ankle, self.tip)


@st.composite
def legs(draw) -> Leg:
    limb = draw(limbs())
    foot = limb.size * draw(finite(0.05, 1.0))
    return Leg(limb.root, limb.knee, limb.end, add(limb.end, mul(draw(unit_vectors()), foot)))


@st.composite
def end_directions(draw) -> Vec3:
    """Unit, long or tiny (its squares underflow) directions."""
    return mul(draw(unit_vectors()), 10.0 ** draw(st.one_of(finite(-3.0, 3.0), finite(-320.0, -150.0))))


@st.composite
def reachable_goals(draw, leg: Leg) -> tuple[Vec3, Vec3]:
    """A target and end direction whose ankle goal lies strictly inside the first two bones' range."""
    l1, l2, l3 = leg.lengths
    direction = draw(end_directions())
    distance = abs(l1 - l2) + (l1 + l2 - abs(l1 - l2)) * draw(finite(0.001, 0.999))
    ankle_goal = add(leg.root, mul(draw(unit_vectors()), distance))
    return add(ankle_goal, mul(unit(direction), l3)), direction


def assert_lengths(leg: Leg, solution, scale=1.0):
    l1, l2, l3 = leg.lengths
    tol = REL * leg.size * scale
    assert dist(solution.knee, leg.root) == pytest.approx(l1 * scale, abs=tol)
    assert dist(solution.ankle, solution.knee) == pytest.approx(l2 * scale, abs=tol)
    assert dist(solution.tip, solution.ankle) == pytest.approx(l3, abs=tol)


@given(legs().flatmap(lambda leg: st.tuples(st.just(leg), reachable_goals(leg))), st.booleans(), st.data())
def test_the_tip_reaches_the_target_with_the_end_bone_along_its_direction(leg_goal, end_plane, data):
    leg, (target, direction) = leg_goal
    limb = Limb(leg.root, leg.knee, leg.ankle)
    pole = data.draw(poles(limb, target))
    hinge = data.draw(axes(limb, target))
    solution = solve_three_bone(*leg.args(), target, direction, pole=pole, hinge=hinge, end_plane=end_plane)
    assert solution.reached and not solution.held
    assert dist(solution.tip, target) <= REL * leg.size
    assert dist(unit(sub(solution.tip, solution.ankle)), unit(direction)) <= 1e-12
    assert_lengths(leg, solution)


@given(legs(), st.data())
def test_natural_mode_keeps_the_four_joints_in_one_plane(leg, data):
    limb = Limb(leg.root, leg.knee, leg.ankle)
    target = add(leg.root, mul(data.draw(unit_vectors()), leg.size * data.draw(finite(0.0, 1.5))))
    direction = data.draw(end_directions())
    hinge = data.draw(axes(limb, target))
    options = data.draw(reach_options(limb.size, modes=(Reach.EXTEND, Reach.STRETCH)))
    solution = solve_three_bone(*leg.args(), target, direction, hinge=hinge, options=options)
    assert all_finite(solution.knee, solution.ankle, solution.tip)
    a, b, c = sub(solution.knee, leg.root), sub(solution.ankle, leg.root), sub(solution.tip, leg.root)
    assert abs(dot(cross(a, b), c)) <= REL * leg.size**3
    assert_lengths(leg, solution, solution.stretch)


@given(legs(), st.data())
def test_the_first_two_bones_are_the_two_bone_solution_for_the_ankle_goal(leg, data):
    """Simple mode and a pole: exactly the two-bone solver aimed at target - end_length * direction."""
    limb = Limb(leg.root, leg.knee, leg.ankle)
    target = add(leg.root, mul(data.draw(unit_vectors()), leg.size * data.draw(finite(0.0, 1.5))))
    direction = unit(data.draw(end_directions()))
    end_plane = data.draw(st.booleans())
    pole = data.draw(poles(limb, target, ("random",) if end_plane else ("none", "random", "on line")))
    hinge = data.draw(axes(limb, target, ("none", "random", "along", "tiny")))
    options = data.draw(reach_options(limb.size))
    solution = solve_three_bone(*leg.args(), target, direction, pole, hinge, end_plane, options)
    ankle_goal = sub(target, mul(direction, leg.lengths[2]))
    two = solve_two_bone(leg.root, leg.knee, leg.ankle, ankle_goal, pole=pole, hinge=hinge, options=options)
    # The test's ankle goal may differ from the solver's in the last bit: keep the swivel well defined,
    # and on the very edge of the reach accept either side.
    aim = unit_or_x(sub(ankle_goal, leg.root))
    offset = norm(perpendicular_part(sub(leg.knee, leg.root), aim))
    assume(offset > 1e-6 * leg.size or pole is not None and not end_plane)
    if (solution.reached, solution.held) != (two.reached, two.held):
        nudged = [
            solve_two_bone(
                leg.root, leg.knee, leg.ankle, add(ankle_goal, mul(aim, step * leg.size)), pole, hinge, options=options
            )
            for step in (-1e-12, 1e-12)
        ]
        assert any((n.reached, n.held) == (solution.reached, solution.held) for n in nudged)
        return
    # near straight or folded, the knee's offset from the line is only defined to ~sqrt(1e-16)
    radius = norm(perpendicular_part(sub(two.knee, leg.root), aim))
    tol = knee_tolerance(leg.size, dist(ankle_goal, leg.root), radius)
    assert dist(solution.knee, two.knee) <= tol and dist(solution.ankle, two.end) <= REL * leg.size
    assert solution.stretch == pytest.approx(two.stretch, rel=1e-12)


def unit_or_x(v):
    return unit(v) if v != (0.0, 0.0, 0.0) else (1.0, 0.0, 0.0)


@given(legs(), st.data())
def test_hold_keeps_the_whole_pose_when_out_of_reach(leg, data):
    direction = data.draw(end_directions())
    l1, l2, l3 = leg.lengths
    ankle_goal = add(leg.root, mul(data.draw(unit_vectors()), (l1 + l2) * data.draw(finite(1.01, 3.0))))
    target = add(ankle_goal, mul(unit(direction), l3))
    solution = solve_three_bone(*leg.args(), target, direction, options=ReachOptions(mode=Reach.HOLD))
    assert solution.held and not solution.reached
    assert (solution.knee, solution.ankle, solution.tip) == (leg.knee, leg.ankle, leg.tip)


@given(legs(), st.data())
def test_end_angle_and_roll_describe_the_new_pose(leg, data):
    target = add(leg.root, mul(data.draw(unit_vectors()), leg.size * data.draw(finite(0.0, 1.5))))
    direction = data.draw(end_directions())
    end_plane = data.draw(st.booleans())
    solution = solve_three_bone(*leg.args(), target, direction, end_plane=end_plane)
    assert all_finite(solution.roll, solution.end_angle)
    lower, end = sub(solution.ankle, solution.knee), sub(solution.tip, solution.ankle)
    assert abs(solution.end_angle) == pytest.approx(angle_between(lower, end), abs=1e-9)
    # the roll turns the old knee's side into the new one about the new root-ankle axis
    axis = unit_or_x(sub(solution.ankle, leg.root))
    before = perpendicular_part(sub(leg.knee, leg.root), axis)
    after = perpendicular_part(sub(solution.knee, leg.root), axis)
    assume(norm(before) > 1e-6 * leg.size and norm(after) > 1e-6 * leg.size)
    turned = add(
        mul(before, math.cos(solution.roll)), mul(cross(axis, before), math.sin(solution.roll))
    )  # Rodrigues for a vector perpendicular to the axis
    assert dist(unit(turned), unit(after)) <= 1e-7


@given(legs())
def test_a_pose_already_on_its_goal_does_not_roll(leg):
    assume(dist(leg.ankle, leg.root) > 1e-6 * leg.size)  # else rounding alone picks the aim
    direction = sub(leg.tip, leg.ankle)
    solution = solve_three_bone(*leg.args(), leg.tip, direction, end_plane=False)
    offset = norm(perpendicular_part(sub(leg.knee, leg.root), unit_or_x(sub(leg.ankle, leg.root))))
    # a straight leg's knee is only defined to ~sqrt(1e-16) of its size off the line
    tol = knee_tolerance(leg.size, dist(leg.ankle, leg.root), offset)
    assert dist(solution.knee, leg.knee) <= tol and dist(solution.tip, leg.tip) <= tol
    if offset > 1e-6 * leg.size:
        assert solution.roll == pytest.approx(0.0, abs=1e-7)


# ---------------------------------------------------------------------------------------------
# Bad input

GOOD = dict(
    root=(0.0, 0.0, 0.0),
    knee=(0.0, 1.0, 0.0),
    ankle=(0.0, 2.0, 0.0),
    tip=(0.0, 2.0, 0.5),
    target=(1.0, 1.0, 0.0),
    end_direction=(0.0, 0.0, 1.0),
)


@pytest.mark.parametrize("argument", ["root", "knee", "ankle", "tip", "target", "end_direction", "pole", "hinge"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_input_is_rejected(argument, value):
    with pytest.raises(SolverError, match="finite"):
        solve_three_bone(**{**GOOD, argument: (0.5, value, 0.5)})


def test_a_zero_end_direction_is_rejected():
    with pytest.raises(SolverError, match="zero vector"):
        solve_three_bone(**{**GOOD, "end_direction": (0.0, -0.0, 0.0)})


@pytest.mark.parametrize("tip", [(0.0, 2.0, 0.0), (0.0, 2.0, 1e-13)])
def test_a_zero_length_end_bone_is_rejected(tip):
    with pytest.raises(SolverError, match="end bone"):
        solve_three_bone(**{**GOOD, "tip": tip})


@pytest.mark.parametrize("knee", [(0.0, 0.0, 0.0), (0.0, 2.0, 0.0)])
def test_zero_length_upper_bones_are_rejected(knee):
    with pytest.raises(SolverError, match="non-zero length"):
        solve_three_bone(**{**GOOD, "knee": knee})
