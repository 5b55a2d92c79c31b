# SPDX-License-Identifier: GPL-3.0-or-later
"""Properties of the scalar two-bone solver over random limbs, targets, poles, hinges and options."""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import (
    add,
    all_finite,
    angle_between,
    cases,
    cross,
    dist,
    dot,
    finite,
    knee_tolerance,
    limbs,
    mul,
    norm,
    perpendicular_part,
    sub,
    unit,
    unit_vectors,
)

from solvers import Reach, ReachOptions, SolverError, solve_two_bone, solve_two_bone_batch
from solvers.constants import DEGENERATE, MIN_LENGTH
from solvers.two_bone import bend_range, reach_distance

#: Every length and position is checked to this fraction of the limb's size.
REL = 1e-9

#: Options under which a target inside the limb's range is simply reached.
RIGID_OPTIONS = [ReachOptions(), ReachOptions(mode=Reach.HOLD), ReachOptions(mode=Reach.STRETCH, max_stretch=2.0)]


def independent_range(upper: float, lower: float, options: ReachOptions) -> tuple[float, float]:
    """Root-to-end distances the bend limits allow, by the law of cosines with bend = pi - interior
    angle: d^2 = u^2 + l^2 + 2ul cos(bend) = (u - l)^2 + 4ul cos^2(bend / 2), a sum that cannot cancel."""

    def at(bend):
        return math.sqrt((upper - lower) ** 2 + 4.0 * upper * lower * math.cos(0.5 * bend) ** 2)

    return at(options.max_bend), at(options.min_bend)


def bend_angle(root, knee, end) -> float:
    """0 when the limb is straight, pi when folded flat."""
    return angle_between(sub(knee, root), sub(end, knee))


def assert_lengths(case, solution, scale: float = 1.0):
    limb = case.limb
    tol = REL * limb.size * scale
    assert dist(solution.knee, limb.root) == pytest.approx(limb.upper * scale, abs=tol)
    assert dist(solution.end, solution.knee) == pytest.approx(limb.lower * scale, abs=tol)


# ---------------------------------------------------------------------------------------------
# Reaching and keeping lengths


@given(cases(kind="reachable", options=False), st.sampled_from(RIGID_OPTIONS))
def test_reachable_targets_are_reached_with_lengths_kept(case, options):
    solution = solve_two_bone(*case.args(), pole=case.pole, hinge=case.hinge, plane=case.plane, options=options)
    assert solution.reached and not solution.held and solution.stretch == 1.0
    assert dist(solution.end, case.target) <= REL * case.limb.size
    assert_lengths(case, solution)


@given(cases(kind="edge", options=False))
def test_targets_at_either_end_of_the_range_are_reached(case):
    """At exactly |l1 - l2| or l1 + l2 rounding may put the target a hair outside: it is still hit."""
    solution = solve_two_bone(*case.args(), **case.kwargs())
    assert all_finite(solution.knee, solution.end)
    assert dist(solution.end, case.target) <= REL * case.limb.size
    assert_lengths(case, solution)


@given(cases())
def test_lengths_are_kept_in_every_mode_and_scaled_by_the_stretch(case):
    solution = solve_two_bone(*case.args(), **case.kwargs())
    assert all_finite(solution.knee, solution.end, solution.stretch)
    options = case.options
    if solution.held:
        assert options.mode is Reach.HOLD
        assert (solution.knee, solution.end, solution.stretch) == (case.limb.knee, case.limb.end, 1.0)
        return
    if options.mode is Reach.STRETCH:
        assert 1.0 <= solution.stretch <= options.max_stretch
    else:
        assert solution.stretch == 1.0
    assert_lengths(case, solution, solution.stretch)


