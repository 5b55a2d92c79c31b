# SPDX-License-Identifier: GPL-3.0-or-later
"""The body's height as a choice (``PlantSettings.pelvis_mode``, ``max_pelvis_drop``) and the heel that lifts
where a standing leg cannot keep its animated bend (:func:`solvers.planting.pelvis.heel_lift`).

Every mode is planted on the synthetic walker over analytic ground (:mod:`walker`, :mod:`terrain`) and measured
with the definitions of :mod:`footing`; the heel lift is checked against its own geometry.
"""

import dataclasses
import math

import numpy as np
import pytest
from footing import measure
from hypothesis import example, given
from hypothesis import strategies as st
from terrain import Plane
from test_planting import UP_A_PLANE, budget, run, takes
from walker import gaits, walk

from solvers import SolverError
from solvers.planting import Legs, PlantSettings, plant
from solvers.planting.pelvis import MAX_HEEL, PELVIS_MODES, carried_height, heel_lift, heel_turn
from solvers.planting.surface import transform

MODES = list(PELVIS_MODES)


def _finite(planted) -> bool:
    return all(np.isfinite(a).all() for a in (planted.foot, planted.toe, planted.body))


@pytest.mark.parametrize("kind", ["plane", "step", "sine"])
@pytest.mark.parametrize("mode", MODES)
@budget()
@given(data=st.data())
def test_every_mode_plants_finite_feet_within_reach(mode, kind, data):
    result = run(data.draw(takes(kind)), pelvis_mode=mode)
    assert _finite(result.planted)
    f = result.footing
    stretch = f.stretch[f.contact]
    assert stretch.max(initial=-1.0) <= 1e-9, f"a standing ankle {1e3 * stretch.max():.2f} mm out of reach"


@pytest.mark.parametrize("mode", MODES)
@budget()
@given(take=takes("plane"), most=st.floats(0.0, 0.08))
def test_the_pelvis_never_drops_beyond_the_maximum(mode, take, most):
    """Above the ground under it, the pelvis is never more than ``max_pelvis_drop`` lower than it was
    animated above the floor (a foot may then fall short: that is the animator's choice)."""
    g, w = take.gait, walk(take.gait)
    settings = PlantSettings(fps=g.fps, floor=g.floor, pelvis_mode=mode, max_pelvis_drop=most)
    planted = plant(w.legs, take.terrain, settings)
    assert _finite(planted)
    pelvis = np.einsum("fij,fj->fi", planted.body[:, :3, :3], w.legs.pelvis) + planted.body[:, :3, 3]
    below = (w.legs.pelvis[:, 2] - g.floor) - (pelvis[:, 2] - take.terrain.height(pelvis[:, :2]))
    assert below.max() <= most + 1e-9, f"the pelvis rides {1e3 * (below.max() - most):.2f} mm beyond the maximum"


@pytest.mark.parametrize("mode", ["average", "front_uphill"])
@budget()
@example(take=UP_A_PLANE)
@given(take=takes("plane"))
def test_a_heel_lifts_before_its_toe_leaves(mode, take):
    """Where a standing foot pitches heel up beyond its animated pitch against the ground (its leg short of
    reach), it turns about its ball: the ball keeps its height above the ground, and the heel lifts no more
    than MAX_HEEL."""
    g = take.gait
    base = run(take, pelvis_mode="lowest").footing  # the lowest leg keeps its bend: no heel need lift
    f = run(take, pelvis_mode=mode).footing
    lifted = f.contact & (f.pitch_error - base.pitch_error > 0.2)
    assert (f.pitch_error - base.pitch_error)[f.contact].max(initial=0.0) <= math.degrees(MAX_HEEL) + 0.05
    assert np.abs(f.height_error - base.height_error)[lifted].max(initial=0.0) <= 0.002
    if take == UP_A_PLANE:  # going up a 10 degree plane the trailing legs run out of reach
        assert lifted.sum() >= 2 * g.fps * 0.05, "no heel lifts where the legs run out of reach"


