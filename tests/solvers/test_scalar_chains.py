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


def test_the_kernels_bracket_the_same_root_when_a_probe_would_fold_the_limb_onto_its_goal():
    """Found by the thorough profile: a thigh scaled (0.86, 2.0, 1.1) held out of reach. The refinement's last
    probe of the shin's length folded the limb exactly onto its goal, where one kernel's rounding reached it
    and the other's held the pose, so the two bracketed different roots: knees 0.81 apart (as a quaternion).
    The probes now stay just inside that span."""
    batch = ChainBatch(
        matrices=np.array(
            [
                [
                    [
                        [1.4858121376284485, -0.9624374671542933, -1.3169380455887085, -2.4610570342945985],
                        [-0.17198201404481483, -1.9810211962448043, 1.2501127500464313, -2.698687965340424],
                        [-0.23160400084011645, -0.3551193176467043, -0.6787524854543964, -3.087069612348447],
                        [0.0, 0.0, 0.0, 1.0],
                    ],
                    [
                        [-1.3959839039335278, 0.33534513941140837, -1.8845892964437925, -4.367796037850572],
                        [2.7812589168977015, -4.398369286257053, -0.43273573397503057, -6.377493614184817],
                        [-1.5985016403138226, -0.7070711574354077, -0.2177893002785231, -3.8469355219182697],
                        [0.0, 0.0, 0.0, 1.0],
                    ],
                ]
            ]
        ),
        scales=np.array(
            [
                [
                    [0.8594161538187033, 2.001243539420426, 1.1050403447750468],
                    [2.302743036187192, 2.2498449819837174, 0.8905316463357724],
                ]
            ]
        ),
        rotations=np.array(
            [
                [
                    [0.8856993267209122, -0.14673673225225004, -0.37184750979834796, 0.236081476424606],
                    [0.6076618840639639, -0.014748215751655122, 0.029777364180009362, -0.793500367593152],
                ]
            ]
        ),
        points=np.array(
            [
                [
                    [-2.4610570342945985, -2.698687965340424, -3.087069612348447],
                    [-4.367796037850572, -6.377493614184817, -3.8469355219182697],
                    [-3.723503773370653, -14.827997213060225, -5.205417943855523],
                ]
            ]
        ),
        target=np.array([[-8.851515552550566, -3.1246500245752262, -4.823039945731555]]),
        options={"mode": np.array([1])},  # hold the pose out of reach
    )
    assert_results_agree(solve_scalar(batch), solve_chains(batch), batch, 1e-7)


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
