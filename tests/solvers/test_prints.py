# SPDX-License-Identifier: GPL-3.0-or-later
"""The overlay's shapes: the position system's knee circle holds the two-bone solver's knee; a sole's outline
holds its heel, ball and tip, closed and finely spaced; a circle polyline lies on its circle."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solvers import SolverError, solve_two_bone
from solvers.planting.prints import DISC_POINTS, circle, convex_hull, sole_outline
from solvers.two_bone import knee_circle

coordinate = st.floats(-2.0, 2.0, allow_nan=False)
point = st.tuples(coordinate, coordinate, coordinate)
length = st.floats(0.05, 1.0)


@given(point, point, point, point)
def test_the_solved_knee_lies_on_the_knee_circle(root, knee, end, target):
    upper, lower = (float(np.linalg.norm(np.subtract(a, b))) for a, b in ((knee, root), (end, knee)))
    if min(upper, lower) < 1e-3 or np.linalg.norm(np.subtract(target, root)) < 1e-3:
        return
    solved = solve_two_bone(root, knee, end, target)
    centre, normal, radius = knee_circle(root, solved.end, upper, lower)
    offset = np.subtract(solved.knee, centre)
    along = offset @ normal
    scale = upper + lower
    assert abs(along) <= 1e-9 * scale
    # a limb folded nearly shut has a tiny radius, a square root of a rounded difference
    assert abs(np.linalg.norm(offset - along * np.array(normal)) - radius) <= 1e-7 * scale


@given(point, point, length, length)
def test_the_circle_holds_every_knee_that_fits_the_bones(root, end, upper, lower):
    distance = float(np.linalg.norm(np.subtract(end, root)))
    if distance < 1e-3:
        return
    centre, normal, radius = knee_circle(root, end, upper, lower)
    for knee in circle(centre, normal, radius, 16):
        if abs(upper - lower) + 1e-6 < distance < upper + lower - 1e-6:  # in reach: the bones fit every point
            assert np.linalg.norm(knee - root) == pytest.approx(upper, abs=1e-9)
            assert np.linalg.norm(end - knee) == pytest.approx(lower, abs=1e-9)
        else:
            assert radius == 0.0


def test_an_end_on_the_root_has_no_circle():
    with pytest.raises(SolverError, match="no axis"):
        knee_circle((1.0, 2.0, 3.0), (1.0, 2.0, 3.0), 0.4, 0.4)
    with pytest.raises(SolverError, match="finite"):
        knee_circle((0.0, 0.0, 0.0), (float("nan"), 0.0, 0.0), 0.4, 0.4)


def inside(polygon, p) -> bool:
    x, y = p
    crossings = 0
    for (x0, y0), (x1, y1) in zip(polygon[:-1], polygon[1:]):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            crossings += 1
    return crossings % 2 == 1


@given(st.floats(-np.pi, np.pi), st.floats(0.1, 0.3), st.floats(0.0, 0.08))
def test_a_sole_outline_holds_its_points_closed_and_finely_spaced(heading, foot, toe):
    direction = np.array([np.cos(heading), np.sin(heading)])
    heel, ball = np.array([1.0, -2.0]), np.array([1.0, -2.0]) + foot * direction
    tip = ball + toe * direction
    spacing = 0.01
    outline = sole_outline(heel, ball, tip, spacing)
    np.testing.assert_array_equal(outline[0], outline[-1])
    assert np.linalg.norm(np.diff(outline, axis=0), axis=1).max() <= spacing + 1e-12
    for p in (heel, ball, tip):
        assert inside(outline, p)
    length, chord = foot + toe, np.cos(np.pi / DISC_POINTS)  # the hull of points on each disc: its chords
    assert np.linalg.norm(outline - ball, axis=1).min() >= 0.2 * length * chord - 1e-9  # the ball's disc inside
    reach = max(length + 0.1 * length, foot + 0.2 * length)  # no further than the tip's or the ball's disc
    assert np.abs((outline - heel) @ direction).max() <= reach + 1e-9


def test_the_hull_of_a_square_and_its_centre_is_the_square_counter_clockwise():
    hull = convex_hull([[0.0, 0.0], [1.0, 0.0], [0.5, 0.5], [1.0, 1.0], [0.0, 1.0]])
    np.testing.assert_array_equal(hull, [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
