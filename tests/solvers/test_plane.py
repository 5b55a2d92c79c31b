# SPDX-License-Identifier: GPL-3.0-or-later
"""Limbs held in a plane: every joint in it, goals reached there or at their projection, the same pose as
the 3D solver given a pole in the plane; and the whole chain solve, posed by an independent model."""

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import (
    MANY_ROWS,
    OPTION_NAMES,
    Limb,
    add,
    cross,
    dist,
    dot,
    finite,
    knee_tolerance,
    limbs,
    mul,
    norm,
    one_of,
    perpendicular_units,
    poles,
    reach_options,
    sub,
    targets,
    tilted,
    unit,
    unit_vectors,
)
from test_chains import batch_of, end_goal
from test_local_rotation import SEVERAL_CHAINS, q_mul, random_chain, random_quaternion, same_rotation

from solvers import (
    Reach,
    ReachOptions,
    SolverError,
    solve_three_bone_plane,
    solve_two_bone_batch,
    solve_two_bone_plane,
    two_bone_angles,
)
from solvers import rotation_modes as rm
from solvers.chains import ChainBatch, solve_chains
from solvers.plane import project, root_angles

REL = 1e-9
#: Where a goal lies: the kinds of :func:`strategies.targets` turned into the plane, and on the normal through the root.
KINDS = ("reachable", "reachable", "edge", "far", "near", "root", "tiny", "normal line")


@dataclass
class PlaneCase:
    limb: Limb
    normal: tuple  #: any length, 1e-300 to 100
    kind: str
    in_plane: tuple  #: the goal's projection, built in the plane
    goal: tuple  #: ``in_plane`` lifted off the plane along the normal
    pole: tuple | None
    hinge: tuple | None
    options: ReachOptions

    @property
    def unit(self):
        return unit(self.normal)

    def height(self, point) -> float:
        """Signed distance of ``point`` from the plane through the root."""
        return dot(sub(point, self.limb.root), self.unit)


@st.composite
def plane_cases(draw, kinds=KINDS, lifted=True, pole=True, hinge=True, options=True) -> PlaneCase:
    limb = draw(limbs())
    direction = draw(unit_vectors())
    magnitude = 10.0 ** draw(one_of((2.0, 0.0, -2.0, -300.0)))
    kind = draw(one_of(tuple(kinds)))
    if kind == "normal line":
        in_plane = limb.root
    else:  # a goal of that kind, turned about the root into the plane
        target, _ = draw(targets(limb, (kind,)))
        in_plane = add(limb.root, mul(draw(perpendicular_units(direction)), dist(target, limb.root)))
    lift = limb.size * draw(finite(-3.0, 3.0)) if lifted or kind == "normal line" else 0.0
    goal = add(in_plane, mul(direction, lift))
    hinge_axis = None
    if hinge and draw(st.booleans()):
        hinge_axis = mul(draw(unit_vectors()), 10.0 ** draw(finite(-2.0, 2.0)))
    return PlaneCase(
        limb,
        mul(direction, magnitude),
        kind,
        in_plane,
        goal,
        draw(poles(limb, goal)) if pole else None,
        hinge_axis,
        draw(reach_options(limb.size)) if options else ReachOptions(),
    )


def option_arrays(options) -> dict:
    return {name: np.array([getattr(o, name) for o in options]) for name in OPTION_NAMES}


def vectors_or_zero(values) -> np.ndarray:
    return np.array([(0.0, 0.0, 0.0) if v is None else v for v in values], dtype=float)


def solve_rows(rows: list[PlaneCase], goals=None):
    return solve_two_bone_plane(
        np.array([r.limb.root for r in rows]),
        np.array([r.limb.knee for r in rows]),
        np.array([r.limb.end for r in rows]),
        np.array([r.goal for r in rows] if goals is None else goals),
        np.array([r.normal for r in rows]),
        pole=vectors_or_zero(r.pole for r in rows),
        pole_mask=np.array([r.pole is not None for r in rows]),
        hinge=vectors_or_zero(r.hinge for r in rows),
        **option_arrays([r.options for r in rows]),
    )


# ---------------------------------------------------------------------------------------------
# Two bones in a plane