@given(cases(kind=("reachable", "edge", "far", "near", "tiny")))
def test_the_end_goes_along_the_line_to_the_target(case):
    solution = solve_two_bone(*case.args(), **case.kwargs())
    assume(not solution.held and case.target != case.limb.root)
    aim = unit(sub(case.target, case.limb.root))
    reach = sub(solution.end, case.limb.root)
    assert norm(perpendicular_part(reach, aim)) <= REL * case.limb.size
    assert dot(reach, aim) >= -REL * case.limb.size
    if solution.reached:
        assert dist(solution.end, case.target) <= REL * case.limb.size


ANY_COORDINATE = st.one_of(
    finite(-2.5e11, 2.5e11),
    st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e-160, 1.0, -1.0, 2.5e11, -2.5e11]),
    finite(-1e-3, 1e-3),
)
ANY_POINT = st.tuples(ANY_COORDINATE, ANY_COORDINATE, ANY_COORDINATE)


@given(
    st.lists(ANY_POINT, min_size=1, max_size=4),
    st.lists(st.integers(0, 3), min_size=7, max_size=7),
    st.lists(st.booleans(), min_size=3, max_size=3),
    st.sampled_from(list(Reach)),
    finite(0.0, 1e11),
    finite(1.0, 1e3),
    finite(1e-6, 1.0),
    finite(0.0, math.pi),
    finite(0.0, math.pi),
)
def test_no_nan_or_inf_for_any_finite_input_in_range(
    pool, picks, present, mode, softness, max_stretch, stretch_start, bend_a, bend_b
):
    """Coincident points, a target on the root, a pole on the root or on the line, zero and tiny
    hinges: the result is finite, or a SolverError for a zero-length bone, and nothing else."""
    root, knee, end, target, pole, hinge, plane = (pool[i % len(pool)] for i in picks)
    options = ReachOptions(mode, softness, max_stretch, stretch_start, min(bend_a, bend_b), max(bend_a, bend_b))
    extra = dict(pole=pole if present[0] else None, hinge=hinge if present[1] else None)
    extra["plane"] = plane if present[2] else None
    shortest_bone = min(dist(root, knee), dist(knee, end))
    try:
        solution = solve_two_bone(root, knee, end, target, options=options, **extra)
    except SolverError as error:
        assert shortest_bone < MIN_LENGTH * (1.0 + 1e-9), error
        return
    assert shortest_bone >= MIN_LENGTH * (1.0 - 1e-9)
    assert all_finite(solution.knee, solution.end, solution.stretch)


# ---------------------------------------------------------------------------------------------
# Choosing the knee on its circle


@given(cases(pole=False, hinge=False, plane=False))
def test_without_pole_hinge_or_plane_the_knee_moves_least(case):
    solution = solve_two_bone(*case.args(), options=case.options)
    limb = case.limb
    assume(not solution.held and dist(solution.end, limb.root) > 1e-6 * limb.size)
    tol = REL * limb.size
    # the knee is on both spheres, so on the circle where they meet ...
    assert dist(solution.knee, limb.root) == pytest.approx(limb.upper * solution.stretch, abs=tol)
    assert dist(solution.knee, solution.end) == pytest.approx(limb.lower * solution.stretch, abs=tol)
    # ... and no sampled point of that circle is nearer to where the knee was. (Its radius is taken
    # from the knee: near full extension the radius is only defined to ~1e-8 of the limb's size.)
    axis = unit(sub(solution.end, limb.root))
    offset = sub(solution.knee, limb.root)
    centre = add(limb.root, mul(axis, dot(offset, axis)))
    radius = norm(perpendicular_part(offset, axis))
    first = np.array(unit(perpendicular_part((1.0, 0.0, 0.0) if abs(axis[0]) < 0.9 else (0.0, 1.0, 0.0), axis)))
    second = np.cross(axis, first)
    a = np.linspace(0.0, 2.0 * math.pi, 720, endpoint=False)[:, None]
    circle = np.array(centre) + radius * (np.cos(a) * first + np.sin(a) * second)
    nearest = np.linalg.norm(circle - np.array(limb.knee), axis=1).min()
    # A knee within DEGENERATE of the limb's size from the line counts as on it (any side will do):
    # choosing the far side then costs up to twice that distance.
    assert dist(solution.knee, limb.knee) <= nearest + tol + 2.0 * DEGENERATE * limb.size