@pytest.mark.parametrize("mode", ["average", "front_uphill"])
def test_a_mesh_sole_lifts_no_heel(mode):
    """Up the 10 degree plane, where bone soles lift their heels (the test above), feet whose soles are a mesh's
    (``Legs.solid``) keep their pitch against the ground as the lowest leg's mode has it, and still stand on it and
    within reach: lifting would stand them on another part of the mesh than the take does."""
    take = UP_A_PLANE
    g, w = take.gait, walk(take.gait)
    solid = dataclasses.replace(w.legs, solid=np.ones(w.legs.ball.shape[1], bool))
    settings = PlantSettings(fps=g.fps, floor=g.floor, pelvis_mode=mode)
    base = measure(w.legs, plant(w.legs, take.terrain, dataclasses.replace(settings, pelvis_mode="lowest")), *_on(take))
    lifted = measure(w.legs, plant(w.legs, take.terrain, settings), *_on(take))
    f = measure(solid, plant(solid, take.terrain, settings), *_on(take))
    assert (lifted.pitch_error - base.pitch_error)[lifted.contact].max() > 1.0, "no bone sole lifts its heel here"
    assert np.abs(f.pitch_error - base.pitch_error)[f.contact].max() <= 0.2
    assert np.abs(f.height_error[f.contact]).max() <= 0.01
    assert f.stretch[f.contact].max(initial=-1.0) <= 1e-9


def _on(take):
    return take.terrain, take.gait.fps, take.gait.floor


def test_the_average_rides_higher_than_the_lowest_up_a_slope():
    """Up a 10 degree plane the body rides higher above the ground under it with the feet averaged (their heels
    lifting) than with the lowest leg keeping its bend, and the feet stand as they do."""
    heights = {}
    for mode in ("lowest", "average"):
        result = run(UP_A_PLANE, pelvis_mode=mode)
        w, body = result.walk, result.planted.body
        pelvis = np.einsum("fij,fj->fi", body[:, :3, :3], w.legs.pelvis) + body[:, :3, 3]
        heights[mode] = pelvis[:, 2] - UP_A_PLANE.terrain.height(pelvis[:, :2])
        f = result.footing
        assert np.abs(f.height_error[f.contact]).max() <= 0.01
    assert heights["average"].min() > heights["lowest"].min() + 0.005


def test_on_flat_ground_every_mode_leaves_the_motion_as_it_is():
    """On the floor it was animated on, without foot lock, no mode moves the body or a foot."""
    take = UP_A_PLANE
    g, w = take.gait, walk(take.gait)
    for mode in MODES:
        settings = PlantSettings(fps=g.fps, floor=g.floor, foot_lock=False, pelvis_mode=mode)
        planted = plant(w.legs, Plane(base=g.floor), settings)
        np.testing.assert_allclose(planted.body, np.tile(np.eye(4), (len(planted.body), 1, 1)), atol=1e-9)
        np.testing.assert_allclose(planted.foot, w.legs.foot, atol=1e-9)
        assert measure(w.legs, planted, Plane(base=g.floor), g.fps, g.floor).pitch_error.__abs__().max() <= 1e-6


@pytest.mark.parametrize(
    "values", [{"pelvis_mode": "highest"}, {"max_pelvis_drop": -0.1}, {"max_pelvis_drop": math.nan}]
)
def test_bad_pelvis_settings_raise(values):
    with pytest.raises(SolverError):
        PlantSettings(fps=30.0, **values)


def test_the_modes_pick_the_lowest_the_front_uphill_or_the_average():
    ceiling = np.array([[0.0, 0.1], [0.0, 0.1], [0.2, 0.1], [0.3, 0.0]])
    carries = np.array([[True, True], [True, True], [True, True], [True, False]])
    ahead = np.array([[-0.3, 0.3], [0.3, -0.3], [0.3, -0.3], [np.nan, np.nan]])  # last: not travelling
    np.testing.assert_allclose(carried_height(ceiling, carries, "lowest"), [0.0, 0.0, 0.1, 0.3])
    np.testing.assert_allclose(carried_height(ceiling, carries, "average"), [0.05, 0.05, 0.15, 0.3])
    # Uphill (the front foot the higher) the front's; downhill the lowest; standing still, the lowest.
    np.testing.assert_allclose(carried_height(ceiling, carries, "front_uphill", ahead), [0.1, 0.0, 0.2, 0.3])