@MANY_ROWS
@given(st.lists(plane_cases(), min_size=1, max_size=6))
def test_every_joint_stays_in_the_plane_with_the_bones_lengths(rows):
    """Any goal (on the root, on the normal through it, out of reach), pole, hinge, reach setting and
    normal (as short as 1e-300): the knee and end lie in the plane, the bones keep their lengths (times
    the stretch), nothing is NaN; a chain held (HOLD, out of reach) keeps its pose exactly."""
    solved = solve_rows(rows)
    for i, r in enumerate(rows):
        knee, end, size = tuple(solved.knee[i]), tuple(solved.end[i]), r.limb.size
        assert np.isfinite(solved.knee[i]).all() and np.isfinite(solved.end[i]).all()
        if solved.held[i]:
            assert (knee, end) == (r.limb.knee, r.limb.end)
            continue
        assert abs(r.height(knee)) <= REL * size and abs(r.height(end)) <= REL * size
        stretch = float(solved.stretch[i])
        assert dist(knee, r.limb.root) == pytest.approx(r.limb.upper * stretch, abs=REL * size * stretch)
        assert dist(end, knee) == pytest.approx(r.limb.lower * stretch, abs=REL * size * stretch)


@MANY_ROWS
@given(st.lists(plane_cases(kinds=("reachable",), options=False), min_size=1, max_size=6))
def test_reachable_goals_are_reached_or_their_projection_is(rows):
    """Goals in the plane, or lifted off it by up to three limb lengths: the end lands where the goal
    was built in the plane, whatever the pole and hinge say about the knee."""
    solved = solve_rows(rows)
    assert solved.reached.all()
    for i, r in enumerate(rows):
        assert dist(tuple(solved.end[i]), r.in_plane) <= REL * r.limb.size


@MANY_ROWS
@given(
    st.lists(plane_cases(kinds=("reachable", "far", "near", "tiny"), lifted=False, pole=False), min_size=1, max_size=6)
)
def test_the_3d_solver_given_a_pole_in_the_plane_agrees(rows):
    """Goals in the plane, reachable, out of reach, in the dead zone and a hair from the root (not on it,
    where the 3D solver keeps an aim off the plane; nor on the range's edge, where either may round to
    the other side), every reach setting: the 3D solver with a pole in the plane, on the side the planar solve bent
    the knee to, puts the knee and end in the same places and agrees on reached, stretch and held."""
    # Not on the root (a "near" goal of equal bones is), nor so near it that its offset has lost digits (to
    # the root's coordinates, or to subnormal numbers): its direction then leaves the plane by those digits,
    # which the planar solve projects out and the 3D solve keeps.
    assume(all(dist(r.in_plane, r.limb.root) > 1e-290 * r.limb.size for r in rows))
    assume(all(dist(r.in_plane, r.limb.root) > 1e-6 * norm(r.limb.root) for r in rows))
    solved = solve_rows(rows)
    roots = np.array([r.limb.root for r in rows])
    pole = []
    for i, r in enumerate(rows):
        aim = unit(sub(r.in_plane, r.limb.root))
        across = cross(r.unit, aim)
        side = math.copysign(1.0, dot(sub(tuple(solved.knee[i]), r.limb.root), across))
        pole.append(add(r.limb.root, add(mul(aim, r.limb.size), mul(across, side * r.limb.size))))
    three_d = solve_two_bone_batch(
        roots,
        np.array([r.limb.knee for r in rows]),
        np.array([r.limb.end for r in rows]),
        np.array([r.in_plane for r in rows]),
        pole=np.array(pole),
        **option_arrays([r.options for r in rows]),
    )
    np.testing.assert_array_equal(three_d.reached, solved.reached)
    np.testing.assert_array_equal(three_d.held, solved.held)
    np.testing.assert_allclose(three_d.stretch, solved.stretch, rtol=1e-12)
    for i, r in enumerate(rows):
        size = r.limb.size * solved.stretch[i]
        distance = dist(tuple(solved.end[i]), r.limb.root)
        knee, end = tuple(solved.knee[i]), tuple(solved.end[i])
        offset = norm(cross(sub(knee, r.limb.root), unit(sub(end, r.limb.root)))) if distance > 0.0 else size
        assert dist(tuple(three_d.end[i]), tuple(solved.end[i])) <= REL * size
        assert dist(tuple(three_d.knee[i]), tuple(solved.knee[i])) <= knee_tolerance(size, distance, offset)


