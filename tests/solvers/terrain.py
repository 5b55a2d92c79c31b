# SPDX-License-Identifier: GPL-3.0-or-later
"""Analytic grounds for planting, as ``cast_down(points) -> (heights, normals, hit)`` callables.

Planes at any slope and direction, a step with a vertical riser, and sine ground; any of them
with a region that has no ground at all. Heights and normals are exact formulas, so the tests
measure the planted feet against the ground itself, not against anything the solver computes.
Where there is no ground the heights and normals are garbage (``miss``): the solver must not
read them.
"""

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from hypothesis import strategies as st


def _normals(gx, gy) -> np.ndarray:
    """(N, 3) upward unit normals of a height field with gradient (gx, gy)."""
    n = np.column_stack([-np.asarray(gx, dtype=np.float64), -np.asarray(gy, dtype=np.float64), np.ones(len(gx))])
    return n / np.linalg.norm(n, axis=1, keepdims=True)


@dataclass(frozen=True)
class Terrain:
    """A height field ``height(x, y)``; ``hole``, if any, is a disc (x, y, radius) with no ground."""

    kind: ClassVar[str] = ""
    hole: tuple[float, float, float] | None = None
    miss: float = math.nan  #: what the heights and normals read where there is no ground

    def height(self, xy) -> np.ndarray:
        raise NotImplementedError

    def gradient(self, xy) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def has_ground(self, xy) -> np.ndarray:
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        if self.hole is None:
            return np.ones(len(xy), bool)
        x, y, radius = self.hole
        return np.hypot(xy[:, 0] - x, xy[:, 1] - y) > radius

    def normal(self, xy) -> np.ndarray:
        return _normals(*self.gradient(np.asarray(xy, dtype=np.float64).reshape(-1, 2)))

    def __call__(self, points):
        """The ``cast_down`` planting takes: the ground straight below (or above) each point."""
        xy = np.asarray(points, dtype=np.float64).reshape(-1, 3)[:, :2]
        hit = self.has_ground(xy)
        heights = np.where(hit, self.height(xy), self.miss)
        normals = np.where(hit[:, None], self.normal(xy), self.miss)
        return heights, normals, hit


@dataclass(frozen=True)
class Plane(Terrain):
    """Rising at ``slope`` (radians) towards ``direction`` (radians about +Z from +X), at ``base`` over ``origin``."""

    kind: ClassVar[str] = "plane"
    slope: float = 0.0
    direction: float = 0.0
    base: float = 0.0
    origin: tuple[float, float] = (0.0, 0.0)

    def _grad(self):
        rise = math.tan(self.slope)
        return rise * math.cos(self.direction), rise * math.sin(self.direction)

    def height(self, xy):
        gx, gy = self._grad()
        return self.base + gx * (xy[:, 0] - self.origin[0]) + gy * (xy[:, 1] - self.origin[1])

    def gradient(self, xy):
        gx, gy = self._grad()
        return np.full(len(xy), gx), np.full(len(xy), gy)


@dataclass(frozen=True)
class Step(Terrain):
    """``base`` on one side of a vertical riser, ``base + rise`` beyond it: the riser is the line
    through ``origin`` across ``direction`` (radians about +Z from +X)."""

    kind: ClassVar[str] = "step"
    rise: float = 0.2
    direction: float = 0.0
    base: float = 0.0
    origin: tuple[float, float] = (0.0, 0.0)

    def beyond(self, xy) -> np.ndarray:
        """Signed distance of (N, 2) points past the riser."""
        return (xy[:, 0] - self.origin[0]) * math.cos(self.direction) + (xy[:, 1] - self.origin[1]) * math.sin(
            self.direction
        )

    def height(self, xy):
        return self.base + np.where(self.beyond(xy) > 0.0, self.rise, 0.0)

    def gradient(self, xy):
        return np.zeros(len(xy)), np.zeros(len(xy))


