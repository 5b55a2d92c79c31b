# SPDX-License-Identifier: GPL-3.0-or-later
"""The minimal-rotation write-back against an independent forward-kinematics model of a bone chain.

The model is Blender's, with full inheritance: a bone's armature-space matrix is
``M_i = M_(i-1) @ O_i @ T(loc_i) @ R(q_i) @ S(s_i)`` where ``O_i`` is its rest offset from its
parent (a random rotation, i.e. any roll, and a translation to the parent's tail, plus an offset
when the joint is not connected) and ``M_(-1)`` is whatever lies above the chain (here any affine
matrix, with non-uniform scale and shear). Joint ``i + 1`` is bone ``i + 1``'s head, or the last
bone's tail. Rotation matrices come from Rodrigues' formula, not from the solver's quaternion code.
"""

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import quaternion_matrix

from solvers import SolverError, chain_local_rotations

REL = 1e-9


def translation(t) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = t
    return m


def linear(a) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = a
    return m


def random_quaternion(rng) -> np.ndarray:
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return q if q[0] >= 0.0 else -q


def q_mul(a, b) -> np.ndarray:
    """Hamilton product a * b (b first), written out independently of the solvers."""
    aw, av, bw, bv = a[0], np.asarray(a[1:]), b[0], np.asarray(b[1:])
    return np.concatenate([[aw * bw - av @ bv], aw * bv + bw * av + np.cross(av, bv)])


def same_rotation(a, b, tol) -> bool:
    return np.abs(quaternion_matrix(a) - quaternion_matrix(b)).max() <= tol


@dataclass
class Chain:
    parent: np.ndarray  #: (4, 4) everything above the chain
    offsets: list  #: k rest offsets O_i, (4, 4)
    locs: np.ndarray  #: (k, 3)
    quats: np.ndarray  #: (k, 4)
    scales: np.ndarray  #: (k, 3)
    tail: float  #: the last bone's length

    @property
    def k(self) -> int:
        return len(self.quats)

    def matrices(self) -> list[np.ndarray]:
        out, m = [], self.parent
        for i in range(self.k):
            m = m @ self.offsets[i] @ translation(self.locs[i]) @ linear(quaternion_matrix(self.quats[i]))
            m = m @ linear(np.diag(self.scales[i]))
            out.append(m)
        return out

    def child(self, i) -> np.ndarray:
        """Where joint i + 1 sits in bone i's own (scaled) coordinates."""
        if i == self.k - 1:
            return np.array([0.0, self.tail, 0.0])
        return (self.offsets[i + 1] @ translation(self.locs[i + 1]))[:3, 3]

    def joints(self) -> np.ndarray:
        ms = self.matrices()
        points = [ms[0][:3, 3]] + [(ms[i] @ np.append(self.child(i), 1.0))[:3] for i in range(self.k)]
        return np.array(points)

    def size(self) -> float:
        p = self.joints()
        return float(np.linalg.norm(np.diff(p, axis=0), axis=1).sum() + np.abs(p).max())


def random_chain(rng, k: int, sheared_parent: bool, own_scale: str, connected: bool) -> Chain:
    """``own_scale``: "uniform", "xz" (x = z, for bones whose child is on their Y axis) or "any"."""
    a, b = quaternion_matrix(random_quaternion(rng)), quaternion_matrix(random_quaternion(rng))
    stretch = np.diag(rng.uniform(0.3, 3.0, 3)) if sheared_parent else np.eye(3) * rng.uniform(0.3, 3.0)
    parent = translation(rng.normal(size=3) * 5.0) @ linear(a @ stretch @ b)
    lengths = rng.uniform(0.2, 2.0, k)
    offsets, locs = [], np.zeros((k, 3))
    for i in range(k):
        head = rng.normal(size=3) if i == 0 else np.array([0.0, lengths[i - 1], 0.0])
        if i > 0 and not connected:
            head = head + rng.normal(size=3) * 0.5
            locs[i] = rng.normal(size=3) * 0.3
        offsets.append(translation(head) @ linear(quaternion_matrix(random_quaternion(rng))))
    scales = np.empty((k, 3))
    for i in range(k):
        if own_scale == "uniform":
            scales[i] = rng.uniform(0.3, 3.0)
        elif own_scale == "xz":
            x, y = rng.uniform(0.3, 3.0, 2)
            scales[i] = (x, y, x)
        else:
            scales[i] = rng.uniform(0.3, 3.0, 3)
    quats = np.array([random_quaternion(rng) for _ in range(k)])
    return Chain(parent, offsets, locs, quats, scales, lengths[-1])


def solve(chains: list[Chain], new_chains: list[Chain], **extra):
    matrices = np.array([c.matrices() for c in chains])
    return chain_local_rotations(
        matrices,
        np.array([c.scales for c in chains]),
        np.array([c.quats for c in chains]),
        np.array([c.joints() for c in chains]),
        np.array([c.joints() for c in new_chains]),
        **extra,
    )