@given(st.lists(plane_cases(kinds=("near",), lifted=False, pole=False, hinge=False, options=False), min_size=1))
def test_a_goal_in_the_dead_zone_folds_the_longer_bone_toward_it(rows):
    """Nearer than |upper - lower|: folded flat, the end |upper - lower| from the root toward the goal."""
    rows = [r for r in rows if abs(r.limb.upper - r.limb.lower) > 1e-6 * r.limb.size]
    assume(rows)
    solved = solve_rows(rows)
    assert not solved.reached.any()
    for i, r in enumerate(rows):
        root, knee, end = r.limb.root, tuple(solved.knee[i]), tuple(solved.end[i])
        upper, lower = r.limb.upper, r.limb.lower
        assert dot(sub(knee, root), sub(end, knee)) == pytest.approx(-upper * lower, abs=REL * r.limb.size**2)
        assert dist(end, root) == pytest.approx(abs(upper - lower), abs=REL * r.limb.size)
        aim = sub(r.in_plane, root)
        if norm(aim) > 1e-6 * r.limb.size:  # the longer bone points at the goal
            longer = sub(knee, root) if upper > lower else sub(end, knee)
            assert dot(unit(longer), unit(aim)) == pytest.approx(1.0, abs=1e-9)


@given(plane_cases(kinds=("reachable",), lifted=True, options=False))
def test_the_knee_goes_toward_the_pole_else_as_its_hinge_bends_else_where_it_is(case):
    """Each decides where it is clearly off the line to the goal (pole, knee now) or out of the plane
    (hinge); cases within rounding of the solver's thresholds are left out."""
    solved = solve_rows([case])
    root, knee, end = case.limb.root, tuple(solved.knee[0]), tuple(solved.end[0])
    size = case.limb.size
    across = cross(case.unit, unit(sub(end, root)))
    offset = dot(sub(knee, root), across)
    assume(abs(offset) > 1e-6 * size)  # bent: the side is not a matter of rounding

    def decides(value, scale):  # True, False, or None near the solver's threshold (1e-9 of the scale)
        return None if 0.5e-9 * scale <= abs(value) <= 2e-9 * scale else abs(value) > 2e-9 * scale

    toward_pole = 0.0 if case.pole is None else dot(sub(case.pole, root), across)
    along_hinge = 0.0 if case.hinge is None else dot(unit(case.hinge), case.unit)
    now = dot(sub(case.limb.knee, root), across)
    for value, scale in ((toward_pole, size), (along_hinge, 1.0), (now, size)):
        decided = decides(value, scale)
        assume(decided is not None)
        if decided:
            break
    if decides(toward_pole, size):
        assert offset * toward_pole > 0.0
    elif decides(along_hinge, 1.0):
        assert dot(cross(sub(knee, root), sub(end, knee)), case.unit) * along_hinge > 0.0
    elif decides(now, size):
        assert offset * now > 0.0
    else:
        assert dot(cross(sub(knee, root), sub(end, knee)), case.unit) > 0.0


