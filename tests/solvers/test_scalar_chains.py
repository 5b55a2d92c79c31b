# SPDX-License-Identifier: GPL-3.0-or-later
"""The scalar kernel (:mod:`solvers.scalar_chains`) against the batch kernel (:func:`solvers.chains.solve_chains`):
the same results for any chains, options and degenerate cases, the same refusals, and one entry that
picks between them."""

import numpy as np
import pytest
from chain_batches import KERNEL_EXAMPLES, assert_results_agree, chain_batches
from hypothesis import given
from test_chains import aimed_goal, good
from test_local_rotation import random_chain

from solvers import SolverError
from solvers import chains as chains_module
from solvers.chains import ChainBatch, solve_chains, take
from solvers.scalar_chains import SCALAR_LIMIT, solve_by_count, solve_scalar


def outcome(kernel, batch: ChainBatch):
    """The kernel's result, or the SolverError it raised."""
    try:
        return kernel(batch)
    except SolverError as error:
        return error


@KERNEL_EXAMPLES
@given(chain_batches())
def test_the_scalar_kernel_gives_the_batch_kernels_results(batch):
    expected, result = outcome(solve_chains, batch), outcome(solve_scalar, batch)
    if isinstance(expected, SolverError) or isinstance(result, SolverError):
        assert type(expected) is type(result), (expected, result)
        return
    # 1e-7, not 1e-12: near full reach a joint's angle comes from an arc cosine near 1, where rounding at
    # 1e-16 moves it by about its square root, and the kernels round differently (1.7e-8 seen)
    assert_results_agree(result, expected, batch, 1e-7)


@pytest.mark.parametrize("rows", [1, SCALAR_LIMIT, SCALAR_LIMIT + 1, 40])
def test_one_entry_solves_any_number_of_chains(rows):
    rng = np.random.default_rng(rows)
    chains = [random_chain(rng, 2, False, "uniform", True) for _ in range(rows)]
    batch = ChainBatch(
        matrices=np.array([c.matrices() for c in chains]),
        scales=np.array([c.scales for c in chains]),
        rotations=np.array([c.quats for c in chains]),
        points=np.array([c.joints() for c in chains]),
        target=np.array([c.joints()[0] + rng.normal(size=3) for c in chains]),
    )
    assert_results_agree(solve_by_count(batch), solve_chains(batch), batch, 1e-9)


@pytest.mark.parametrize("k", [2, 3])
def test_chains_that_need_the_refinement_are_solved_as_the_batch_kernel_solves_them(monkeypatch, k):
    """A thigh scaled (2, 1, 0.5) makes the shin change length as it turns: the refinement solves that chain,
    each of its tens of solves in the scalar kernel (the batch kernel's cost a millisecond each, and a leg
    took most of a second per frame), and it comes out as the batch kernel alone solves it."""
    batch_solves = []
    solve = chains_module.Chains.solve
    monkeypatch.setattr(
        chains_module.Chains, "solve", lambda self, lengths: batch_solves.append(1) or solve(self, lengths)
    )
    rng = np.random.default_rng(4)
    chains = [random_chain(rng, k, False, "uniform", True) for _ in range(3)]
    chains[1].scales[0] = (2.0, 1.0, 0.5)
    extra = {"end_rotation": np.array([aimed_goal(c) for c in chains])} if k == 3 else {}
    batch = ChainBatch(
        matrices=np.array([c.matrices() for c in chains]),
        scales=np.array([c.scales for c in chains]),
        rotations=np.array([c.quats for c in chains]),
        points=np.array([c.joints() for c in chains]),
        target=np.array([c.joints()[-1] + 0.1 * (c.joints()[0] - c.joints()[-1]) for c in chains]),
        **extra,
    )
    result = solve_scalar(batch)
    assert result.reached.all() and batch_solves == []
    assert_results_agree(result, solve_chains(batch), batch, 1e-9)
    alone = solve_chains(take(batch, np.array([1])))
    np.testing.assert_allclose(result.rotations[1], alone.rotations[0], rtol=0.0, atol=1e-12)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda f: f.update(matrices=f["matrices"][:, :1]), "2 or 3 bones"),
        (lambda f: f.update(points=f["points"][:, :2]), r"points must be \(N, k \+ 1, 3\)"),
        (lambda f: f["scales"].__setitem__((0, 0, 1), 0.0), "zero scale"),
        (lambda f: f["rotations"].__setitem__((1, 0), 0.0), "must not be zero"),
        (lambda f: f["matrices"].__setitem__((0, 0, slice(0, 3), 1), 0.0), "degenerate"),
        (lambda f: f["matrices"].__setitem__((1, 1, 2, 2), np.nan), "matrices must be finite"),
        (lambda f: f["target"].__setitem__((0, 1), np.inf), "target must be finite"),
        (lambda f: f.update(pole=np.full((2, 3), np.nan)), "pole must be finite"),
        (lambda f: f.update(influence=np.ones(3)), "per-limb settings"),
    ],
)
def test_bad_chains_are_refused_as_the_batch_kernel_refuses_them(change, message):
    fields = {name: np.array(value) for name, value in good(3).items()}
    change(fields)
    for kernel in (solve_chains, solve_scalar):
        with pytest.raises(SolverError, match=message):
            kernel(ChainBatch(**fields))


def test_a_misspelt_reach_setting_is_refused_by_both_kernels():
    """A setting the solvers do not know (here ``max_strech``) would otherwise leave ``max_stretch`` at its default
    unseen: both kernels refuse it by name, as the batch solvers refuse an unknown keyword."""
    fields = {name: np.array(value) for name, value in good(3).items()}
    for kernel in (solve_chains, solve_scalar):
        with pytest.raises(TypeError, match=r"unknown reach settings \['max_strech'\]"):
            kernel(ChainBatch(**fields, options={"mode": 2, "max_strech": 2.0}))