def minimal_turn(rng, axis_across: np.ndarray) -> np.ndarray:
    """A rotation by less than a half turn about a random axis perpendicular to ``axis_across``."""
    axis = np.cross(axis_across, rng.normal(size=3))
    axis /= np.linalg.norm(axis)
    half = 0.5 * rng.uniform(-3.0, 3.0)
    return np.concatenate([[math.cos(half)], math.sin(half) * axis])


#: Each example poses several random chains: half the usual examples cover more chains than the others do.
SEVERAL_CHAINS = settings(max_examples=max(settings().max_examples // 2, 10))

chain_settings = st.tuples(
    st.integers(0, 2**32 - 1),  # numpy seed for the many continuous values
    st.integers(1, 4),  # bones
    st.booleans(),  # a sheared, non-uniformly scaled parent
    st.booleans(),  # connected joints
)


@SEVERAL_CHAINS
@given(chain_settings)
def test_minimal_turns_of_any_chain_are_recovered_exactly(settings):
    """Any roll, offsets, parent shear and non-uniform own scale: when each bone's new pose is a
    twist-free turn of its old one, the write-back returns exactly those rotations."""
    seed, k, sheared, connected = settings
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, k, sheared, "any", connected) for _ in range(4)]
    moved = []
    for c in chains:
        quats = np.array([q_mul(c.quats[i], minimal_turn(rng, c.scales[i] * c.child(i))) for i in range(k)])
        moved.append(replace(c, quats=quats))
    result = solve(chains, moved)
    for c, m, rotations in zip(chains, moved, result.rotations):
        for i in range(k):
            assert same_rotation(rotations[i], m.quats[i], 1e-9), f"bone {i}"
        posed = replace(c, quats=rotations).joints()
        assert np.abs(posed - m.joints()).max() <= REL * c.size()
    assert np.array_equal(result.y_scale, np.ones((4, k)))


@SEVERAL_CHAINS
@given(chain_settings, st.booleans())
def test_the_joints_land_on_new_points_of_a_rigid_chain(settings, xz_scale):
    """Any new rotations, any roll, offsets and parent shear; the chain is rigid in its frames when
    the bones above the last are scaled uniformly (or x = z with their child on their axis)."""
    seed, k, sheared, connected = settings
    rng = np.random.default_rng(seed)
    own_scale = "xz" if xz_scale and connected else "uniform"
    chains = [random_chain(rng, k, sheared, own_scale, connected) for _ in range(4)]
    for c in chains:
        c.scales[-1] = rng.uniform(0.3, 3.0, 3)  # the last bone carries no bone of the chain
    moved = [replace(c, quats=np.array([random_quaternion(rng) for _ in range(k)])) for c in chains]
    result = solve(chains, moved)
    for c, m, rotations in zip(chains, moved, result.rotations):
        posed = replace(c, quats=rotations)
        assert np.abs(posed.joints() - m.joints()).max() <= REL * c.size()
        for i in range(k):
            # twist about the bone kept: the change has no component about the old child direction
            change = q_mul(c.quats[i] * [1.0, -1.0, -1.0, -1.0], rotations[i])
            direction = c.scales[i] * c.child(i)
            assert abs(change[1:] @ direction) <= 1e-9 * np.linalg.norm(direction)


@SEVERAL_CHAINS
@given(chain_settings)
def test_the_first_joint_lands_even_under_non_uniform_own_scale(settings):
    seed, k, sheared, connected = settings
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, k, sheared, "any", connected) for _ in range(4)]
    moved = [replace(c, quats=np.array([random_quaternion(rng) for _ in range(k)])) for c in chains]
    result = solve(chains, moved)
    for c, m, rotations in zip(chains, moved, result.rotations):
        assert np.abs(replace(c, quats=rotations).joints()[1] - m.joints()[1]).max() <= REL * c.size()


@SEVERAL_CHAINS
@given(chain_settings)
def test_stretching_scales_each_bone_along_its_axis_to_reach_its_joint(settings):
    """Connected bones with a uniform scale, turned anyhow and stretched along Y: the returned
    rotations and Y scales put every joint back, the stretch inherited down the chain."""
    seed, k, sheared, _ = settings
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, k, sheared, "uniform", True) for _ in range(4)]
    factors = rng.uniform(0.5, 2.0, (4, k))

    def along_y(f):
        return np.stack([np.ones(k), f, np.ones(k)], axis=1)

    moved = [
        replace(c, quats=np.array([random_quaternion(rng) for _ in range(k)]), scales=c.scales * along_y(f))
        for c, f in zip(chains, factors)
    ]
    result = solve(chains, moved, stretch=np.array([True, True, True, False]))
    for row, (c, m) in enumerate(zip(chains, moved)):
        if row == 3:  # not stretching: lengths unchanged
            assert np.array_equal(result.y_scale[row], np.ones(k))
            continue
        assert np.allclose(result.y_scale[row], factors[row], rtol=1e-9)
        posed = replace(c, quats=result.rotations[row], scales=c.scales * along_y(result.y_scale[row]))
        assert np.abs(posed.joints() - m.joints()).max() <= REL * m.size()