@given(st.tuples(finite(-2.0, 2.0), finite(0.05, 1.0), finite(0.05, 1.0)), finite(0.0, 1.0))
def test_root_angles_agree_with_the_scalar_planar_solver(lengths, fraction):
    scale, a, b = lengths
    upper, lower = 10.0**scale * a, 10.0**scale * b
    distance = abs(upper - lower) + (upper + lower - abs(upper - lower)) * fraction
    # Nearer the root the scalar solver's product of the triangle's four factors underflows (root_angles
    # takes their square roots one by one).
    assume(distance > 1e-100 * (upper + lower))
    angle = root_angles(np.array([upper]), np.array([lower]), np.array([distance]))[0]
    assert angle == pytest.approx(two_bone_angles(upper, lower, distance, 0.0).shoulder, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Three bones in a plane


@MANY_ROWS
@given(st.data())
def test_three_bone_chains_stay_in_the_plane_with_the_end_bone_along_its_direction_projected(data):
    """The end bone points along the goal direction's part in the plane (its own where the direction is the
    normal), keeps its length, and puts its tip on the goal's projection when the leg reaches."""
    case = data.draw(plane_cases(kinds=("reachable", "far", "near"), options=False))
    limb, size = case.limb, case.limb.size
    end_length = size * data.draw(finite(0.05, 0.5))
    tip = add(limb.end, mul(data.draw(unit_vectors()), end_length))
    kind = data.draw(one_of(("random", "random", "normal", "nearly normal")))
    if kind == "random":
        direction = data.draw(unit_vectors())
    else:
        direction = case.unit if kind == "normal" else data.draw(tilted(case.unit, -12.0, -6.0))
    solved = solve_three_bone_plane(
        *(np.array([p]) for p in (limb.root, limb.knee, limb.end, tip, case.goal, direction, case.normal))
    )
    joints = [tuple(solved.knee[0]), tuple(solved.ankle[0]), tuple(solved.tip[0])]
    assert all(abs(case.height(p)) <= REL * size for p in joints)
    assert dist(joints[2], joints[1]) == pytest.approx(end_length, abs=REL * size)
    for wanted in (direction, sub(tip, limb.end)):  # the direction's part in the plane, else the end bone's
        part = sub(wanted, mul(case.unit, dot(wanted, case.unit)))
        if norm(part) > 1e-9 * norm(wanted):
            assume(norm(part) > 1e-8 * norm(wanted))  # clear of the solver's threshold
            assert dist(unit(sub(joints[2], joints[1])), unit(part)) <= 1e-6
            break
        assume(norm(part) < 1e-10 * norm(wanted))
    if solved.reached[0]:
        assert dist(joints[2], case.in_plane) <= REL * size


# ---------------------------------------------------------------------------------------------
# The whole chain solve


@SEVERAL_CHAINS
@given(st.integers(0, 2**32 - 1), st.integers(2, 3), st.booleans(), st.booleans())
def test_chains_in_a_plane_are_posed_in_it_and_the_goal_off_it_is_reported(seed, k, sheared, connected):
    """Posed by the independent model: under a parent scaled unevenly, unconnected joints, any plane and a
    goal lifted off it. Every joint lies in the plane through the first, a reached tip on the goal's
    projection, and how far the goal lay off the plane is reported. A chain without a plane in the same
    batch is solved as it would be alone, to rounding."""
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, k, sheared, "uniform", connected) for _ in range(3)]
    normals = rng.normal(size=(3, 3))
    normals[2] = 0.0  # the last chain has no plane
    units = normals[:2] / np.linalg.norm(normals[:2], axis=1, keepdims=True)
    lifts = rng.uniform(-1.0, 1.0, 2) * [c.size() for c in chains[:2]]
    posed = [replace(c, quats=np.array([random_quaternion(rng) for _ in range(k)])) for c in chains]
    targets = np.array([p.joints()[-1] for p in posed])
    roots = np.array([c.joints()[0] for c in chains])
    in_plane = targets.copy()
    in_plane[:2] -= np.einsum("ni,ni->n", targets[:2] - roots[:2], units)[:, None] * units  # the projections
    goals = targets.copy()
    goals[:2] = in_plane[:2] + lifts[:, None] * units
    extra = {"end_rotation": np.array([end_goal(p) for p in posed])} if k == 3 else {}
    result = solve_chains(batch_of(chains, goals, plane=normals, **extra))
    alone = solve_chains(batch_of(chains[2:], goals[2:], **{key: v[2:] for key, v in extra.items()}))
    np.testing.assert_allclose(result.rotations[2], alone.rotations[0], rtol=0.0, atol=1e-14)
    assert result.off_plane[2] == 0.0
    for row in range(2):
        c, size = chains[row], chains[row].size()
        joints = replace(c, quats=result.rotations[row]).joints()
        assert np.abs((joints - joints[0]) @ units[row]).max() <= REL * size
        length = np.linalg.norm(np.diff(c.joints(), axis=0), axis=1).sum()  # what the reach tolerance is relative to
        reported = abs(lifts[row]) if abs(lifts[row]) > 1e-5 * length else 0.0
        assert result.off_plane[row] == pytest.approx(reported, abs=1e-12 * size)
        if result.reached[row]:
            assert np.linalg.norm(joints[-1] - in_plane[row]) <= REL * size


