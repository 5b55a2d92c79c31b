# SPDX-License-Identifier: GPL-3.0-or-later
"""Hypothesis strategies and small float64 helpers shared by the solver tests.

A *case* is a two-bone limb (root, knee, end), a target chosen to be reachable, too far, too
close, on the root or a hair's breadth from it, optional pole / hinge / plane (some of them
deliberately degenerate: on the root-target line, parallel to it, tiny), and reach options.
Lengths scale with the limb, so every tolerance is relative to the limb's size.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

from solvers.options import Reach, ReachOptions

Vec3 = tuple[float, float, float]
#: For properties whose every example holds several limbs: half the usual examples cover more rows than the others do.
MANY_ROWS = settings(max_examples=max(settings().max_examples // 2, 10))
#: The reach options of the solvers, by keyword.
OPTION_NAMES = ("mode", "softness", "max_stretch", "stretch_start", "min_bend", "max_bend")

# ---------------------------------------------------------------------------------------------
# Plain float64 vector helpers (deliberately independent of solvers/)


def add(a, b) -> Vec3:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def sub(a, b) -> Vec3:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def mul(a, s: float) -> Vec3:
    return (a[0] * s, a[1] * s, a[2] * s)


def dot(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b) -> Vec3:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a) -> float:
    return math.hypot(a[0], a[1], a[2])


def dist(a, b) -> float:
    return norm(sub(a, b))


def unit(a) -> Vec3:
    """``a`` at length 1; scaled by its largest component first (``math.hypot`` of subnormals is inexact)."""
    big = max(abs(a[0]), abs(a[1]), abs(a[2]))
    a = (a[0] / big, a[1] / big, a[2] / big)
    n = norm(a)
    return (a[0] / n, a[1] / n, a[2] / n)


def perpendicular_part(v, axis) -> Vec3:
    """``v`` without its component along the unit ``axis``."""
    return sub(v, mul(axis, dot(v, axis)))


def angle_between(a, b) -> float:
    return math.atan2(norm(cross(a, b)), dot(a, b))


def all_finite(*values) -> bool:
    flat = []
    for v in values:
        if isinstance(v, (tuple, list)):
            flat.extend(v)
        else:
            flat.append(v)
    return all(math.isfinite(x) for x in flat)


# ---------------------------------------------------------------------------------------------
# Strategies


@functools.cache
def finite(lo: float, hi: float):
    """Floats in [lo, hi]; cached, as building and validating a strategy costs more than drawing from it."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@functools.cache
def one_of(choices: tuple):
    return st.sampled_from(choices)


AXES = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0)]


@st.composite
def unit_vectors(draw) -> Vec3:
    """Uniform-ish directions, with the coordinate axes (exact zeros) now and then."""
    if draw(st.integers(0, 7)) == 0:
        return draw(one_of(tuple(AXES)))
    z = draw(finite(-1.0, 1.0))
    phi = draw(finite(0.0, 2.0 * math.pi))
    r = math.sqrt(max(1.0 - z * z, 0.0))
    return unit((r * math.cos(phi), r * math.sin(phi), z))


@st.composite
def perpendicular_units(draw, axis) -> Vec3:
    """A unit vector perpendicular to the unit ``axis``."""
    p = perpendicular_part(draw(unit_vectors()), axis)
    if norm(p) > 0.1:
        return unit(p)
    least_aligned = min(range(3), key=lambda i: abs(axis[i]))
    return unit(perpendicular_part(AXES[least_aligned], axis))


@st.composite
def tilted(draw, direction, smallest: float = -12.0, largest: float = -3.0) -> Vec3:
    """``direction`` tilted by a tiny angle (10**smallest to 10**largest radians)."""
    angle = 10.0 ** draw(finite(smallest, largest))
    side = draw(perpendicular_units(direction))
    return unit(add(mul(direction, math.cos(angle)), mul(side, math.sin(angle))))