@SEVERAL_CHAINS
@given(chain_settings)
def test_the_end_bone_takes_the_goal_rotation(settings):
    seed, k, sheared, connected = settings
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, k, sheared, "uniform", connected) for _ in range(4)]
    moved = [replace(c, quats=np.array([random_quaternion(rng) for _ in range(k)])) for c in chains]
    goals = np.array([random_quaternion(rng) for _ in chains])
    result = solve(chains, moved, end_rotation=goals)
    for c, m, rotations, goal in zip(chains, moved, result.rotations, goals):
        posed = replace(c, quats=rotations)
        # the bones above still land their joints ...
        assert np.abs(posed.joints()[:k] - m.joints()[:k]).max() <= REL * c.size()
        # ... and the last bone points along the goal's Y axis, or wears the goal exactly when
        # nothing above it shears
        frame = posed.matrices()[-1][:3, :3] / posed.scales[-1]
        goal_matrix = quaternion_matrix(goal)
        y = frame[:, 1] / np.linalg.norm(frame[:, 1])
        assert np.abs(y - goal_matrix[:, 1]).max() <= 1e-9
        if not sheared:
            assert np.abs(frame / np.cbrt(np.linalg.det(frame)) - goal_matrix).max() <= 1e-9


def test_a_single_scaled_bone_with_a_rolled_rest_pose():
    """One bone, rest offset rolled 90 degrees about Y, scaled (1, 2, 3): moving its tail from +Y
    to +X (armature) is a turn about the armature -Z, whatever its roll and scale."""
    roll = quaternion_matrix([math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0])
    chain = Chain(
        np.eye(4), [linear(roll)], np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0, 0.0]]), np.array([[1.0, 2.0, 3.0]]), 1.0
    )
    old = chain.joints()
    assert np.allclose(old, [[0, 0, 0], [0, 2, 0]])
    new = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    result = chain_local_rotations([chain.matrices()], [chain.scales], [chain.quats], [old], [new])
    posed = replace(chain, quats=result.rotations[0])
    assert np.abs(posed.joints() - new).max() <= 1e-15
    # in armature space the bone turned -90 degrees about Z: rest roll @ local turn @ roll^-1
    turn = roll @ quaternion_matrix(result.rotations[0, 0]) @ roll.T
    assert np.abs(turn - quaternion_matrix([math.cos(-math.pi / 4), 0.0, 0.0, math.sin(-math.pi / 4)])).max() < 1e-15


# ---------------------------------------------------------------------------------------------
# Bad input


def good(n=2, k=2) -> dict:
    rng = np.random.default_rng(0)
    chains = [random_chain(rng, k, False, "uniform", True) for _ in range(n)]
    return dict(
        matrices=np.array([c.matrices() for c in chains]),
        scales=np.array([c.scales for c in chains]),
        rotations=np.array([c.quats for c in chains]),
        old_points=np.array([c.joints() for c in chains]),
        new_points=np.array([c.joints() for c in chains]),
    )


@pytest.mark.parametrize("name", ["matrices", "scales", "rotations", "old_points", "new_points"])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_non_finite_input_is_rejected(name, value):
    arguments = good()
    arguments[name].flat[5] = value
    with pytest.raises(SolverError, match="must be finite"):
        chain_local_rotations(**arguments)


@pytest.mark.parametrize(
    "name, shape",
    [
        ("matrices", (2, 2, 3, 3)),
        ("scales", (2, 3, 3)),
        ("rotations", (2, 2, 3)),
        ("old_points", (2, 2, 3)),
        ("new_points", (2, 3, 2)),
        ("new_points", (1, 3, 3)),
    ],
)
def test_wrong_shapes_are_rejected(name, shape):
    arguments = good()
    arguments[name] = np.ones(shape)
    with pytest.raises(SolverError, match=r"must be \(N"):
        chain_local_rotations(**arguments)


def test_zero_scale_zero_rotation_flat_matrix_and_too_many_goals_are_rejected():
    arguments = good()
    arguments["scales"][1, 0, 2] = 0.0
    with pytest.raises(SolverError, match="zero scale"):
        chain_local_rotations(**arguments)
    arguments = good()
    arguments["rotations"][0, 1] = 0.0
    with pytest.raises(SolverError, match="must not be zero"):
        chain_local_rotations(**arguments)
    arguments = good()
    arguments["matrices"][0, 0, :3, 2] = 0.0
    with pytest.raises(SolverError, match="degenerate"):
        chain_local_rotations(**arguments)
    with pytest.raises(SolverError, match="goal rotations"):
        chain_local_rotations(**good(), end_rotation=np.tile([1.0, 0.0, 0.0, 0.0], (2, 3, 1)))