@given(cases(pole=False, hinge=("random", "random", "along", "nearly along", "tiny")))
def test_a_hinge_never_bends_the_knee_backwards(case):
    solution = solve_two_bone(*case.args(), **case.kwargs())
    assume(not solution.held)  # HOLD keeps the pose it was given, whatever its bend
    bend = cross(sub(solution.knee, case.limb.root), sub(solution.end, solution.knee))
    assert dot(bend, unit(case.hinge)) >= -4 * REL * case.limb.size**2


@given(
    cases(kind="reachable", pole="random", hinge=False, plane=False, modes=(Reach.EXTEND, Reach.STRETCH)), st.booleans()
)
def test_the_knee_points_to_the_pole_side(case, with_hinge):
    limb = case.limb
    hinge = None
    if with_hinge:  # a hinge that agrees with the pole changes nothing
        hinge = cross(sub(case.pole, limb.root), sub(case.target, limb.root))
    solution = solve_two_bone(*case.args(), pole=case.pole, hinge=hinge, options=case.options)
    assume(not solution.held)
    aim = unit(sub(case.target, limb.root))
    to_pole = perpendicular_part(sub(case.pole, limb.root), aim)
    to_knee = perpendicular_part(sub(solution.knee, limb.root), aim)
    assume(norm(to_pole) > 1e-6 * limb.size and norm(to_knee) > 1e-6 * limb.size)
    assert dist(unit(to_knee), unit(to_pole)) <= 1e-7


@given(cases(kind="reachable", pole=False, plane=False, options=False))
def test_a_pole_takes_precedence_over_the_hinge(case):
    """The swivel order puts an explicit pole first: a pole behind the hinge turns the knee to it."""
    limb = case.limb
    aim = unit(sub(case.target, limb.root))
    side = perpendicular_part(sub(limb.knee, limb.root), aim)
    assume(norm(side) > 1e-3 * limb.size)
    hinge = cross(side, aim)  # the knee's current side is the forward side
    pole = sub(limb.root, side)  # behind it
    solution = solve_two_bone(*case.args(), pole=pole, hinge=hinge)
    bend = cross(sub(solution.knee, limb.root), sub(solution.end, solution.knee))
    assert dot(bend, hinge) < 0.0
    assert dot(sub(solution.knee, limb.root), side) < 0.0


# ---------------------------------------------------------------------------------------------
# Out of reach: HOLD and EXTEND


@given(cases(modes=(Reach.HOLD,)))
def test_hold_returns_the_input_pose_when_out_of_reach(case):
    options = case.options
    solution = solve_two_bone(*case.args(), **case.kwargs())
    shortest, longest = independent_range(case.limb.upper, case.limb.lower, options)
    distance = dist(case.target, case.limb.root)
    margin = 1e-9 * case.limb.size
    if distance > longest + margin or distance < shortest - margin:
        assert solution.held and not solution.reached
        assert (solution.knee, solution.end, solution.stretch) == (case.limb.knee, case.limb.end, 1.0)
    elif shortest + margin < distance < longest - max(options.softness, margin):
        assert solution.reached and not solution.held
        assert dist(solution.end, case.target) <= REL * case.limb.size


@given(cases(kind="far", pole=True, hinge=True, plane=True, options=False))
def test_extend_too_far_points_straight_at_the_target(case):
    limb = case.limb
    solution = solve_two_bone(*case.args(), **case.kwargs())
    aim = unit(sub(case.target, limb.root))
    tol = REL * limb.size
    assert not solution.reached and not solution.held
    assert dist(solution.knee, add(limb.root, mul(aim, limb.upper))) <= tol
    assert dist(solution.end, add(limb.root, mul(aim, limb.upper + limb.lower))) <= tol


