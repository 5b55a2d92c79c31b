# SPDX-License-Identifier: GPL-3.0-or-later
"""The numpy batch solvers agree with the scalar ones row by row, every fallback included."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import MANY_ROWS, OPTION_NAMES, Limb, add, cases, dist, finite, mul, reach_options, unit_vectors

from solvers import (
    Reach,
    ReachOptions,
    SolverError,
    solve_three_bone,
    solve_three_bone_batch,
    solve_two_bone,
    solve_two_bone_batch,
)
from solvers.batch import BLOCK

REL = 1e-9


def option_arrays(options: list[ReachOptions]) -> dict:
    return {name: np.array([getattr(o, name) for o in options]) for name in OPTION_NAMES}


def vectors_or_zero(values) -> np.ndarray:
    return np.array([(0.0, 0.0, 0.0) if v is None else v for v in values], dtype=float)


def assert_rows_agree(batch, scalars, sizes, points=("knee", "end")):
    for i, (scalar, size) in enumerate(zip(scalars, sizes)):
        assert (bool(batch.reached[i]), bool(batch.held[i])) == (scalar.reached, scalar.held), f"row {i}"
        assert batch.stretch[i] == pytest.approx(scalar.stretch, rel=1e-12), f"row {i}"
        for name in points:
            assert dist(getattr(batch, name)[i], getattr(scalar, name)) <= REL * size, f"row {i}, {name}"


@MANY_ROWS
@given(st.lists(cases(), min_size=1, max_size=6))
def test_two_bone_batch_agrees_with_the_scalar_solver(rows):
    """Random settings per row: poles (some on the line, root, knee or target), hinges and planes
    (some along the target line or tiny), every reach mode, softness, stretch and bend limits."""
    batch = solve_two_bone_batch(
        np.array([r.limb.root for r in rows]),
        np.array([r.limb.knee for r in rows]),
        np.array([r.limb.end for r in rows]),
        np.array([r.target for r in rows]),
        pole=vectors_or_zero(r.pole for r in rows),
        pole_mask=np.array([r.pole is not None for r in rows]),
        hinge=vectors_or_zero(r.hinge for r in rows),
        plane=vectors_or_zero(r.plane for r in rows),
        **option_arrays([r.options for r in rows]),
    )
    scalars = [solve_two_bone(*r.args(), **r.kwargs()) for r in rows]
    assert_rows_agree(batch, scalars, [r.limb.size for r in rows])


@st.composite
def three_bone_rows(draw):
    case = draw(cases(plane=False))
    limb = case.limb
    tip = add(limb.end, mul(draw(unit_vectors()), limb.size * draw(finite(0.05, 1.0))))
    direction = mul(draw(unit_vectors()), 10.0 ** draw(st.one_of(finite(-3.0, 3.0), finite(-320.0, -150.0))))
    target = add(case.target, mul(direction, 10.0 ** draw(finite(-3.0, 3.0))))
    return case, tip, target, direction, draw(st.booleans())


@MANY_ROWS
@given(st.lists(three_bone_rows(), min_size=1, max_size=6))
def test_three_bone_batch_agrees_with_the_scalar_solver(rows):
    batch = solve_three_bone_batch(
        np.array([c.limb.root for c, *_ in rows]),
        np.array([c.limb.knee for c, *_ in rows]),
        np.array([c.limb.end for c, *_ in rows]),
        np.array([tip for _, tip, *_ in rows]),
        np.array([target for _, _, target, _, _ in rows]),
        np.array([direction for *_, direction, _ in rows]),
        pole=vectors_or_zero(c.pole for c, *_ in rows),
        pole_mask=np.array([c.pole is not None for c, *_ in rows]),
        hinge=vectors_or_zero(c.hinge for c, *_ in rows),
        end_plane=np.array([end_plane for *_, end_plane in rows]),
        **option_arrays([c.options for c, *_ in rows]),
    )
    scalars = [
        solve_three_bone(
            c.limb.root, c.limb.knee, c.limb.end, tip, target, direction, c.pole, c.hinge, end_plane, c.options
        )
        for c, tip, target, direction, end_plane in rows
    ]
    sizes = [c.limb.size + dist(tip, c.limb.end) for c, tip, *_ in rows]
    assert_rows_agree(batch, scalars, sizes, points=("knee", "ankle", "tip"))


def random_rows(rng: np.random.Generator, n: int) -> dict:
    """n limbs with a mix of every degenerate case, for the blockwise test."""
    size = 10.0 ** rng.uniform(-2, 2, n)
    root = rng.normal(size=(n, 3)) * size[:, None]
    upper = size * rng.uniform(0.05, 1.0, n)
    lower = np.where(rng.random(n) < 0.2, upper, size * rng.uniform(0.05, 1.0, n))
    first = rng.normal(size=(n, 3))
    first /= np.linalg.norm(first, axis=1)[:, None]
    second = rng.normal(size=(n, 3))
    second /= np.linalg.norm(second, axis=1)[:, None]
    shape = rng.integers(0, 4, n)
    second = np.where((shape == 1)[:, None], first, np.where((shape == 2)[:, None], -first, second))
    knee = root + upper[:, None] * first
    end = knee + lower[:, None] * second
    aim = rng.normal(size=(n, 3))
    aim /= np.linalg.norm(aim, axis=1)[:, None]
    distance = (upper + lower) * rng.uniform(0.0, 1.5, n)
    distance = np.where(rng.random(n) < 0.05, 0.0, distance)
    target = root + distance[:, None] * aim
    line = root + (target - root) * rng.uniform(-2, 2, n)[:, None]
    pole = np.where((rng.random(n) < 0.3)[:, None], line, root + rng.normal(size=(n, 3)) * size[:, None])
    hinge = np.where((rng.random(n) < 0.3)[:, None], aim, rng.normal(size=(n, 3)))
    hinge = np.where((rng.random(n) < 0.3)[:, None], 0.0, hinge)
    plane = np.where((rng.random(n) < 0.5)[:, None], 0.0, rng.normal(size=(n, 3)))
    bends = np.sort(rng.uniform(0.0, math.pi, (n, 2)), axis=1)
    return dict(
        root=root,
        knee=knee,
        end=end,
        target=target,
        pole=pole,
        pole_mask=rng.random(n) < 0.5,
        hinge=hinge,
        plane=plane,
        mode=rng.integers(0, 3, n),
        softness=np.where(rng.random(n) < 0.5, 0.0, size * rng.uniform(0.0, 0.5, n)),
        max_stretch=rng.uniform(1.0, 2.0, n),
        stretch_start=rng.uniform(0.5, 1.0, n),
        min_bend=np.where(rng.random(n) < 0.5, 0.0, bends[:, 0]),
        max_bend=np.where(rng.random(n) < 0.5, math.pi, bends[:, 1]),
    ), upper + lower


def test_more_rows_than_one_block_agree_with_the_scalar_solver():
    arrays, sizes = random_rows(np.random.default_rng(7), BLOCK + 37)
    batch = solve_two_bone_batch(**arrays)
    options = [
        ReachOptions(Reach(int(m)), s, x, t, lo, hi)
        for m, s, x, t, lo, hi in zip(*(arrays[name] for name in OPTION_NAMES))
    ]
    scalars = [
        solve_two_bone(
            tuple(arrays["root"][i]),
            tuple(arrays["knee"][i]),
            tuple(arrays["end"][i]),
            tuple(arrays["target"][i]),
            pole=tuple(arrays["pole"][i]) if arrays["pole_mask"][i] else None,
            hinge=tuple(arrays["hinge"][i]),
            plane=tuple(arrays["plane"][i]),
            options=options[i],
        )
        for i in range(len(sizes))
    ]
    assert_rows_agree(batch, scalars, sizes)


def test_settings_and_directions_may_be_shared_by_all_rows():
    arrays, sizes = random_rows(np.random.default_rng(3), 20)
    points = [arrays[k] for k in ("root", "knee", "end", "target")]
    hinge = (0.0, 0.0, 1.0)
    batch = solve_two_bone_batch(*points, hinge=hinge, mode=Reach.STRETCH, max_stretch=1.5)
    options = ReachOptions(Reach.STRETCH, max_stretch=1.5)
    scalars = [solve_two_bone(*(tuple(p[i]) for p in points), hinge=hinge, options=options) for i in range(20)]
    assert_rows_agree(batch, scalars, sizes)


def test_the_batch_pole_mask_picks_the_rows_whose_pole_counts():
    arrays, sizes = random_rows(np.random.default_rng(11), 64)
    points = [arrays[name] for name in ("root", "knee", "end", "target")]
    mask = np.arange(64) % 2 == 0
    masked = solve_two_bone_batch(*points, pole=arrays["pole"], pole_mask=mask)
    unmasked = solve_two_bone_batch(*points)
    assert np.array_equal(masked.knee[~mask], unmasked.knee[~mask])
    scalars = [
        solve_two_bone(*(tuple(p[i]) for p in points), pole=tuple(arrays["pole"][i]) if mask[i] else None)
        for i in range(64)
    ]
    assert_rows_agree(masked, scalars, sizes)
    everywhere = solve_two_bone_batch(*points, pole=arrays["pole"])  # no mask: every pole counts
    assert_rows_agree(
        everywhere,
        [solve_two_bone(*(tuple(p[i]) for p in points), pole=tuple(arrays["pole"][i])) for i in range(64)],
        sizes,
    )


# ---------------------------------------------------------------------------------------------
# Bad input

N = 3
GOOD = dict(
    root=np.zeros((N, 3)),
    knee=np.tile([0.0, 1.0, 0.0], (N, 1)),
    end=np.tile([0.0, 2.0, 0.0], (N, 1)),
    target=np.tile([1.0, 1.0, 0.0], (N, 1)),
)
THREE = dict(
    root=GOOD["root"],
    knee=GOOD["knee"],
    ankle=GOOD["end"],
    tip=np.tile([0.0, 2.0, 0.5], (N, 1)),
    target=GOOD["target"],
    end_direction=np.tile([0.0, 0.0, 1.0], (N, 1)),
)


@pytest.mark.parametrize("argument", ["root", "knee", "end", "target", "pole", "hinge", "plane"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_input_is_rejected_with_its_row(argument, value):
    array = np.full((N, 3), 0.5)
    array[2, 1] = value
    with pytest.raises(SolverError, match=rf"{argument} must be finite.*row 2"):
        solve_two_bone_batch(**{**GOOD, argument: array})


@pytest.mark.parametrize("argument", ["root", "knee", "ankle", "tip", "target", "end_direction", "pole", "hinge"])
def test_three_bone_batch_rejects_non_finite_input(argument):
    array = np.full((N, 3), 0.5)
    array[1, 0] = math.nan
    with pytest.raises(SolverError, match="finite"):
        solve_three_bone_batch(**{**THREE, argument: array})


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(root=np.zeros((N, 2))), r"root must be an \(N, 3\) array"),
        (dict(knee=np.zeros(3 * N)), r"knee must be an \(N, 3\) array"),
        (dict(end=np.zeros((N, 3, 1))), r"end must be an \(N, 3\) array"),
        (dict(target=np.zeros((N + 1, 3))), "same number of rows"),
        (dict(target=np.zeros((N, 2))), r"target must be an \(N, 3\) array"),
        (dict(pole=np.zeros((N + 1, 3))), "pole must be an"),
        (dict(hinge=np.zeros((N, 4))), "hinge must be an"),
        (dict(plane=np.zeros((2, 3))), "plane must be an"),
        (dict(pole=np.ones((N, 3)), pole_mask=np.ones(N + 1, bool)), "per-limb settings"),
        (dict(softness=np.zeros(N + 1)), "per-limb settings"),
        (dict(mode=np.zeros((N, 2))), "per-limb settings"),
    ],
)
def test_wrong_shapes_are_rejected(changes, message):
    with pytest.raises(SolverError, match=message):
        solve_two_bone_batch(**{**GOOD, **changes})


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(ankle=np.zeros((N, 2))), r"ankle must be an \(N, 3\) array"),
        (dict(tip=np.zeros((N + 1, 3))), "same number of rows"),
        (dict(end_direction=np.zeros((N + 1, 3))), "end direction must be an"),
        (dict(end_plane=np.ones(N + 1, bool)), "per-limb settings"),
    ],
)
def test_three_bone_batch_rejects_wrong_shapes(changes, message):
    with pytest.raises(SolverError, match=message):
        solve_three_bone_batch(**{**THREE, **changes})


@pytest.mark.parametrize(
    "setting, value, message",
    [
        ("softness", [0.0, -0.1, 0.0], "softness.*row 1"),
        ("softness", [0.0, 0.0, math.nan], "softness.*row 2"),
        ("max_stretch", [1.0, 0.5, 1.0], "max_stretch.*row 1"),
        ("max_stretch", [math.inf, 1.0, 1.0], "max_stretch.*row 0"),
        ("stretch_start", [1.0, 1.0, 0.0], "stretch_start.*row 2"),
        ("stretch_start", [1.5, 1.0, 1.0], "stretch_start.*row 0"),
        ("min_bend", [0.0, 2.0, 0.0], "bend limits.*row 1"),
        ("max_bend", [4.0, 1.0, 1.0], "bend limits.*row 0"),
        ("min_bend", [0.0, -1.0, 0.0], "bend limits.*row 1"),
        ("mode", [0, 1, 7], "reach mode.*row 2"),
    ],
)
def test_bad_settings_are_rejected_with_their_row(setting, value, message):
    extra = {"max_bend": [1.0, 1.0, 1.0]} if setting == "min_bend" else {}
    with pytest.raises(SolverError, match=message):
        solve_two_bone_batch(**GOOD, **{setting: np.array(value)}, **extra)


def test_zero_length_bones_are_rejected_with_their_row():
    knee = GOOD["knee"].copy()
    knee[1] = 0.0
    with pytest.raises(SolverError, match="non-zero length.*row 1"):
        solve_two_bone_batch(**{**GOOD, "knee": knee})


def test_three_bone_batch_rejects_a_zero_end_direction_and_a_zero_end_bone():
    direction = THREE["end_direction"].copy()
    direction[2] = 0.0
    with pytest.raises(SolverError, match="zero vector.*row 2"):
        solve_three_bone_batch(**{**THREE, "end_direction": direction})
    with pytest.raises(SolverError, match="end bone.*row 0"):
        solve_three_bone_batch(**{**THREE, "tip": THREE["ankle"]})


@given(
    st.lists(st.tuples(*[st.sampled_from([0.0, 1.0, -1.0, 1e-300, 2.5e11, 1e-160])] * 3), min_size=4, max_size=4),
    reach_options(1.0),
)
def test_no_nan_for_coincident_or_extreme_points(points, options):
    root, knee, end, target = (np.array([p]) for p in points)
    if min(dist(points[0], points[1]), dist(points[1], points[2])) < 1e-12:
        with pytest.raises(SolverError):
            solve_two_bone_batch(root, knee, end, target, **{n: getattr(options, n) for n in OPTION_NAMES})
        return
    batch = solve_two_bone_batch(root, knee, end, target, **{n: getattr(options, n) for n in OPTION_NAMES})
    assert np.isfinite(batch.knee).all() and np.isfinite(batch.end).all() and np.isfinite(batch.stretch).all()
    scalar = solve_two_bone(*points, options=options)
    size = Limb(*points[:3]).size
    assert_rows_agree(batch, [scalar], [size])