@dataclass
class Limb:
    root: Vec3
    knee: Vec3
    end: Vec3

    @property
    def upper(self) -> float:
        return dist(self.knee, self.root)

    @property
    def lower(self) -> float:
        return dist(self.end, self.knee)

    @property
    def size(self) -> float:
        return self.upper + self.lower


@st.composite
def limbs(draw, root_at_origin: bool | None = None) -> Limb:
    """A two-bone limb: random, straight, nearly straight or folded, equal or unequal bones,
    anywhere from 1/100 to 100 units long, its root at most 100 limb sizes from the origin."""
    size = 10.0 ** draw(finite(-2.0, 2.0))
    at_origin = draw(st.booleans()) if root_at_origin is None else root_at_origin
    root = (0.0, 0.0, 0.0) if at_origin else mul(draw(unit_vectors()), size * draw(finite(0.0, 100.0)))
    upper = size * draw(finite(0.05, 1.0))
    lower = upper if draw(st.integers(0, 4)) == 0 else size * draw(finite(0.05, 1.0))
    first = draw(unit_vectors())
    shape = draw(one_of(("random", "random", "straight", "nearly straight", "folded")))
    if shape == "random":
        second = draw(unit_vectors())
    elif shape == "straight":
        second = first
    elif shape == "nearly straight":
        second = draw(tilted(first))
    else:
        second = mul(first, -1.0)
    knee = add(root, mul(first, upper))
    return Limb(root, knee, add(knee, mul(second, lower)))


TARGET_KINDS = ("reachable", "reachable", "reachable", "edge", "far", "near", "root", "tiny")
POLE_KINDS = ("none", "none", "random", "random", "on line", "root", "knee", "target")
AXIS_KINDS = ("none", "none", "random", "random", "along", "nearly along", "tiny")


@st.composite
def targets(draw, limb: Limb, kinds=TARGET_KINDS) -> tuple[Vec3, str]:
    """A target for ``limb`` and its kind: reachable (strictly inside the range), at an edge of the
    range, too far, too close, exactly on the root, or within 1e-320..1e-3 limb sizes of it."""
    kind = draw(one_of(tuple(kinds)))
    l1, l2 = limb.upper, limb.lower
    shortest, longest = abs(l1 - l2), l1 + l2
    direction = draw(unit_vectors())
    if kind == "reachable":
        distance = shortest + (longest - shortest) * draw(finite(0.001, 0.999))
    elif kind == "edge":
        distance = (shortest, longest)[draw(st.integers(0, 1))]
    elif kind == "far":
        distance = longest * draw(finite(1.001, 3.0))
    elif kind == "near":
        distance = shortest * draw(finite(0.0, 0.999))
    elif kind == "root":
        return limb.root, kind
    else:  # tiny, including offsets whose squares underflow
        distance = limb.size * 10.0 ** draw(finite(-320.0, -3.0))
    return add(limb.root, mul(direction, distance)), kind


@st.composite
def poles(draw, limb: Limb, target, kinds=POLE_KINDS) -> Vec3 | None:
    """No pole, a random one, or one on the root-target line, on the root, the knee or the target."""
    kind = draw(one_of(tuple(kinds)))
    if kind == "none":
        return None
    if kind == "random":
        return add(limb.root, mul(draw(unit_vectors()), limb.size * draw(finite(0.01, 3.0))))
    if kind == "on line":
        return add(limb.root, mul(sub(target, limb.root), draw(finite(-2.0, 2.0))))
    return {"root": limb.root, "knee": limb.knee, "target": target}[kind]


@st.composite
def axes(draw, limb: Limb, target, kinds=AXIS_KINDS) -> Vec3 | None:
    """A hinge axis or plane direction: none, random, along the root-target line, nearly along it,
    or with a magnitude so small that its square underflows."""
    kind = draw(one_of(tuple(kinds)))
    if kind == "none":
        return None
    magnitude = 10.0 ** draw(finite(-2.0, 2.0))
    aim = sub(target, limb.root)
    aim = unit(aim) if aim != (0.0, 0.0, 0.0) else draw(unit_vectors())
    if kind == "random":
        return mul(draw(unit_vectors()), magnitude)
    if kind == "along":
        return mul(aim, magnitude * (1.0, -1.0)[draw(st.integers(0, 1))])
    if kind == "nearly along":
        return mul(draw(tilted(aim, -11.0, -4.0)), magnitude)
    return mul(draw(unit_vectors()), 10.0 ** draw(finite(-320.0, -150.0)))