@given(cases(kind="near", pole=True, hinge=True, plane=True, options=False))
def test_extend_too_close_folds_with_the_longer_bone_toward_the_target(case):
    limb = case.limb
    assume(case.target != limb.root and abs(limb.upper - limb.lower) > 1e-6 * limb.size)
    solution = solve_two_bone(*case.args(), **case.kwargs())
    aim = unit(sub(case.target, limb.root))
    tol = REL * limb.size
    assert dist(solution.end, add(limb.root, mul(aim, abs(limb.upper - limb.lower)))) <= tol
    toward = 1.0 if limb.upper > limb.lower else -1.0  # the upper bone points at the target if it is longer
    assert dist(solution.knee, add(limb.root, mul(aim, toward * limb.upper))) <= tol
    assert_lengths(case, solution)


@pytest.mark.parametrize("exponent", [-3, -8, -16, -100, -150, -155, -160, -162, -165, -170, -200, -300, -320])
@pytest.mark.parametrize("lower", [0.125, 0.25, 0.125 + 2**-55])
def test_targets_a_hair_from_the_root_keep_the_bone_lengths(exponent, lower):
    """Equal (or all but equal) bones and a target 1e-3 to 1e-320 from the root, where squares and
    products of the small distances underflow: the knee must stay on both bones' spheres."""
    root, knee, end = (0.0, 0.0, 0.0), (0.125, 0.0, 0.0), (0.125, lower, 0.0)
    for target in [(10.0**exponent, 0.0, 0.0), (0.0, 3.0 * 10.0**exponent, -(10.0**exponent))]:
        solution = solve_two_bone(root, knee, end, target)
        assert dist(solution.knee, root) == pytest.approx(0.125, abs=1e-15)
        assert dist(solution.end, solution.knee) == pytest.approx(lower, abs=1e-15)
        if lower < 0.2:  # (all but) equal bones reach a target at the root; the longer lower one folds back
            assert dist(solution.end, target) <= 1e-15
        else:
            assert dist(solution.end, mul(unit(target), 0.125)) <= 1e-15


@given(limbs(), st.sampled_from(RIGID_OPTIONS))
def test_a_target_on_the_root_keeps_the_current_aim(limb, options):
    solution = solve_two_bone(limb.root, limb.knee, limb.end, limb.root, options=options)
    assert all_finite(solution.knee, solution.end)
    reach = sub(solution.end, limb.root)
    was = sub(limb.end, limb.root) if dist(limb.end, limb.root) > 0.0 else sub(limb.knee, limb.root)
    if norm(reach) > 1e-6 * limb.size:
        assert angle_between(reach, was) <= 1e-6
    if not solution.held:
        assert dist(solution.knee, limb.root) == pytest.approx(limb.upper, abs=REL * limb.size)


# ---------------------------------------------------------------------------------------------
# Soft IK


@given(
    finite(0.05, 1.0),
    finite(0.05, 1.0),
    finite(0.001, 1.0),
    finite(0.0, 3.0),
    finite(0.0, 3.0),
    st.sampled_from([Reach.EXTEND, Reach.STRETCH]),
    finite(0.3, 1.0),
    finite(1.0, 3.0),
)
def test_soft_ik_is_monotone_and_continuous(upper, lower, softness, a, b, mode, start, max_stretch):
    options = ReachOptions(mode=mode, softness=softness, stretch_start=start, max_stretch=max_stretch)
    near, far = min(a, b), max(a, b)
    f_near, _, _ = reach_distance(near, upper, lower, options)
    f_far, _, _ = reach_distance(far, upper, lower, options)
    slope = 1.0 if mode is Reach.EXTEND else 1.0 / start
    assert f_near <= f_far + 1e-15
    assert f_far - f_near <= slope * (far - near) * (1.0 + 1e-9) + 1e-15