def test_an_end_rotation_in_the_plane_is_kept_and_one_off_it_turned_least():
    """A foot goal whose Y axis lies in the plane is taken as it is; one tilted out of it turns about the
    axis across both Y axes only, so its twist stays."""
    rng = np.random.default_rng(3)
    chain = random_chain(rng, 3, False, "uniform", True)
    normal = np.array([0.0, 1.0, 0.0])
    root = chain.joints()[0]
    flat = rm.matrix_to_quat(np.array([[[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]]))[0]  # Y along +Z
    tilt = np.array([math.cos(0.2), math.sin(0.2), 0.0, 0.0])  # 0.4 rad about X: Y leaves the plane toward -Y
    target = root + np.array([0.3, 0.0, -0.5]) * chain.size() * 0.3
    for goal in (flat, q_mul(tilt, flat)):
        result = solve_chains(batch_of([chain], [target], end_rotation=goal[None], plane=normal[None]))
        moved = replace(chain, quats=result.rotations[0])
        assert np.abs((moved.joints() - root) @ normal).max() <= REL * chain.size()
        assert same_rotation(end_goal(moved), flat, 1e-9)


# ---------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("normal", [(0.0, 0.0, 0.0), (math.nan, 0.0, 1.0), (math.inf, 0.0, 0.0)])
def test_a_plane_normal_must_be_a_direction(normal):
    one = np.array([[0.0, 0.0, 0.0]]), np.array([[0.0, 0.0, 1.0]]), np.array([[0.0, 0.0, 2.0]])
    with pytest.raises(SolverError, match="normal"):
        solve_two_bone_plane(*one, np.array([[1.0, 0.0, 1.0]]), np.array([normal]))
    with pytest.raises(SolverError, match="normal"):
        project(np.zeros((1, 3)), np.zeros((1, 3)), np.array([normal]))


def test_chain_planes_must_be_finite_normals_per_chain():
    rng = np.random.default_rng(1)
    chains = [random_chain(rng, 2, False, "uniform", True) for _ in range(2)]
    good = batch_of(chains, [c.joints()[-1] for c in chains])
    for bad in (np.array([[0.0, math.nan, 1.0], [0.0, 0.0, 0.0]]), np.ones((3, 3)), np.ones(3)):
        with pytest.raises(SolverError, match="plane normals"):
            solve_chains(replace(good, plane=bad))


def test_three_bone_planes_refuse_a_zero_end_direction_and_a_zero_end_bone():
    points = [np.array([p]) for p in ((0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 2.5), (1, 0, 1))]
    with pytest.raises(SolverError, match="end direction"):
        solve_three_bone_plane(*points, np.zeros((1, 3)), np.array([[0.0, 1.0, 0.0]]))
    points[3] = points[2]
    with pytest.raises(SolverError, match="end bone"):
        solve_three_bone_plane(*points, np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))


def test_reach_settings_are_checked_as_in_3d():
    one = [np.array([p]) for p in ((0, 0, 0), (0, 0, 1), (0, 0, 2), (3, 0, 1), (0, 1, 0))]
    with pytest.raises(SolverError, match="reach mode"):
        solve_two_bone_plane(*one, mode=7)
    assert solve_two_bone_plane(*one, mode=Reach.STRETCH, max_stretch=2.0).reached.all()


def test_chain_batches_stack_and_take_their_planes():
    from solvers.chains import stack, take

    rng = np.random.default_rng(2)
    chains = [random_chain(rng, 2, False, "uniform", True) for _ in range(2)]
    batch = batch_of(chains, [c.joints()[-1] for c in chains], plane=np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]))
    both = stack([batch, batch])
    assert both.plane.shape == (4, 3)
    assert isinstance(take(both, np.array([1])), ChainBatch)
    np.testing.assert_array_equal(take(both, np.array([2])).plane, [[0.0, 1.0, 0.0]])
