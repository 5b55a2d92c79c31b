# SPDX-License-Identifier: GPL-3.0-or-later
"""The whole per-limb pipeline, checked with the forward-kinematics model of test_local_rotation:
solve in the chain's rigid space, write back local rotations, blend by influence."""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_local_rotation import SEVERAL_CHAINS, Chain, random_chain, random_quaternion, same_rotation

from solvers import ChainBatch, Reach, SolverError, solve_chains
from solvers import chains as chains_module
from solvers import rotation_modes as rm

REL = 1e-9


def batch_of(chains: list[Chain], targets, **extra) -> ChainBatch:
    return ChainBatch(
        matrices=np.array([c.matrices() for c in chains]),
        scales=np.array([c.scales for c in chains]),
        rotations=np.array([c.quats for c in chains]),
        points=np.array([c.joints() for c in chains]),
        target=np.asarray(targets, dtype=float),
        **extra,
    )


def rigid_space(chain: Chain) -> np.ndarray:
    """The first bone's frame without its own rotation and scale, from the model's parts."""
    return (chain.parent @ chain.offsets[0])[:3, :3]


def end_goal(chain: Chain) -> np.ndarray:
    """The last bone's armature-space rotation, as a quaternion (its frame is a rotation times a scale)."""
    frame = chain.matrices()[-1][:3, :3] / chain.scales[-1]
    return rm.matrix_to_quat((frame / np.cbrt(np.linalg.det(frame)))[None])[0]


settings = st.tuples(st.integers(0, 2**32 - 1), st.booleans(), st.booleans())


@SEVERAL_CHAINS
@given(settings, st.floats(0.0, 1.0))
def test_two_bone_chains_reach_a_reachable_target(setting, influence):
    """A target that some pose of the chain reaches is reached, even under a parent scaled unevenly;
    the posed joints are the solved ones, and influence 0 leaves the pose alone."""
    seed, sheared, connected = setting
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, 2, sheared, "uniform", connected) for _ in range(2)]
    targets = [replace(c, quats=np.array([random_quaternion(rng) for _ in range(2)])).joints()[-1] for c in chains]
    result = solve_chains(batch_of(chains, targets, options={"mode": Reach.EXTEND}))
    assert result.reached.all()
    for c, target, points, rotations in zip(chains, targets, result.points, result.rotations):
        size = c.size()
        assert np.abs(points[-1] - target).max() <= REL * size
        assert np.abs(replace(c, quats=rotations).joints() - points).max() <= REL * size
        # the bend keeps its side (hinge from the current bend), seen in the rigid space
        to_rigid = np.linalg.inv(rigid_space(c))
        old, new = (to_rigid @ (p - p[0]).T for p in (c.joints(), points))
        old_bend, new_bend = np.cross(old[:, 1], old[:, 2] - old[:, 1]), np.cross(new[:, 1], new[:, 2] - new[:, 1])
        assert old_bend @ new_bend >= -1e-9 * np.linalg.norm(old_bend) * np.linalg.norm(new_bend)

    blended = solve_chains(batch_of(chains, targets, influence=influence))
    for c, full, part in zip(chains, result.rotations, blended.rotations):
        for i in range(2):
            expected = rm.slerp(c.quats[i][None], full[i][None], influence)[0]
            assert same_rotation(part[i], expected, 1e-12)


def test_influence_zero_leaves_the_pose_alone():
    rng = np.random.default_rng(5)
    chains = [random_chain(rng, 2, True, "uniform", False) for _ in range(8)]
    targets = [c.joints()[-1] + rng.normal(size=3) for c in chains]
    still = solve_chains(batch_of(chains, targets, influence=0.0, options={"mode": Reach.STRETCH, "max_stretch": 2.0}))
    assert np.abs(still.rotations - np.array([c.quats for c in chains])).max() <= 1e-15
    assert np.array_equal(still.y_scale, np.ones((8, 2)))


