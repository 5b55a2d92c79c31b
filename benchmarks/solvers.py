# SPDX-License-Identifier: GPL-3.0-or-later
"""How fast the solver maths is, on one core: scalar solves in µs, batch solves in solves per second, and
the two chain kernels (numpy batch, Python scalar) per character frame.

    ~/.cache/limb_ik/venv-blender-5.2/bin/python benchmarks/solvers.py [--quick]

Needs only numpy (no Blender). Every figure is the best and the median of several timed runs;
inputs are random but realistic limbs (rotated, rolled, some with unconnected joints), the
same on every run (fixed seed).
"""

import os

# One core: numpy's BLAS must not start threads (set before numpy is imported).
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import timeit  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

BENCHMARKS = Path(__file__).resolve().parent
# The repository root first, so `solvers` is the product's package and not this file.
sys.path[0:1] = [str(BENCHMARKS.parent), str(BENCHMARKS)]

import numpy as np  # noqa: E402
import report  # noqa: E402

from solvers import (  # noqa: E402
    ChainBatch,
    chain_local_rotations,
    solve_chains,
    solve_three_bone,
    solve_three_bone_batch,
    solve_two_bone,
    solve_two_bone_batch,
)
from solvers.rotation_modes import matrix_to_quat, quat_to_matrix  # noqa: E402
from solvers.scalar_chains import SCALAR_LIMIT, solve_scalar  # noqa: E402

SCALAR_GOAL_US = 3.0  #: issue goal: a scalar two-bone solve in at most this many µs
BATCH_GOAL = 3e6  #: issue goal: two-bone solves per second, positions and local quaternions
SIZES = (10_000, 100_000, 1_000_000)
SEED = 20240


@dataclass
class Chains:
    """N random chains of k bones in armature space, as the rig layer hands them to the solvers."""

    matrices: np.ndarray  #: (N, k, 4, 4) pose matrices
    scales: np.ndarray  #: (N, k, 3)
    rotations: np.ndarray  #: (N, k, 4) local rotations
    points: np.ndarray  #: (N, k + 1, 3) joints, first head to tip
    target: np.ndarray  #: (N, 3)
    end_rotation: np.ndarray  #: (N, 4) goal rotation of the last bone
    hinge: np.ndarray  #: (N, 3) current bend axis (armature space)
    pole: np.ndarray  #: (N, 3) a point in front of the knee


def random_quaternions(rng: np.random.Generator, n: int, max_angle: float = np.pi) -> np.ndarray:
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    half = 0.5 * rng.uniform(0.0, max_angle, n)
    return np.column_stack([np.cos(half), axis * np.sin(half)[:, None]])


def axis_rotation(angle: np.ndarray, axis: int) -> np.ndarray:
    """(N, 3, 3) rotations by ``angle`` about the coordinate axis ``axis``."""
    q = np.zeros((len(angle), 4))
    q[:, 0], q[:, 1 + axis] = np.cos(0.5 * angle), np.sin(0.5 * angle)
    return quat_to_matrix(q)


