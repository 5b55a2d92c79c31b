# SPDX-License-Identifier: GPL-3.0-or-later
"""The check after writing: :func:`solvers.forward.posed_points` against the independent model of a bone chain
in test_local_rotation (Blender's ``M_i = M_(i-1) @ O_i @ T @ R @ S``, any parent, roll, offset and scale)."""

from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from test_local_rotation import SEVERAL_CHAINS, random_chain, random_quaternion

from solvers.forward import posed_points


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