@SEVERAL_CHAINS
@given(settings, st.booleans())
def test_three_bone_chains_put_the_tip_on_the_target_with_the_goal_rotation(setting, end_plane):
    seed, _, connected = setting
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, 3, False, "uniform", connected) for _ in range(2)]
    posed = [replace(c, quats=np.array([random_quaternion(rng) for _ in range(3)])) for c in chains]
    targets = [p.joints()[-1] for p in posed]
    goals = np.array([end_goal(p) for p in posed])
    result = solve_chains(batch_of(chains, targets, end_rotation=goals, end_plane=end_plane))
    assert result.reached.all()
    for c, target, goal, points, rotations in zip(chains, targets, goals, result.points, result.rotations):
        size = c.size()
        moved = replace(c, quats=rotations)
        assert np.abs(points[-1] - target).max() <= REL * size
        assert np.abs(moved.joints() - points).max() <= REL * size
        assert same_rotation(end_goal(moved), goal, 1e-9)
        if end_plane:  # all four joints in one plane
            a, b, d = points[1] - points[0], points[2] - points[0], points[3] - points[0]
            assert abs(np.cross(a, b) @ d) <= REL * size**3


@SEVERAL_CHAINS
@given(settings, st.floats(1.05, 1.5))
def test_stretch_mode_scales_the_bones_to_reach(setting, beyond):
    seed, sheared, _ = setting
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, 2, sheared, "uniform", True) for _ in range(3)]
    targets = []
    for c in chains:  # straight out past full reach, in the rigid space
        rigid = rigid_space(c)
        p = np.linalg.solve(rigid, (c.joints() - c.joints()[0]).T).T
        reach = np.linalg.norm(p[1]) + np.linalg.norm(p[2] - p[1])
        direction = rng.normal(size=3)
        targets.append(c.joints()[0] + rigid @ (direction / np.linalg.norm(direction) * reach * beyond))
    options = {"mode": Reach.STRETCH, "max_stretch": 2.0}
    result = solve_chains(batch_of(chains, targets, options=options))
    assert result.reached.all()
    for c, target, rotations, y_scale in zip(chains, targets, result.rotations, result.y_scale):
        # the upper bone stretches; the lower one, straight in line with it, inherits that stretch
        assert y_scale == pytest.approx([beyond, 1.0], rel=1e-9)
        stretched = replace(c, quats=rotations, scales=c.scales * np.stack([np.ones(2), y_scale, np.ones(2)], 1))
        assert np.abs(stretched.joints()[-1] - target).max() <= REL * c.size()


def test_the_end_bone_points_along_its_local_plus_y():
    """Blender bones point along their local +Y: an identity goal rotation points the foot along +Y."""
    m = np.tile(np.eye(4), (1, 3, 1, 1))
    m[0, 1, :3, 3], m[0, 2, :3, 3] = (0.0, 1.0, 0.0), (0.0, 2.0, 0.0)
    chain = ChainBatch(
        matrices=m,
        scales=np.ones((1, 3, 3)),
        rotations=np.tile([1.0, 0.0, 0.0, 0.0], (1, 3, 1)),
        points=np.array([[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 2.5, 0.0]]]),
        target=np.array([[1.0, 1.0, 0.0]]),
        end_rotation=np.array([[1.0, 0.0, 0.0, 0.0]]),
    )
    result = solve_chains(chain)
    assert np.abs(result.points[0, 3] - result.points[0, 2] - [0.0, 0.5, 0.0]).max() <= 1e-15
    assert np.abs(result.points[0, 3] - [1.0, 1.0, 0.0]).max() <= 1e-15


# ---------------------------------------------------------------------------------------------
# Reached means on the target: uneven and negative scales


def posed_tip(chain: Chain, result, row: int = 0) -> np.ndarray:
    """Where the model puts the tip with the result's rotations and Y scales."""
    k = chain.k
    scales = chain.scales * np.stack([np.ones(k), result.y_scale[row, :k], np.ones(k)], axis=1)
    return replace(chain, quats=result.rotations[row, :k], scales=scales).joints()[-1]