def random_chains(rng: np.random.Generator, n: int, k: int) -> Chains:
    """Rotated and rolled bones of 25-60 cm, each bent 15-85° from its parent, half of them with the
    child's head up to a few cm off the parent's tail; targets mostly within reach."""
    matrices = np.tile(np.eye(4), (n, k, 1, 1))
    lengths = rng.uniform(0.25, 0.6, (n, k))
    rotations = random_quaternions(rng, n * k, 0.8).reshape(n, k, 4)
    frame = quat_to_matrix(random_quaternions(rng, n))
    head = rng.uniform(-3.0, 3.0, (n, 3))
    unconnected = rng.random(n) < 0.5
    for i in range(k):
        if i > 0:
            gap = np.where(unconnected[:, None], rng.normal(0.0, 0.02, (n, 3)), 0.0)
            offset = np.column_stack([gap[:, 0], lengths[:, i - 1] + gap[:, 1], gap[:, 2]])
            head = head + np.einsum("nij,nj->ni", frame, offset)
            bend = axis_rotation(rng.uniform(0.25, 1.5, n), 0) @ axis_rotation(rng.uniform(-np.pi, np.pi, n), 1)
            frame = frame @ bend @ quat_to_matrix(rotations[:, i])
        matrices[:, i, :3, :3], matrices[:, i, :3, 3] = frame, head
    tip = head + frame[:, :, 1] * lengths[:, -1, None]
    points = np.concatenate([matrices[:, :, :3, 3], tip[:, None]], axis=1)
    end_rotation = matrix_to_quat(frame @ quat_to_matrix(random_quaternions(rng, n, 0.5)))
    direction = rng.normal(size=(n, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    reach = lengths[:, :2].sum(axis=1) * rng.uniform(0.2, 1.05, n)  # about 1 in 17 out of reach
    target = points[:, 0] + direction * reach[:, None]
    if k == 3:  # the tip goes where the end bone, turned to its goal, puts it
        target += quat_to_matrix(end_rotation)[:, :, 1] * lengths[:, 2, None]
    hinge = np.cross(points[:, 1] - points[:, 0], points[:, 2] - points[:, 1])
    pole = points[:, 1] + 0.5 * np.cross(hinge, points[:, 2] - points[:, 0])
    return Chains(matrices, np.ones((n, k, 3)), rotations, points, target, end_rotation, hinge, pole)


def time_call(function: Callable[[], object], calls_per_run: int, repeat: int, min_seconds: float) -> report.Timing:
    """Seconds per call of ``function``, one entry per run; each run loops until it lasts ``min_seconds``.

    The first run finds the loop count (and warms up); it counts as a run only when one call
    already lasts long enough, so that the largest batches are not solved more often than needed.
    """
    timer = timeit.Timer(function)
    number, first = 1, timer.timeit(1)
    runs = [first] if first >= min_seconds else []
    while first < min_seconds:
        number *= 2 if number < 8 else 4
        first = timer.timeit(number)
    runs += timer.repeat(repeat - len(runs), number)
    return report.Timing(tuple(t / (number * calls_per_run) for t in runs))


def scalar_cases(rng: np.random.Generator, count: int = 100) -> dict[str, Callable[[], None]]:
    """Each case solves ``count`` different limbs per call, so its branches are mixed as in a rig."""
    two = random_chains(rng, count, 2)
    three = random_chains(rng, count, 3)

    def rows(*arrays):
        return [tuple(tuple(float(x) for x in array[r]) for array in arrays) for r in range(count)]

    plain = rows(two.points[:, 0], two.points[:, 1], two.points[:, 2], two.target)
    hinged = rows(two.points[:, 0], two.points[:, 1], two.points[:, 2], two.target, two.hinge)
    poled = rows(two.points[:, 0], two.points[:, 1], two.points[:, 2], two.target, two.pole)
    end_direction = quat_to_matrix(three.end_rotation)[:, :, 1]
    three_rows = rows(*(three.points[:, i] for i in range(4)), three.target, end_direction)

    def solve_plain():
        for root, knee, end, target in plain:
            solve_two_bone(root, knee, end, target)

    def solve_hinged():
        for root, knee, end, target, hinge in hinged:
            solve_two_bone(root, knee, end, target, hinge=hinge)

    def solve_poled():
        for root, knee, end, target, pole in poled:
            solve_two_bone(root, knee, end, target, pole=pole)

    def solve_three():
        for root, knee, ankle, tip, target, direction in three_rows:
            solve_three_bone(root, knee, ankle, tip, target, direction)

    return {
        "two-bone, plain": solve_plain,
        "two-bone, with hinge": solve_hinged,
        "two-bone, with pole": solve_poled,
        "three-bone (end-plane swivel)": solve_three,
    }


def two_bone_positions(c: Chains) -> Callable[[], object]:
    return lambda: solve_two_bone_batch(c.points[:, 0], c.points[:, 1], c.points[:, 2], c.target)


def two_bone_quaternions(c: Chains) -> Callable[[], object]:
    def run():
        solved = solve_two_bone_batch(c.points[:, 0], c.points[:, 1], c.points[:, 2], c.target)
        new_points = np.stack([c.points[:, 0], solved.knee, solved.end], axis=1)
        return chain_local_rotations(c.matrices, c.scales, c.rotations, c.points, new_points)

    return run


def three_bone_quaternions(c: Chains) -> Callable[[], object]:
    direction = quat_to_matrix(c.end_rotation)[:, :, 1]

    def run():
        solved = solve_three_bone_batch(*(c.points[:, i] for i in range(4)), c.target, direction)
        new_points = np.stack([c.points[:, 0], solved.knee, solved.ankle, solved.tip], axis=1)
        return chain_local_rotations(c.matrices, c.scales, c.rotations, c.points, new_points, c.end_rotation)

    return run


def chain_batch(c: Chains, goal_matrices: bool = False, plane: np.ndarray | None = None) -> ChainBatch:
    """The chains as the rig layer hands them over (with ``goal_matrices``, three-bone goals as matrices, as
    the rig gives them), hinges from the current bend, held in planes with normals ``plane`` if given."""
    k = c.matrices.shape[1]
    goals = None if k == 2 else quat_to_matrix(c.end_rotation) if goal_matrices else c.end_rotation
    return ChainBatch(
        matrices=c.matrices,
        scales=c.scales,
        rotations=c.rotations,
        points=c.points,
        target=c.target,
        end_rotation=goals,
        hinge=np.zeros((len(c.target), 3)),
        plane=plane,
    )


def whole_chain_solve(c: Chains) -> Callable[[], object]:
    """What the rig layer calls: rigid space, hinge, solve, write-back, posing check and influence blend."""
    batch = chain_batch(c)
    return lambda: solve_chains(batch)


def whole_chain_solve_in_planes(c: Chains) -> Callable[[], object]:
    """The same, every limb held in a plane through its first joint (random normals): :mod:`solvers.plane`."""
    batch = chain_batch(c, plane=np.random.default_rng(SEED).normal(size=(len(c.target), 3)))
    return lambda: solve_chains(batch)


def write_back(c: Chains) -> Callable[[], object]:
    """(b) without its positions: the write-back from joints already solved."""
    solved = solve_two_bone_batch(c.points[:, 0], c.points[:, 1], c.points[:, 2], c.target)
    new_points = np.stack([c.points[:, 0], solved.knee, solved.end], axis=1)
    return lambda: chain_local_rotations(c.matrices, c.scales, c.rotations, c.points, new_points)


def one_pass(c: Chains) -> Callable[[], object]:
    """One numpy operation over the component arrays of the blocks the kernels work in (8192 rows)."""
    a, b = np.ascontiguousarray(c.points[:, 0, 0]), np.ascontiguousarray(c.points[:, 1, 1])
    block = 8192

    def run():
        for start in range(0, len(a), block):
            a[start : start + block] * b[start : start + block]

    return run


BATCH_CASES = (
    # label, bones, builder, checked against the batch goal, largest N
    ("(a) two-bone, positions only", 2, two_bone_positions, False, 10**6),
    ("(b) two-bone, positions + local quaternions", 2, two_bone_quaternions, True, 10**6),
    ("(c) three-bone, positions + local quaternions", 3, three_bone_quaternions, False, 10**6),
    ("(d) two-bone, `solve_chains` (rig path)", 2, whole_chain_solve, False, 10**5),
    ("(e) three-bone, `solve_chains` (rig path)", 3, whole_chain_solve, False, 10**5),
    ("(f) two-bone in a plane, `solve_chains`", 2, whole_chain_solve_in_planes, False, 10**5),
    ("(g) three-bone in a plane, `solve_chains`", 3, whole_chain_solve_in_planes, False, 10**5),
)
#: What (b) is made of, in the same units: its write-back alone, and a single numpy operation.
PARTS = (
    ("(b) without positions: the write-back (`chain_local_rotations`)", write_back),
    ("one numpy operation over a block's component arrays (`a * b`)", one_pass),
)
CHARACTER_LIMBS = (2, 4)  #: limbs of a character, per frame
CROSSOVER_ROWS = (1, 2, 4, 8, 12, 16, 20, 24, 32)  #: chains per solve, to find where the kernels cost the same


def scalar_table(repeat: int) -> str:
    rows = []
    for label, case in scalar_cases(np.random.default_rng(SEED)).items():
        timing = time_call(case, 100, repeat, 0.2)
        goal = (
            "—"
            if label.startswith("three")
            else f"<= {SCALAR_GOAL_US:g} µs: {report.verdict(timing.best * 1e6 <= SCALAR_GOAL_US)}"
        )
        rows.append(
            (label, f"{timing.best * 1e6:.2f}", f"{timing.median * 1e6:.2f}", report.percent(timing.spread), goal)
        )
    return report.table(("Scalar solve (pure Python)", "best µs", "median µs", "spread", "goal"), rows)


def batch_table(repeat: int, sizes: tuple[int, ...]) -> str:
    rows = []
    for label, bones, builder, goal, largest in BATCH_CASES:
        for n in (n for n in sizes if n <= largest):
            chains = random_chains(np.random.default_rng(SEED + n), n, bones)
            timing = time_call(builder(chains), n, repeat if n < 10**6 else 3, 0.2)
            rate, median = 1.0 / timing.best, 1.0 / timing.median
            status = f">= {BATCH_GOAL / 1e6:g} M/s: {report.verdict(rate >= BATCH_GOAL)}" if goal else "—"
            rows.append(
                (
                    label,
                    f"{n:,}",
                    f"{rate / 1e6:.2f}",
                    f"{median / 1e6:.2f}",
                    f"{timing.best * 1e9:.0f}",
                    report.percent(timing.spread),
                    status,
                )
            )
            del chains
    return report.table(
        (
            "Batch solve (numpy, one core)",
            "limbs N",
            "best M solves/s",
            "median M solves/s",
            "ns/limb",
            "spread",
            "goal",
        ),
        rows,
        right=[False, True, True, True, True, True, False],
    )


def parts_table(repeat: int, n: int) -> str:
    """Where (b)'s time goes, per limb: its positions (a), its write-back, and one numpy operation, whose
    time the others are counted in."""
    chains = random_chains(np.random.default_rng(SEED + n), n, 2)
    timings = {
        label: time_call(builder(chains), n, repeat, 0.2).best
        for label, builder in (
            ("(a) two-bone, positions only", two_bone_positions),
            *PARTS,
            ("(b) two-bone, positions + local quaternions", two_bone_quaternions),
        )
    }
    one = timings[PARTS[1][0]]
    rows = [(label, f"{t * 1e9:.1f}", f"{t / one:.0f}") for label, t in timings.items()]
    return report.table((f"Where (b)'s time goes, N = {n:,}", "ns/limb", "numpy operations' worth"), rows)


def kernel_rows(bones: int, n: int, repeat: int) -> tuple[float, float]:
    """Best µs per solve of n chains of ``bones`` bones, batch kernel and scalar kernel."""
    batch = chain_batch(random_chains(np.random.default_rng(SEED + 7 * n + bones), n, bones), goal_matrices=True)
    return tuple(
        time_call(lambda kernel=kernel: kernel(batch), 1, repeat, 0.1).best * 1e6
        for kernel in (solve_chains, solve_scalar)
    )


def character_table(repeat: int) -> str:
    """A character's limbs per frame with each kernel: what the live frame handler pays for the solve."""
    rows = []
    for bones in (2, 3):
        for limbs in CHARACTER_LIMBS:
            batch_us, scalar_us = kernel_rows(bones, limbs, repeat)
            rows.append(
                (
                    f"{limbs} limbs of {bones} bones",
                    f"{batch_us:.0f}",
                    f"{scalar_us:.0f}",
                    f"{scalar_us / limbs:.0f}",
                    f"{batch_us / scalar_us:.1f}×",
                )
            )
    return report.table(
        (
            "Character frame (`solve_chains` vs `solve_scalar`)",
            "batch µs",
            "scalar µs",
            "scalar µs/limb",
            "scalar faster",
        ),
        rows,
    )


def crossover_table(repeat: int) -> str:
    """Both kernels for growing numbers of chains, and the number above which the batch kernel is faster."""
    rows, crossing = [], {}
    for n in CROSSOVER_ROWS:
        cells = [f"{n}"]
        for bones in (2, 3):
            batch_us, scalar_us = kernel_rows(bones, n, repeat)
            cells += [f"{batch_us:.0f}", f"{scalar_us:.0f}"]
            if scalar_us <= batch_us:
                crossing[bones] = n
        rows.append(cells)
    found = ", ".join(f"{bones} bones: scalar faster up to {crossing.get(bones, 0)}" for bones in (2, 3))
    return (
        report.table(
            ("chains", "2 bones: batch µs", "2 bones: scalar µs", "3 bones: batch µs", "3 bones: scalar µs"), rows
        )
        + f"\n\nMeasured: {found} chains; `solve_by_count` takes the scalar kernel up to SCALAR_LIMIT = {SCALAR_LIMIT}."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (default 5)")
    parser.add_argument("--quick", action="store_true", help="3 runs, and N up to 1e5 only")
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    sizes = SIZES[:2] if args.quick else SIZES
    report.header(
        "Solver maths",
        (
            f"numpy {np.__version__}, one thread (OMP/OPENBLAS/MKL_NUM_THREADS=1)",
            f"best and median of {repeat} runs (3 at N = 1e6); spread = slowest run / best run - 1",
            "random limbs: rotated and rolled frames, half with unconnected joints, ~6% of targets out of reach",
            "(a)-(c): `solve_*_bone_batch`, then `chain_local_rotations`; (d)-(g): `solvers.chains.solve_chains`, "
            "what the rig layer calls (rigid space, hinge, write-back, posing check, influence blend), up to N = 1e5",
            "character frame and crossover: `solve_chains` (numpy) against `solvers.scalar_chains.solve_scalar` "
            "(Python floats) on the same chains, three-bone goals as matrices as the rig gives them; best of the runs",
        ),
    )
    print(scalar_table(repeat), end="\n\n", flush=True)
    print(batch_table(repeat, sizes), end="\n\n", flush=True)
    print(parts_table(repeat, sizes[-1] if args.quick else 10**5), end="\n\n", flush=True)
    print(character_table(repeat), end="\n\n", flush=True)
    print(crossover_table(repeat), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