@dataclass(frozen=True)
class Sine(Terrain):
    """``base`` plus two sine waves, each (amplitude, wavelength, direction, phase)."""

    kind: ClassVar[str] = "sine"
    base: float = 0.0
    waves: tuple[tuple[float, float, float, float], ...] = ()

    def _terms(self, xy):
        for amplitude, wavelength, direction, phase in self.waves:
            k = 2.0 * math.pi / wavelength
            along = xy[:, 0] * math.cos(direction) + xy[:, 1] * math.sin(direction)
            yield amplitude, k, direction, k * along + phase

    def height(self, xy):
        return self.base + sum((a * np.sin(arg) for a, _, _, arg in self._terms(xy)), np.zeros(len(xy)))

    def gradient(self, xy):
        gx, gy = np.zeros(len(xy)), np.zeros(len(xy))
        for a, k, direction, arg in self._terms(xy):
            slope = a * k * np.cos(arg)
            gx, gy = gx + slope * math.cos(direction), gy + slope * math.sin(direction)
        return gx, gy


# ---------------------------------------------------------------------------------------------
# Strategies: each ground is placed around the walk's start and its floor, so the walk crosses
# whatever the ground has (a step's riser, a hole).


def _floats(lo: float, hi: float):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def planes(draw, floor: float, start, max_slope: float = 20.0) -> Plane:
    """Any direction, 0 to ``max_slope`` degrees, through a point near the floor under ``start``."""
    return Plane(
        slope=math.radians(draw(_floats(0.0, max_slope))),
        direction=draw(_floats(0.0, 2.0 * math.pi)),
        base=floor + draw(_floats(-0.3, 0.3)),
        origin=tuple(start),
    )


@st.composite
def steps(draw, floor: float, start, heading: float, distance: float) -> Step:
    """A riser up to 25 cm up or down, crossing the walk ``distance`` ahead of ``start`` at up
    to 30 degrees off square."""
    ahead = np.array(start) + distance * np.array([-math.sin(heading), math.cos(heading)])
    return Step(
        rise=draw(_floats(-0.25, 0.25)),
        direction=heading + 0.5 * math.pi + math.radians(draw(_floats(-30.0, 30.0))),
        base=floor + draw(_floats(-0.1, 0.1)),
        origin=(float(ahead[0]), float(ahead[1])),
    )


@st.composite
def sines(draw, floor: float) -> Sine:
    """Two waves of 1-3 m wavelength whose amplitudes add up to at most 5 cm."""
    total = draw(_floats(0.0, 0.05))
    share = draw(_floats(0.0, 1.0))
    waves = tuple(
        (amplitude, draw(_floats(1.0, 3.0)), draw(_floats(0.0, 2.0 * math.pi)), draw(_floats(0.0, 2.0 * math.pi)))
        for amplitude in (total * share, total * (1.0 - share))
    )
    return Sine(base=floor + draw(_floats(-0.2, 0.2)), waves=waves)


@st.composite
def terrains(draw, floor: float, start, heading: float, distance: float, kind: str, max_slope: float = 20.0):
    """A plane, a step or sine ground (``kind``) for a walk of ``distance`` metres from ``start`` along ``heading``."""
    if kind == "plane":
        return draw(planes(floor, start, max_slope))
    if kind == "step":
        return draw(steps(floor, start, heading, distance * draw(_floats(0.2, 0.8))))
    return draw(sines(floor))


@st.composite
def holes(draw, start, heading: float, distance: float) -> tuple[float, float, float]:
    """A disc with no ground, 10-80 cm across its radius, centred on or near the walk's path
    somewhere along its ``distance`` metres from ``start``."""
    forward = np.array([-math.sin(heading), math.cos(heading)])
    centre = np.array(start) + distance * draw(_floats(0.1, 0.9)) * forward
    centre += draw(_floats(-0.3, 0.3)) * np.array([forward[1], -forward[0]])
    return (float(centre[0]), float(centre[1]), draw(_floats(0.1, 0.8)))
