# SPDX-License-Identifier: GPL-3.0-or-later
"""The check after writing: :func:`solvers.forward.posed_points` against the independent model of a bone chain
in test_local_rotation (Blender's ``M_i = M_(i-1) @ O_i @ T @ R @ S``, any parent, roll, offset and scale)."""

from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from strategies import quaternion_matrix
from test_local_rotation import SEVERAL_CHAINS, linear, random_chain, random_quaternion, translation

from solvers.forward import loose_end, posed_points


@SEVERAL_CHAINS
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.booleans(), st.booleans(), st.booleans())
def test_posed_points_are_where_the_model_puts_the_joints(seed, k, sheared, connected, mirrored):
    """New rotations and Y scales on chains scaled anyhow (unevenly, negatively, under a sheared or mirrored
    parent): the joints are where the model poses them."""
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, k, sheared, "any", connected) for _ in range(3)]
    for c in chains:
        if mirrored:
            c.parent[:3, 0] *= -1.0
        c.scales *= rng.choice([-1.0, 1.0], size=(k, 3))
    new_rotations = np.array([[random_quaternion(rng) * rng.uniform(0.5, 2.0) for _ in range(k)] for _ in chains])
    y_scale = rng.uniform(0.5, 2.0, (len(chains), k))
    posed = posed_points(
        np.array([c.matrices() for c in chains]),
        np.array([c.scales for c in chains]),
        np.array([c.quats for c in chains]),
        np.array([c.joints() for c in chains]),
        new_rotations,
        y_scale,
    )
    for c, rotations, factors, points in zip(chains, new_rotations, y_scale, posed):
        scales = c.scales * np.stack([np.ones(k), factors, np.ones(k)], axis=1)
        moved = replace(c, quats=rotations / np.linalg.norm(rotations, axis=1, keepdims=True), scales=scales)
        assert np.abs(points - moved.joints()).max() <= 1e-9 * moved.size()


@SEVERAL_CHAINS
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.booleans())
def test_a_loose_end_is_posed_where_the_chain_would_carry_it(seed, k, connected):
    """A chain's last bone that hangs from a bone of its own elsewhere (an exported IK foot under the root),
    posed where the chain's last bone is: given the rotations a solve writes to every bone of the chain, the
    channels :func:`loose_end` gives it pose it, under its own parent, where the model poses the chain's last
    bone as the child of the bone above (bones scaled evenly, as a loose bone can follow only a turn)."""
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, k, False, "uniform", connected)
    last = chain.matrices()[-1]
    # The loose bone's own parent and rest, chosen so that it stands where the chain's last bone does.
    parent = translation(rng.normal(size=3) * 5.0) @ linear(quaternion_matrix(random_quaternion(rng)) * 2.0)
    own = translation(chain.locs[-1]) @ linear(quaternion_matrix(chain.quats[-1]) * chain.scales[-1])
    rest = np.linalg.solve(parent, last @ np.linalg.inv(own))
    new = np.array([random_quaternion(rng) for _ in range(k)])
    moved = replace(chain, quats=new)
    rotation, location = loose_end(
        np.array([chain.matrices()]),
        np.array([chain.scales]),
        np.array([chain.quats]),
        new[None],
        None,
        last[None],
        chain.locs[-1][None],
    )
    posed = parent @ rest @ translation(location[0]) @ linear(quaternion_matrix(rotation[0]) * chain.scales[-1])
    assert np.abs(posed - moved.matrices()[-1]).max() <= 1e-9 * chain.size()