@st.composite
def reach_options(draw, size: float, modes=tuple(Reach)) -> ReachOptions:
    """Options with each feature on or off; ``softness`` scales with the limb ``size``."""
    mode = draw(one_of(tuple(modes)))
    softness = 0.0 if draw(st.booleans()) else size * draw(finite(0.001, 0.5))
    max_stretch = 1.0 if draw(st.integers(0, 3)) == 0 else draw(finite(1.0, 3.0))
    stretch_start = 1.0 if draw(st.booleans()) else draw(finite(0.3, 1.0))
    min_bend = 0.0 if draw(st.booleans()) else draw(finite(0.0, math.pi))
    max_bend = math.pi if draw(st.booleans()) else min_bend + (math.pi - min_bend) * draw(finite(0.0, 1.0))
    return ReachOptions(mode, softness, max_stretch, stretch_start, min_bend, max_bend)


@dataclass
class Case:
    limb: Limb
    target: Vec3
    kind: str
    pole: Vec3 | None
    hinge: Vec3 | None
    plane: Vec3 | None
    options: ReachOptions

    def kwargs(self) -> dict:
        return dict(pole=self.pole, hinge=self.hinge, plane=self.plane, options=self.options)

    def args(self) -> tuple:
        return (self.limb.root, self.limb.knee, self.limb.end, self.target)


def _kinds(choice, default):
    """True: all kinds; False: none; a string or tuple: those kinds."""
    if choice is True:
        return default
    if choice is False:
        return ("none",)
    return (choice,) if isinstance(choice, str) else tuple(choice)


@st.composite
def cases(
    draw,
    kind=TARGET_KINDS,
    pole=True,
    hinge=True,
    plane=True,
    options: bool = True,
    modes=tuple(Reach),
) -> Case:
    """A limb, a target of one of the ``kind`` kinds, and a pole, hinge and plane each of all
    kinds (True), absent (False) or of the given kinds; random options or the defaults."""
    limb = draw(limbs())
    target, kind = draw(targets(limb, _kinds(kind, TARGET_KINDS)))
    return Case(
        limb,
        target,
        kind,
        draw(poles(limb, target, _kinds(pole, POLE_KINDS))),
        draw(axes(limb, target, _kinds(hinge, AXIS_KINDS))),
        draw(axes(limb, target, _kinds(plane, AXIS_KINDS))),
        draw(reach_options(limb.size, modes)) if options else ReachOptions(),
    )


# ---------------------------------------------------------------------------------------------
# Rotations built without quaternion algebra, to check the solvers' own against


def rodrigues(axis, angle: float):
    """Rotation matrix about the unit ``axis`` by ``angle`` (right-handed), from Rodrigues' formula."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def quaternion_matrix(q):
    """Matrix of the unit quaternion ``q`` = (w, x, y, z) by way of its axis and angle."""
    w, v = q[0], np.asarray(q[1:], dtype=float)
    s = float(np.linalg.norm(v))
    if s == 0.0:
        return np.eye(3)
    return rodrigues(v / s, 2.0 * math.atan2(s, w))


def knee_tolerance(size: float, distance: float, offset: float) -> float:
    """How well a knee is defined when its offset from the root-end line is ``offset``.

    Lengths measured from points differ from the exact ones in their last bits (~1e-16 of the
    limb's ``size``). Near full extension, or folded with the end ``distance`` from the root, the
    knee's offset is a square root of such a difference: it is only good to about
    ``size * sqrt(1e-15 * size / distance)``. Elsewhere 1e-9 of the size is plenty.
    """
    if offset > 1e-4 * size:
        return 1e-9 * size
    return size * (1e-9 + math.sqrt(1e-15 * size / max(distance, 1e-300)))