def aimed_goal(chain: Chain) -> np.ndarray:
    """A rotation whose Y axis runs along the chain's last bone, however its frame is scaled."""
    joints = chain.joints()
    y = (joints[-1] - joints[-2]) / np.linalg.norm(joints[-1] - joints[-2])
    x = np.cross(y, [0.3, 0.5, 0.8])
    x /= np.linalg.norm(x)
    return rm.matrix_to_quat(np.stack([x, y, np.cross(x, y)], axis=1)[None])[0]


@SEVERAL_CHAINS
@given(settings, st.integers(2, 3), st.booleans(), st.sampled_from(["reachable", "anywhere"]))
def test_a_chain_is_reached_only_when_its_posed_tip_is_on_the_target(setting, k, mirrored, where):
    """Bones scaled anyhow, unevenly across their axes or by negative factors, under a sheared or mirrored
    parent: a chain reported reached has its tip, posed by the model, on the target."""
    seed, sheared, connected = setting
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, k, sheared, "any", connected) for _ in range(3)]
    targets, goals = [], []
    for c in chains:
        c.scales *= rng.choice([-1.0, 1.0], size=(k, 3))
        if mirrored:
            c.parent[:3, 0] *= -1.0
        posed = replace(c, quats=np.array([random_quaternion(rng) for _ in range(k)]))
        targets.append(posed.joints()[-1] if where == "reachable" else c.joints()[0] + rng.normal(size=3) * c.size())
        goals.append(aimed_goal(posed))
    extra = {"end_rotation": np.array(goals)} if k == 3 else {}
    result = solve_chains(batch_of(chains, targets, **extra))
    for row, (c, target) in enumerate(zip(chains, targets)):
        if result.reached[row]:
            assert np.linalg.norm(posed_tip(c, result, row) - target) <= 1e-5 * c.size()


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("connected", [True, False])
def test_a_thigh_scaled_unevenly_reaches_exactly_and_a_second_solve_keeps_the_pose(k, connected):
    """The thigh's pose scale (2, 1, 0.5) shears the bones below it, whose lengths change as they turn:
    the solve finds the lengths they take, and the tip lands on a reachable target exactly."""
    rng = np.random.default_rng(11)
    solved = 0
    for _ in range(10):
        chain = random_chain(rng, k, False, "uniform", connected)
        chain.scales[:] = 1.0
        chain.scales[0] = (2.0, 1.0, 0.5)
        # the tip brought a tenth of the way to the root: the knee bends further in its plane
        joints = chain.joints()
        upper, lower = joints[1] - joints[0], joints[2] - joints[1]
        if upper @ lower < -0.8 * np.linalg.norm(upper) * np.linalg.norm(lower):
            continue  # nearly folded already: it cannot bend that much further
        solved += 1
        target = joints[-1] + 0.1 * (joints[0] - joints[-1])
        extra = {"end_rotation": aimed_goal(chain)[None]} if k == 3 else {}
        result = solve_chains(batch_of([chain], [target], **extra))
        assert result.reached[0]
        assert np.linalg.norm(posed_tip(chain, result) - target) <= 1e-12 * chain.size()
        again = replace(chain, quats=result.rotations[0])
        repeat = solve_chains(batch_of([again], [target], **extra))
        assert all(same_rotation(a, b, 1e-9) for a, b in zip(repeat.rotations[0], result.rotations[0]))
    assert solved >= 8