@given(finite(0.05, 1.0), finite(0.05, 1.0), finite(0.001, 0.5), finite(-0.99, 10.0), unit_vectors())
def test_soft_ik_never_reaches_full_extension(upper, lower, softness, beyond, direction):
    size = upper + lower
    options = ReachOptions(softness=softness * size)
    soft = min(options.softness, size - abs(upper - lower))  # the soft zone never reaches below the shortest reach
    distance = size - soft + soft * (beyond + 1.0)  # from the start of the soft zone to 10 softness beyond
    result, _, reached = reach_distance(distance, upper, lower, options)
    assert result < size and not reached
    solution = solve_two_bone(
        (0.0, 0.0, 0.0), (0.0, upper, 0.0), (0.0, upper + lower, 0.0), mul(direction, distance), options=options
    )
    assert norm(solution.end) < size
    assert bend_angle((0.0, 0.0, 0.0), solution.knee, solution.end) > 0.0


@given(finite(0.05, 1.0), finite(0.05, 1.0), finite(0.001, 0.5), finite(0.0, 3.0))
def test_soft_ik_leaves_the_range_before_the_soft_zone_alone(upper, lower, softness, distance):
    size = upper + lower
    soft, hard = ReachOptions(softness=softness * size), ReachOptions()
    plain = min(max(distance, abs(upper - lower)), size)
    if distance <= size - softness * size:
        assert reach_distance(distance, upper, lower, soft)[0] == plain
    assert reach_distance(distance, upper, lower, hard) == (plain, 1.0, abs(upper - lower) <= distance <= size)


# ---------------------------------------------------------------------------------------------
# Stretch and bend limits


@given(cases(modes=(Reach.STRETCH,)))
def test_stretch_starts_at_its_fraction_of_the_reach_and_is_capped(case):
    options = case.options
    solution = solve_two_bone(*case.args(), **case.kwargs())
    shortest, longest = independent_range(case.limb.upper, case.limb.lower, options)
    start = max(options.stretch_start * longest, shortest)  # never below the shortest reach
    distance = dist(case.target, case.limb.root)
    if distance <= start:
        expected = 1.0
    else:  # a limb allowed only to fold shut has no reach: it stretches all it may
        expected = min(distance / start, options.max_stretch) if start > 0.0 else options.max_stretch
    assert solution.stretch == pytest.approx(expected, rel=1e-9)
    assert 1.0 <= solution.stretch <= options.max_stretch
    if options.softness == 0.0 and shortest_ok(case, options, solution.stretch, distance):
        assert solution.reached
        assert dist(solution.end, case.target) <= REL * case.limb.size * solution.stretch


@given(cases(modes=(Reach.STRETCH,)))
def test_stretch_reaches_every_target_that_extend_reaches(case):
    """Stretching never costs reach: where the unstretched limb reaches, the stretching one does too."""
    extend = ReachOptions(
        Reach.EXTEND,
        *(getattr(case.options, f) for f in ("softness", "max_stretch", "stretch_start", "min_bend", "max_bend")),
    )
    if solve_two_bone(*case.args(), pole=case.pole, hinge=case.hinge, plane=case.plane, options=extend).reached:
        solution = solve_two_bone(*case.args(), **case.kwargs())
        assert solution.reached
        assert dist(solution.end, case.target) <= REL * case.limb.size * solution.stretch


def test_stretch_from_half_reach_still_reaches_a_target_near_the_shortest_reach():
    """Bones 1 and 0.25 reach from 0.75 to 1.25; stretching from half of that (0.625) used to scale the
    shortest reach too, past a target at 0.9 (stretch 1.44, shortest 1.08): stretching starts at 0.75."""
    options = ReachOptions(mode=Reach.STRETCH, stretch_start=0.5, max_stretch=2.0)
    solution = solve_two_bone((0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 1.25, 0.0), (0.9, 0.0, 0.0), options=options)
    assert solution.reached and solution.stretch == pytest.approx(1.2)
    assert dist(solution.end, (0.9, 0.0, 0.0)) <= 1e-15
    batch = solve_two_bone_batch(
        [[0.0, 0.0, 0.0]],
        [[0.0, 1.0, 0.0]],
        [[0.0, 1.25, 0.0]],
        [[0.9, 0.0, 0.0]],
        mode=Reach.STRETCH,
        stretch_start=0.5,
        max_stretch=2.0,
    )
    assert batch.reached[0] and np.abs(batch.end[0] - [0.9, 0.0, 0.0]).max() <= 1e-15