@given(
    drop=st.floats(0.55, 1.0),
    back=st.floats(-0.5, 0.5),
    pitch=st.floats(-0.6, 0.6),
    extension=st.floats(0.6, 1.0),
    heading=st.floats(0.0, 2.0 * math.pi),
)
def test_a_heel_lift_is_the_least_turn_about_the_ball_that_reaches(drop, back, pitch, extension, heading):
    """The angle is within 0 to MAX_HEEL; the ball stays where it is; turned by it the ankle is within reach
    where any angle in that range would bring it there, and no smaller angle does."""
    forward = np.array([math.cos(heading), math.sin(heading), 0.0])
    ball = np.array([0.2, -0.1, 0.05])
    ankle = ball - 0.14 * (math.cos(pitch) * forward) + np.array([0.0, 0.0, 0.07 + 0.14 * math.sin(pitch)])
    heel, tip = ball - 0.2 * forward, ball + 0.06 * forward
    hip = ball + back * forward + np.array([0.0, 0.0, drop])
    angle = float(heel_lift(hip[None], ball[None], ankle[None], heel[None], tip[None], np.array([extension]))[0])
    assert 0.0 <= angle <= MAX_HEEL

    def turned(a):
        points = np.stack([ankle, ball])[None]
        return transform(heel_turn(np.array([a]), heel[None], tip[None]), ball[None], np.zeros(1), points)[0]

    assert np.allclose(turned(angle)[1], ball)
    distance = [np.linalg.norm(hip - turned(a)[0]) for a in np.linspace(0.0, MAX_HEEL, 41)]
    if min(distance) <= extension - 1e-9:
        assert np.linalg.norm(hip - turned(angle)[0]) <= extension + 1e-9
        if angle > 1e-6:
            assert np.linalg.norm(hip - turned(angle - 1e-4)[0]) > extension - 1e-9
    else:  # out of reach whatever it does: the nearest it gets
        assert np.linalg.norm(hip - turned(angle)[0]) <= min(distance) + 1e-9
    assert turned(angle)[0][2] >= ankle[2] - 1e-12  # heel up: the ankle, behind the ball, rises


def _keyed_into_the_floor(gait, depth: float, sway: float, period: float) -> Legs:
    """The walk of ``gait`` with the whole body keyed lower, by ``depth`` give or take ``sway`` over ``period``
    seconds (a mesh sole keyed into the floor, deeper and shallower as the take goes), its soles a mesh's."""
    legs = walk(gait).legs
    t = np.arange(len(legs.pelvis)) / gait.fps
    down = np.zeros((len(t), 3))
    down[:, 2] = depth + sway * np.sin(2.0 * math.pi * t / period)
    foot = legs.foot.copy()
    foot[..., :3, 3] -= down[:, None]
    return dataclasses.replace(
        legs,
        foot=foot,
        ball=legs.ball - down[:, None],
        tip=legs.tip - down[:, None],
        hip=legs.hip - down[:, None],
        pelvis=legs.pelvis - down,
        solid=np.ones(legs.ball.shape[1], bool),
    )


@pytest.mark.parametrize("mode", ["average", "front_uphill"])
@budget()
@given(gait=gaits(), depth=st.floats(0.005, 0.03), sway=st.floats(0.0, 1.0), period=st.floats(0.3, 1.0))
def test_a_walk_keyed_into_the_floor_rises_with_its_soles_in_every_mode(mode, gait, depth, sway, period):
    """On flat ground at the authored floor, a walk whose mesh soles are keyed into the floor is raised onto it,
    and the body with it as the Lowest mode raises it: a mode's choice is about the ground, and there is none to
    follow (held down, a nearly straight standing leg bends by tens of degrees: CesiumMan's knees popped 19°)."""
    gait = dataclasses.replace(gait, reach=0.999, toe_rest=(0.0, 0.0))  # a glTF walk's legs stand nearly straight
    legs = _keyed_into_the_floor(gait, depth, sway * depth, period)
    ground = Plane(base=gait.floor)
    planted = {
        m: plant(legs, ground, PlantSettings(fps=gait.fps, floor=gait.floor, pelvis_mode=m, foot_lock=False))
        for m in ("lowest", mode)
    }
    rise = {m: p.body[:, 2, 3] for m, p in planted.items()}
    raised = planted[mode].foot[..., 2, 3] - legs.foot[..., 2, 3]
    assert raised.max() >= 0.5 * depth, "the soles keyed into the floor are not raised onto it"
    apart = np.abs(rise[mode] - rise["lowest"])
    assert apart.max() <= 1e-3, f"the body is {1e3 * apart.max():.1f} mm off the Lowest's, frame {np.argmax(apart)}"
    turn = {m: measure(legs, p, ground, gait.fps, gait.floor).knee_turn.max() for m, p in planted.items()}
    assert turn[mode] <= turn["lowest"] + 0.1, turn
