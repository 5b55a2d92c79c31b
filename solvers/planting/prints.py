# SPDX-License-Identifier: GPL-3.0-or-later
"""Shapes the viewport overlay draws of a planting, on plain arrays: a sole's outline and a circle.

Skeletons have no sole, only its heel, ball and tip (:func:`heel_points`); the outline is the hull of
a disc around each, sized by the foot's length: widest at the ball, rounded at the heel, narrow at the
tip, as a footprint looks.
"""

import numpy as np

#: Disc radii around the heel, ball and tip, as fractions of the heel-to-tip length.
SOLE_RADII = (0.14, 0.2, 0.1)
#: Points on each disc before the hull is taken.
DISC_POINTS = 32


def sole_outline(heel, ball, tip, spacing: float) -> np.ndarray:
    """(k, 2) the closed outline (first point repeated last) of a sole whose heel, ball and tip stand at the
    2D points given, counter-clockwise, no two points further apart than ``spacing`` (so that the outline
    can follow a ground that is not flat)."""
    points = np.array([heel, ball, tip], dtype=np.float64)
    length = max(float(np.linalg.norm(points[2] - points[0])), float(np.linalg.norm(points[1] - points[0])))
    if not np.isfinite(points).all() or length == 0.0:
        raise ValueError("a sole needs finite heel, ball and tip points, not all in one place")
    angles = np.linspace(0.0, 2.0 * np.pi, DISC_POINTS, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    discs = np.concatenate([centre + radius * length * ring for centre, radius in zip(points, SOLE_RADII)])
    hull = convex_hull(discs)
    return resample(np.concatenate([hull, hull[:1]]), spacing)


def convex_hull(points) -> np.ndarray:
    """(h, 2) the convex hull of (n, 2) points, counter-clockwise (Andrew's monotone chain)."""
    points = np.unique(np.asarray(points, dtype=np.float64), axis=0)  # sorted by x, then y
    if len(points) < 3:
        return points

    def half(ordered):
        chain: list[np.ndarray] = []
        for point in ordered:
            while len(chain) >= 2 and _cross(chain[-2], chain[-1], point) <= 0.0:
                chain.pop()
            chain.append(point)
        return chain[:-1]

    return np.array(half(points) + half(points[::-1]))


def _cross(o, a, b) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def resample(polyline, spacing: float) -> np.ndarray:
    """The (k, d) ``polyline`` with points added along its segments so none is longer than ``spacing``."""
    polyline = np.asarray(polyline, dtype=np.float64)
    out = [polyline[:1]]
    for start, end in zip(polyline[:-1], polyline[1:]):
        steps = max(1, int(np.ceil(np.linalg.norm(end - start) / spacing)))
        t = np.arange(1, steps + 1)[:, None] / steps
        out.append(start + t * (end - start))
    return np.concatenate(out)


def circle(centre, normal, radius: float, count: int = 64) -> np.ndarray:
    """(count + 1, 3) a closed polyline around the circle of ``centre`` and unit ``normal``."""
    centre, normal = np.asarray(centre, dtype=np.float64), np.asarray(normal, dtype=np.float64)
    across = np.cross(normal, np.eye(3)[int(np.argmin(np.abs(normal)))])
    across /= np.linalg.norm(across)
    other = np.cross(normal, across)
    angles = np.linspace(0.0, 2.0 * np.pi, count + 1)
    return centre + radius * (np.cos(angles)[:, None] * across + np.sin(angles)[:, None] * other)