def test_a_bend_limit_a_hair_below_pi_folds_the_limb_at_its_fold_and_no_further():
    """Rounding put the shortest reach of such a limit below |upper - lower|: a target on the root was then
    reported reached with the knee at twice the upper bone's length from the root (found by hypothesis)."""
    root, knee, end = (0.0, 0.0, 0.0), (0.3582713991478249, 0.0, 0.0), (0.6450486431982714, 0.21474917401976354, 0.0)
    target = (5.551115123125783e-17, 0.0, 0.0)
    options = ReachOptions(max_bend=3.1415926535897927, softness=0.3582713991478249)
    scalar = solve_two_bone(root, knee, end, target, options=options)
    batch = solve_two_bone_batch([root], [knee], [end], [target], max_bend=options.max_bend, softness=options.softness)
    for solved_knee, solved_end in ((scalar.knee, scalar.end), (batch.knee[0], batch.end[0])):
        assert dist(solved_knee, root) == pytest.approx(dist(knee, root), abs=1e-12)
        assert dist(solved_end, solved_knee) == pytest.approx(dist(end, knee), abs=1e-12)


@given(limbs(), unit_vectors(), finite(1.0, 1.99))
def test_stretching_onto_the_target_always_counts_as_reached(limb, direction, beyond):
    """With stretch_start = 1 the stretched reach equals the distance: rounding must not decide
    (short of max_stretch = 2, where the reach ends and rounding does decide)."""
    options = ReachOptions(mode=Reach.STRETCH, max_stretch=2.0)
    target = add(limb.root, mul(direction, (limb.upper + limb.lower) * beyond))
    solution = solve_two_bone(limb.root, limb.knee, limb.end, target, options=options)
    assert solution.reached and dist(solution.end, target) <= REL * limb.size * beyond


@pytest.mark.parametrize("mode", list(Reach))
def test_a_limb_allowed_only_to_fold_shut_has_no_reach_to_divide_by(mode):
    """Equal bones with min_bend = max_bend = pi reach nowhere but the root (full reach 0)."""
    options = ReachOptions(mode=mode, max_stretch=2.0, min_bend=math.pi, max_bend=math.pi, softness=0.1)
    solution = solve_two_bone((0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 2.0, 0.0), (1.0, 1.0, 0.0), options=options)
    assert all_finite(solution.knee, solution.end, solution.stretch)
    assert solution.held or dist(solution.end, (0.0, 0.0, 0.0)) <= 1e-15


def shortest_ok(case, options, stretch, distance) -> bool:
    shortest, longest = independent_range(case.limb.upper * stretch, case.limb.lower * stretch, options)
    margin = 1e-9 * case.limb.size * stretch
    return shortest + margin < distance < longest - margin


@given(cases())
def test_bend_limits_are_respected(case):
    options = case.options
    solution = solve_two_bone(*case.args(), **case.kwargs())
    assume(not solution.held)
    bend = bend_angle(case.limb.root, solution.knee, solution.end)

    def tolerance(limit):
        # Near straight or folded flat, an angle set through a distance is only good to ~sqrt(1e-16).
        return 2e-7 if min(limit, math.pi - limit) < 1e-4 else 1e-9

    assert options.min_bend - tolerance(options.min_bend) <= bend <= options.max_bend + tolerance(options.max_bend)


@given(finite(0.05, 1.0), finite(0.05, 1.0), finite(0.0, math.pi), finite(0.0, math.pi))
def test_bend_range_is_the_law_of_cosines(upper, lower, a, b):
    options = ReachOptions(min_bend=min(a, b), max_bend=max(a, b))
    expected = independent_range(upper, lower, options)
    assert bend_range(upper, lower, options) == pytest.approx(expected, abs=1e-12)