@pytest.mark.parametrize("end_plane", [False, True])
def test_under_a_mirrored_parent_the_foot_takes_the_goal_y_and_z_and_the_tip_is_exact(end_plane):
    """A parent scaled by -1 on one axis mirrors the chain's frames: no rotation gives the end bone the
    goal orientation, so it takes the goal's Y (its direction) and Z axes, and the mirror of its X."""
    rng = np.random.default_rng(7)
    for _ in range(10):
        chain = random_chain(rng, 3, False, "uniform", True)
        chain.parent[:3, 1] *= -1.0
        posed = replace(chain, quats=np.array([random_quaternion(rng) for _ in range(3)]))
        goal = aimed_goal(posed)
        result = solve_chains(batch_of([chain], [posed.joints()[-1]], end_rotation=goal[None], end_plane=end_plane))
        assert result.reached[0]
        assert np.linalg.norm(posed_tip(chain, result) - posed.joints()[-1]) <= 1e-12 * chain.size()
        frame = replace(chain, quats=result.rotations[0]).matrices()[-1][:3, :3]
        frame /= np.linalg.norm(frame, axis=0)
        expected = rm.quat_to_matrix(goal[None])[0] * [-1.0, 1.0, 1.0]
        assert np.abs(frame - expected).max() <= 1e-12


def test_a_mirrored_goal_matrix_gives_its_y_and_z_axes():
    """A goal seen from an armature scaled by -1 is a mirrored matrix: the end bone takes its Y and Z axes."""
    rng = np.random.default_rng(8)
    chain = random_chain(rng, 3, False, "uniform", True)
    posed = replace(chain, quats=np.array([random_quaternion(rng) for _ in range(3)]))
    goal = rm.quat_to_matrix(aimed_goal(posed)[None])[0]
    mirrored = goal * [-1.0, 1.0, 1.0] * 2.0  # and scaled: its nearest rotation is meant
    result = solve_chains(batch_of([chain], [posed.joints()[-1]], end_rotation=mirrored[None]))
    assert result.reached[0]
    frame = replace(chain, quats=result.rotations[0]).matrices()[-1][:3, :3]
    frame /= np.linalg.norm(frame, axis=0)
    assert np.abs(frame[:, 1:] - goal[:, 1:]).max() <= 1e-12


def test_a_sheared_goal_matrix_points_the_end_bone_along_its_y_axis_exactly():
    """A goal seen from an armature scaled unevenly is sheared: the end bone points along its Y axis (where the
    target points it in the world), not along the Y axis of its nearest rotation, and the tip lands."""
    rng = np.random.default_rng(9)
    for _ in range(5):
        chain = random_chain(rng, 3, False, "uniform", True)
        posed = replace(chain, quats=np.array([random_quaternion(rng) for _ in range(3)]))
        joints = posed.joints()
        y = (joints[3] - joints[2]) / np.linalg.norm(joints[3] - joints[2])
        goal = np.diag([1.3, 0.8, 0.7]) @ rm.quat_to_matrix(random_quaternion(rng)[None])[0]
        goal[:, 1] = 0.9 * y  # sheared, its Y column along the posed end bone
        result = solve_chains(batch_of([chain], [joints[3]], end_rotation=goal[None]))
        assert result.reached[0]
        moved = replace(chain, quats=result.rotations[0]).joints()
        assert np.linalg.norm(moved[3] - joints[3]) <= 1e-12 * chain.size()
        assert np.abs((moved[3] - moved[2]) / np.linalg.norm(moved[3] - moved[2]) - y).max() <= 1e-12


def test_an_end_bone_scaled_by_minus_one_along_its_axis_still_puts_its_tail_on_the_target():
    """Its tail runs against its Y axis: the ankle's goal is on the other side of the target."""
    rng = np.random.default_rng(10)
    for _ in range(5):
        chain = random_chain(rng, 3, False, "uniform", True)
        chain.scales[2] = (1.0, -1.0, 1.0)
        posed = replace(chain, quats=np.array([random_quaternion(rng) for _ in range(3)]))
        frame = posed.matrices()[2][:3, :3] / posed.scales[2]
        goal = rm.matrix_to_quat(frame[None])[0]  # the end bone's own rotation where it is posed
        result = solve_chains(batch_of([chain], [posed.joints()[-1]], end_rotation=goal[None]))
        assert result.reached[0]
        assert np.linalg.norm(posed_tip(chain, result) - posed.joints()[-1]) <= 1e-12 * chain.size()