@given(cases(options=False), st.sampled_from(RIGID_OPTIONS[:2]))
def test_solving_twice_changes_nothing(case, options):
    """A solved pose is its own solution: no drift when a handler solves every frame."""
    first = solve_two_bone(*case.args(), **{**case.kwargs(), "options": options})
    again = solve_two_bone(case.limb.root, first.knee, first.end, case.target, **{**case.kwargs(), "options": options})
    # A target on the root leaves the aim free, and the first solve may change it.
    assume(not first.held and dist(first.end, case.limb.root) > 1e-6 * case.limb.size)
    size = case.limb.size
    assert dist(again.end, first.end) <= REL * size
    # Near full extension or folded, the knee's distance from the line is only defined to ~sqrt(1e-16)
    # of the limb: the bone lengths measured from the solved points differ in their last bit.
    aim = unit(sub(first.end, case.limb.root))
    radius = norm(perpendicular_part(sub(first.knee, case.limb.root), aim))
    assert dist(again.knee, first.knee) <= 4 * knee_tolerance(size, dist(first.end, case.limb.root), radius)


# ---------------------------------------------------------------------------------------------
# Bad input


NON_FINITE = [math.nan, math.inf, -math.inf]
GOOD = dict(root=(0.0, 0.0, 0.0), knee=(0.0, 1.0, 0.0), end=(0.0, 2.0, 0.0), target=(1.0, 1.0, 0.0))


@pytest.mark.parametrize("argument", ["root", "knee", "end", "target", "pole", "hinge", "plane"])
@pytest.mark.parametrize("value", NON_FINITE)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_non_finite_input_is_rejected(argument, value, axis):
    vector = [0.5, 0.5, 0.5]
    vector[axis] = value
    arguments = {**GOOD, argument: tuple(vector)}
    with pytest.raises(SolverError, match="finite"):
        solve_two_bone(**arguments)


@pytest.mark.parametrize("argument", ["root", "target", "pole"])
def test_coordinates_beyond_the_limit_are_rejected(argument):
    with pytest.raises(SolverError, match="within"):
        solve_two_bone(**{**GOOD, argument: (3e12, 0.0, 0.0)})


@pytest.mark.parametrize(
    "knee, end",
    [((0.0, 0.0, 0.0), (0.0, 1.0, 0.0)), ((0.0, 1.0, 0.0), (0.0, 1.0, 0.0)), ((1e-13, 0.0, 0.0), (1.0, 0.0, 0.0))],
)
def test_zero_length_bones_are_rejected(knee, end):
    with pytest.raises(SolverError, match="non-zero length"):
        solve_two_bone((0.0, 0.0, 0.0), knee, end, (1.0, 1.0, 0.0))


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(softness=-0.1), "softness"),
        (dict(softness=math.nan), "softness"),
        (dict(softness=math.inf), "softness"),
        (dict(max_stretch=0.5), "max_stretch"),
        (dict(max_stretch=math.nan), "max_stretch"),
        (dict(max_stretch=math.inf), "max_stretch"),
        (dict(stretch_start=0.0), "stretch_start"),
        (dict(stretch_start=1.5), "stretch_start"),
        (dict(stretch_start=math.nan), "stretch_start"),
        (dict(min_bend=1.0, max_bend=0.5), "bend limits"),
        (dict(min_bend=-0.1), "bend limits"),
        (dict(max_bend=4.0), "bend limits"),
        (dict(min_bend=math.nan), "bend limits"),
        (dict(max_bend=math.nan), "bend limits"),
        (dict(mode=7), "reach mode"),
        (dict(mode="far"), "reach mode"),
    ],
)
def test_bad_options_are_rejected(options, message):
    with pytest.raises(SolverError, match=message):
        ReachOptions(**options)