# ---------------------------------------------------------------------------------------------
# Bad input


def good(k=2) -> dict:
    rng = np.random.default_rng(1)
    chains = [random_chain(rng, k, False, "uniform", True) for _ in range(2)]
    batch = batch_of(chains, [c.joints()[-1] * 0.9 for c in chains])
    fields = {name: getattr(batch, name) for name in ("matrices", "scales", "rotations", "points", "target")}
    if k == 3:
        fields["end_rotation"] = np.tile([1.0, 0.0, 0.0, 0.0], (2, 1))
    return fields


@pytest.mark.parametrize("name", ["matrices", "scales", "rotations", "points", "target", "end_rotation", "pole"])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_non_finite_input_is_rejected(name, value):
    fields = good(3)
    if name == "pole":
        fields["pole"], fields["pole_mask"] = np.ones((2, 3)), True
    fields[name] = np.array(fields[name], dtype=float)
    fields[name].flat[1] = value
    with pytest.raises(SolverError, match=f"{name.replace('_', ' ')} must be finite"):
        solve_chains(ChainBatch(**fields))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda f: f.update(matrices=f["matrices"][:, :1]), "2 or 3 bones"),
        (lambda f: f.update(matrices=f["matrices"][:, :, :3]), r"matrices must be \(N, k, 4, 4\)"),
        (lambda f: f.update(rotations=f["rotations"][..., :3]), r"rotations must be \(N, k, 4\)"),
        (lambda f: f.update(scales=f["scales"][:, 0]), r"scales must be \(N, k, 3\)"),
        (lambda f: f.update(points=f["points"][:, :2]), r"points must be \(N, k \+ 1, 3\)"),
        (lambda f: f.update(target=np.ones((3, 3))), "target"),
        (lambda f: f["scales"].__setitem__((0, 0, 1), 0.0), "zero scale"),
        (lambda f: f["rotations"].__setitem__((1, 0), 0.0), "must not be zero"),
        (lambda f: f["matrices"].__setitem__((0, 0, slice(0, 3), 1), 0.0), "degenerate"),
    ],
)
def test_bad_chains_are_rejected(change, message):
    fields = good()
    fields = {name: np.array(value) for name, value in fields.items()}
    change(fields)
    with pytest.raises(SolverError, match=message):
        solve_chains(ChainBatch(**fields))


def test_three_bone_chains_need_an_end_rotation():
    fields = good(3)
    del fields["end_rotation"]
    with pytest.raises(SolverError, match="end rotation"):
        solve_chains(ChainBatch(**fields))


@pytest.mark.parametrize("k", [2, 3])
def test_a_leg_scaled_unevenly_straight_toward_a_goal_out_of_reach_is_solved_in_few_passes(monkeypatch, k):
    """The refinement's search for the lower bone's length settles in a few solves of the chain where its root
    is the end of its range, the leg straight toward a goal out of reach: it had crept there by bisection, up
    to forty solves for each length tried for a three-bone end bone (a leg took most of a second per frame)."""
    passes = []
    solve = chains_module.Chains.solve
    monkeypatch.setattr(chains_module.Chains, "solve", lambda self, lengths: passes.append(1) or solve(self, lengths))
    rng = np.random.default_rng(5)
    for _ in range(5):
        chain = random_chain(rng, k, False, "uniform", True)
        chain.scales[:] = 1.0
        chain.scales[0] = (1.0, 1.3, 1.0)
        joints = chain.joints()
        away = joints[-1] - joints[0]
        target = joints[0] + 2.0 * chain.size() * away / np.linalg.norm(away)
        extra = {"end_rotation": aimed_goal(chain)[None]} if k == 3 else {}
        passes.clear()
        result = solve_chains(batch_of([chain], [target], **extra))
        assert not result.reached[0]
        assert len(passes) <= 20
