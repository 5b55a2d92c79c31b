# SPDX-License-Identifier: GPL-3.0-or-later
"""Properties of foot planting (``solvers.planting``) on a synthetic walker over analytic ground.

A walk or a jog with the flaws of motion capture (:mod:`walker`) is planted on a plane of any
slope, a step or sine ground (:mod:`terrain`), and measured with definitions of our own
(:mod:`footing`): contacts from the source ball alone, planted points carried by the planted foot
matrices, the ground by its formula. The limits are issue 16's.

Each property draws few examples (the walker costs a few tens of milliseconds a take), derandomized
so that a run is repeatable; ``LIMB_IK_HYPOTHESIS=thorough`` draws ten times as many. Failures the
solver still has are kept as strict xfails with the smallest example found: when the solver is
fixed they turn into errors that say so.
"""

import dataclasses
import math
from typing import NamedTuple

import numpy as np
import pytest
from footing import Footing, carried, contacts, measure, runs, slides
from hypothesis import Phase, assume, example, given, settings
from hypothesis import strategies as st
from terrain import Plane, Sine, Step, Terrain, holes, terrains
from walker import Gait, Walk, gaits, walk

from solvers import SolverError
from solvers.planting import Legs, Planted, PlantSettings, heel_points, plant
from solvers.planting.contacts import DOWN, UP
from solvers.planting.placement import CLEARANCE, footing_offsets
from solvers.planting.surface import eased_turns, rest, tilt
from solvers.planting.timeline import intervals

#: Examples a property draws: an eighth of the profile's (25 by default, 250 when thorough).
EXAMPLES = max(settings.default.max_examples // 8, 10)
#: Contacts farther than this from a step's riser (heel, ankle, ball and tip alike) stand on one level.
RISER_CLEARANCE = 0.1


def budget(examples: int = EXAMPLES, shrink: bool = True):
    """Few examples, the same ones every run; no shrinking for a known failure (it only costs time)."""
    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate)
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None, phases=phases)


class Take(NamedTuple):
    gait: Gait
    terrain: Terrain


@st.composite
def takes(draw, kind: str, gait=("walk", "jog"), max_slope: float = 20.0) -> Take:
    """A gait and a ground of ``kind`` laid across its path."""
    g = draw(gaits(gait))
    return Take(g, draw(terrains(g.floor, g.start, g.heading, g.speed * g.seconds, kind, max_slope)))


class Result(NamedTuple):
    walk: Walk
    planted: Planted
    footing: Footing


def run(take: Take, **options) -> Result:
    g = take.gait
    w = walk(g)
    planted = plant(w.legs, take.terrain, PlantSettings(fps=g.fps, floor=g.floor, **options))
    return Result(w, planted, measure(w.legs, planted, take.terrain, g.fps, g.floor))


def clear_of_riser(result: Result, step: Step) -> np.ndarray:
    """(F, n) frames whose planted foot, heel (a foot's length behind the ball) to tip, stands on one
    level of the step, ``RISER_CLEARANCE`` from the riser."""
    f, legs = result.footing, result.walk.legs
    tip = f.ball + (legs.tip - legs.ball)  # near enough for which side of the riser it is on
    heel = f.ball + 1.5 * (f.ankle - f.ball) * np.array([1.0, 1.0, 0.0])
    sides = np.stack([step.beyond(p.reshape(-1, 3)[:, :2]).reshape(p.shape[:2]) for p in (heel, f.ball, tip)], axis=2)
    return (sides > RISER_CLEARANCE).all(axis=2) | (sides < -RISER_CLEARANCE).all(axis=2)


def percentile(values, q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else 0.0


# ---------------------------------------------------------------------------------------------
# Examples that failed, from shrinking (made a little larger where the shrunk one sat at the limit)

#: The walk hypothesis shrinks failures to: no capture noise, 0.81 m/s, 24 fps, along +Y.
CLEAN_WALK = Gait(
    fps=24.0,
    seconds=2.0,
    speed=0.8125,
    period=1.2307692307692308,
    duty=0.625,
    phase=0.0,
    heading=0.0,
    start=(0.0, 0.0),
    floor=0.0,
    thigh=0.4375,
    shin=0.4375,
    hip_width=0.09375,
    ankle_height=0.0625,
    foot_length=0.125,
    heel_back=0.0625,
    toe_length=0.0625,
    toe_rest=(0.0, 0.0),
    strike=0.0,
    rock=0.125,
    heel_lift=0.5,
    toe_off=0.3490658503988659,
    clearance=0.046875,
    reach=0.96875,
    ease=0.03125,
    slide=0.0,
    jitter=0.0,
    dips=0,
    dip_depth=0.015625,
    seed=0,
)
#: Straight up a 10 degree plane at 60 fps: p95 20.1 mm, median 3.6 mm, worst 23.9 mm until ease_jumps (now 0).
UP_A_PLANE = Take(dataclasses.replace(CLEAN_WALK, fps=60.0), Plane(slope=math.radians(10.0), direction=0.5 * math.pi))
#: Across 3.5 cm sine waves 1 m long at 60 fps: p95 21.7 mm, median 4.3 mm, worst 27.3 mm until ease_jumps (0.2).
OVER_SINES = Take(dataclasses.replace(CLEAN_WALK, fps=60.0), Sine(waves=((0.035, 1.0, 0.5 * math.pi, 0.0),)))
#: Towards a 25 cm step up, the last stance before it 19 cm short of the riser: was p95 64 mm, worst 102 mm
#: (the toe leaving over the riser lifted the standing foot).
TOWARDS_A_STEP = Take(
    dataclasses.replace(CLEAN_WALK, seconds=1.75, speed=1.0, period=1.0, phase=0.25, clearance=0.0625),
    Step(rise=0.25, direction=0.5 * math.pi, origin=(0.0, 0.875)),
)
#: Up a 20 cm step at 60 fps: the knee turns 22.4 degrees more than animated in one frame.
UP_A_STEP = Take(dataclasses.replace(CLEAN_WALK, fps=60.0), Step(rise=0.2, direction=0.5 * math.pi, origin=(0.0, 1.0)))
#: Straight down a 20 degree plane at 24 fps: the knee turns 10.3 degrees more than animated in one frame.
DOWN_A_PLANE = Take(CLEAN_WALK, Plane(slope=math.radians(20.0), direction=-0.5 * math.pi))
#: Three one-frame dips in a leg's two seconds, a toe joint 1.6 cm up, stances sliding 1.6 cm: 14.8 mm slide.
DIPPED = Take(dataclasses.replace(CLEAN_WALK, fps=24.0, toe_rest=(0.015625, 0.0), slide=0.015625, dips=3), Plane())

#: A walk onto a 25 cm step down, one stance with the heel on the upper level and the ball 2.3 cm past
#: the edge: as the heel lifts the foot hangs over the edge, and went with the hip: 13.8 mm slide.
OVER_AN_EDGE = Take(
    dataclasses.replace(CLEAN_WALK, seconds=1.5, clearance=0.0625),
    Step(rise=-0.25, direction=0.5 * math.pi, origin=(0.0, 0.9140625)),
)
#: A 24 fps jog on ground raised 9 cm, seven one-frame dips in each leg's take: 6.2 mm slide.
JOG_WITH_DIPS = Take(
    Gait(
        fps=24.0,
        seconds=1.6850365846672204,
        speed=2.118216017792609,
        period=0.8261435667619808,
        duty=0.36832688072646774,
        phase=0.02,
        heading=0.095,
        start=(-1.0, 0.6155578159934829),
        floor=0.0,
        thigh=0.40722585649321186,
        shin=0.38117440492365207,
        hip_width=0.08238143887770404,
        ankle_height=0.06788826994304126,
        foot_length=0.12716952646434115,
        heel_back=0.06738466007764132,
        toe_length=0.05465560537533154,
        toe_rest=(0.012530286216920067, 0.025594725434196386),
        strike=0.10239518578879679,
        rock=0.17063113505986247,
        heel_lift=0.33071730087429774,
        toe_off=0.3490658503988659,
        clearance=0.08006341783194086,
        reach=0.9697329599781637,
        ease=0.05228366582416431,
        slide=0.01168818954349124,
        jitter=0.001444448485580539,
        dips=7,
        dip_depth=0.02,
        seed=0,
    ),
    Plane(direction=0.19416559558270893, base=0.09004821149517928, origin=(-1.0, 0.6155578159934829)),
)

#: A take starting mid-stance 18 cm before an 11.6 cm step up, the next landing on it: the toe-off frames,
#: the toe still low and the ball leaving at 2 m/s, were held as sliding, and the step under the ball eased
#: back into the stance: 14.9 mm.
TOE_OFF_BEFORE_A_STEP = Take(
    Gait(
        fps=24.0,
        seconds=1.7765602952150388,
        speed=0.861820038776786,
        period=1.057102096326783,
        duty=0.6208644869013915,
        phase=0.8060662126494318,
        heading=0.15,
        start=(0.9011600119209842, -0.15886701531249137),
        floor=0.0,
        thigh=0.4174183333368776,
        shin=0.44612745742872423,
        hip_width=0.09013308295636417,
        ankle_height=0.0759657411163213,
        foot_length=0.12589418317695658,
        heel_back=0.06999999999999999,
        toe_length=0.06507810880286406,
        toe_rest=(1e-05, 0.0017368682764405889),
        strike=0.12748788327982655,
        rock=0.15776074533177303,
        heel_lift=0.37888149613280664,
        toe_off=0.6171101930296442,
        clearance=0.04050549002145636,
        reach=0.9577896291230392,
        ease=0.04135899792824692,
        slide=1e-06,
        jitter=0.0017464764224876988,
        dips=0,
        dip_depth=0.02,
        seed=9555744,
    ),
    Step(rise=0.11641018604746384, direction=1.2146508437165409, origin=(0.8445195243972751, 0.21589995330935546)),
)

# ---------------------------------------------------------------------------------------------
# In contact, the ball keeps its authored height above the floor as its height above the ground


def assert_height_kept(result: Result, where: np.ndarray):
    """p95 <= 1 cm and median <= 5 mm of |height above the ground - authored height above the floor|
    over the contacts in ``where`` whose source ball is at or above the floor (a dip below it is the
    sinking property's)."""
    f = result.footing
    error = np.abs(f.height_error[f.contact & f.above_floor[..., 1] & where])
    assert percentile(error, 95) <= 0.01, f"p95 {1e3 * percentile(error, 95):.1f} mm over {len(error)} contacts"
    assert percentile(error, 50) <= 0.005, f"median {1e3 * percentile(error, 50):.1f} mm over {len(error)} contacts"


@budget()
@example(take=UP_A_PLANE)
@given(take=takes("plane"))
def test_ball_keeps_its_height_on_a_plane(take):
    result = run(take)
    assert_height_kept(result, True)


@budget()
@example(take=OVER_SINES)
@given(take=takes("sine"))
def test_ball_keeps_its_height_on_sine_ground(take):
    result = run(take)
    assert_height_kept(result, True)


@budget(shrink=False)
@example(take=TOWARDS_A_STEP)
@example(take=TOE_OFF_BEFORE_A_STEP)
@given(take=takes("step"))
def test_ball_keeps_its_height_on_a_step_away_from_the_riser(take):
    """On a step the limits hold for feet standing on one level; a foot across the riser's edge is
    pitched (by up to 20 degrees) to rest on the edge instead of hanging in the air or sinking."""
    result = run(take)
    assert_height_kept(result, clear_of_riser(result, take.terrain))


# ---------------------------------------------------------------------------------------------
# Nothing sinks


@pytest.mark.parametrize("kind", ["plane", "step", "sine"])
@budget()
@given(data=st.data())
def test_no_ankle_or_ball_sinks_into_the_ground(kind, data):
    """No ankle or ball goes more than 5 mm into the ground, at any frame, but for one the source
    has below the floor (a capture dip), which may go as deep as it went below the floor."""
    take = data.draw(takes(kind))
    result = run(take)
    f, legs = result.footing, result.walk.legs
    below = np.maximum(take.gait.floor - np.stack([legs.foot[..., 2, 3], legs.ball[..., 2]], axis=2), 0.0)
    excess = f.sinking - below
    assert excess.max() <= 0.005, f"{1e3 * excess.max():.1f} mm into the ground at {np.argwhere(excess > 0.005)[:4]}"


# ---------------------------------------------------------------------------------------------
# In contact, the foot's pitch against the ground is its pitch against the floor


#: A walk over 3 cm bumps a metre apart, at 24 fps, that Hypothesis found: its foot's pitch against the ground
#: misses the limit (p95 6.2 degrees: the heel's lift, 4 degrees at most, on top of the bumps' tilt).
SMALL_BUMPS = Take(
    dataclasses.replace(CLEAN_WALK, speed=0.9375, period=1.0, clearance=0.0625),
    Sine(waves=((0.0, 1.0, 0.0, 0.0), (0.03125, 1.0, 1.0, 1.0))),
)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="pitch p95 6.2 degrees over small bumps (SMALL_BUMPS)")
def test_foot_keeps_its_pitch_over_small_bumps():
    result = run(SMALL_BUMPS)
    error = np.abs(result.footing.pitch_error[result.footing.contact])
    assert percentile(error, 95) <= 5.0, f"p95 {percentile(error, 95):.1f} degrees over {len(error)} contacts"


@pytest.mark.parametrize("kind", ["plane", "sine", "step"])
@budget()
@given(data=st.data())
def test_foot_keeps_its_pitch_against_the_ground(kind, data):
    """The angle from the ground's normal under the ball to the foot (ankle to ball) matches the
    source's angle from +Z within 5 degrees (p95 of contacts; on a step, those clear of the riser)."""
    take = data.draw(takes(kind))
    result = run(take)
    f = result.footing
    where = f.contact & (clear_of_riser(result, take.terrain) if kind == "step" else True)
    error = np.abs(f.pitch_error[where])
    assert percentile(error, 95) <= 5.0, f"p95 {percentile(error, 95):.1f} degrees over {len(error)} contacts"


@budget()
@given(
    slope=st.floats(0.0, math.radians(35.0)),
    direction=st.floats(0.0, 2 * math.pi),
    ball=st.floats(0.02, 0.15),
    ahead=st.floats(0.005, 0.1),
    below=st.floats(0.0, 1.0),
)
@example(slope=math.radians(10.0), direction=0.3, ball=0.086, ahead=0.029, below=1.0)  # the 0 A.D. horse's hoof
def test_a_foot_resting_on_a_plane_keeps_the_planes_tilt(slope, direction, ball, ahead, below):
    """On a plane a foot is only tipped to it, however its sole is made: a hoof whose ball is raised over a tip a
    few centimetres ahead and down at the floor is not pitched further for the millimetre its tip would sink as
    the ball keeps its height upright."""
    plane = Plane(slope=slope, direction=direction, base=0.3)
    heading = np.array([math.cos(direction + 1.0), math.sin(direction + 1.0), 0.0])
    ball_point = np.array([0.2, -0.1, ball])
    sole = np.stack([ball_point - 0.06 * heading, ball_point, ball_point + ahead * heading - [0, 0, below * ball]])
    turn = tilt(plane.normal(ball_point[None, :2]), math.radians(40.0))
    lift = plane.height(ball_point[None, :2])
    angle, _ = rest(turn, sole[None], np.zeros((1, 3)), lift, plane)
    assert abs(angle[0]) < 1e-9, f"pitched {np.degrees(angle[0]):.2f} degrees"


def _turn_about(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    return np.concatenate([[math.cos(0.5 * angle)], axis * math.sin(0.5 * angle)])


def _turned_by(turns) -> np.ndarray:
    """(m - 1,) the angle (radians) each frame's turn is from the one before."""
    return 2.0 * np.arccos(np.clip(np.abs(np.einsum("mi,mi->m", turns[1:], turns[:-1])), 0.0, 1.0))


@budget()
@given(
    tilt_before=st.floats(0.0, math.radians(30.0)),
    tilt_after=st.floats(0.0, math.radians(30.0)),
    heading=st.floats(0.0, 2 * math.pi),
    frames=st.integers(4, 40),
    at=st.floats(0.1, 0.9),
)
def test_a_held_foot_crossing_an_edge_between_faces_tips_over_frames(tilt_before, tilt_after, heading, frames, at):
    """A held foot whose ground turns at once (its ball crossing from one face to another) turns over the frames
    around it, none of them as far as the jump, nor the first and last frames further from the ground's own turn than
    that; a foot on ground that turns slowly is left as it is; every turn stays a unit quaternion."""
    edge = min(max(int(at * frames), 1), frames - 1)
    axis = (math.cos(heading), math.sin(heading), 0.0)
    turns = np.array([_turn_about(axis, tilt_before if f < edge else tilt_after) for f in range(frames)])
    eased = eased_turns(turns, math.radians(2.0), 3.0)
    assert np.allclose(np.linalg.norm(eased, axis=1), 1.0) and np.isfinite(eased).all()
    jump = abs(tilt_after - tilt_before)
    if jump <= math.radians(2.0):
        assert np.allclose(eased, turns)
        return
    assert _turned_by(eased).max() < jump - 1e-9, f"turns {math.degrees(_turned_by(eased).max()):.1f} degrees at once"
    assert (
        _turned_by(np.stack([eased[0], turns[0]])).max() < jump
        and _turned_by(np.stack([eased[-1], turns[-1]])).max() < jump
    )
    slow = np.array([_turn_about(axis, tilt_before + math.radians(1.0) * f / frames) for f in range(frames)])
    assert np.allclose(eased_turns(slow, math.radians(2.0), 3.0), slow)


# ---------------------------------------------------------------------------------------------
# Knees, reach, foot lock


def assert_knee_smooth(result: Result):
    turn = result.footing.knee_turn
    worst = np.unravel_index(np.argmax(turn), turn.shape)
    assert turn.max() <= 10.0, f"knee turns {turn.max():.1f} degrees beyond the source, frame {worst[0]} leg {worst[1]}"


@budget(shrink=False)
@example(take=DOWN_A_PLANE)
@given(take=takes("plane"))
def test_knee_turns_no_faster_than_animated_on_a_plane(take):
    """The knee's bend (law of cosines from the planted hip and ankle) changes in one frame by at most 10 degrees
    more than the source's does. (A jog, a third of each stride on the ground, 2.3 m/s at 24 fps, across a 16 degree
    plane turned a knee 15.7 degrees in a frame, frame 43, before the body followed a standing foot's ground.)"""
    assert_knee_smooth(run(take))


@budget()
@given(take=takes("sine"))
def test_knee_turns_no_faster_than_animated_on_sine_ground(take):
    assert_knee_smooth(run(take))


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="a foot whose toe stands at the riser and leaves straight into it slides onto the upper level while "
    "still in contact: going up 20 cm at 60 fps the knee turns 13.0 degrees in one frame (21.4 with the Lowest "
    "pelvis mode; released at take-off instead, it jumps the step's height in one frame: 45 degrees)",
)
@budget(shrink=False)
@example(take=UP_A_STEP)
@given(take=takes("step"))
def test_knee_turns_no_faster_than_animated_on_a_step(take):
    assert_knee_smooth(run(take))


@pytest.mark.parametrize("kind", ["plane", "step", "sine"])
@budget()
@given(data=st.data())
def test_feet_in_contact_stay_within_reach(kind, data):
    f = run(data.draw(takes(kind))).footing
    stretch = f.stretch[f.contact]
    assert stretch.max(initial=-1.0) <= 1e-9, f"a standing ankle {1e3 * stretch.max():.2f} mm out of reach"


@pytest.mark.parametrize("kind", ["plane", "step", "sine"])
@budget()
@given(data=st.data())
def test_locked_feet_do_not_slide(kind, data):
    """With foot lock, the planted ball moves at most 5 mm across the ground over any contact."""
    slid = slides(run(data.draw(takes(kind)), foot_lock=True).footing)
    assert slid.max(initial=0.0) <= 0.005, f"a contact slides {1e3 * slid.max():.1f} mm"


def test_a_foot_hanging_over_a_steps_edge_does_not_slide():
    """Where the motion stands but the foot hangs over an edge (not held), it moves straight up or down."""
    slid = slides(run(OVER_AN_EDGE, foot_lock=True).footing)
    assert slid.max(initial=0.0) <= 0.005, f"a contact slides {1e3 * slid.max():.1f} mm"


def test_locked_feet_do_not_slide_in_a_jog_with_many_dips():
    """Dips one frame long set no contact level, however many: they had pulled the ball's 1.1 cm below
    where it rests, a contact ended a frame early, and the lock's release slid the ball."""
    slid = slides(run(JOG_WITH_DIPS, foot_lock=True).footing)
    assert slid.max(initial=0.0) <= 0.005, f"a contact slides {1e3 * slid.max():.1f} mm"


@budget(shrink=False)
@example(take=DIPPED, dips=3)
@given(take=takes("plane", max_slope=0.0), dips=st.integers(3, 8))
def test_locked_feet_do_not_slide_with_scattered_dips(take, dips):
    """As above with more one-frame dips below the floor: three to eight per leg in the take (the
    walker otherwise draws up to two, the 'frame or two' ``contact_level`` says it ignores)."""
    take = Take(dataclasses.replace(take.gait, dips=dips), take.terrain)
    slid = slides(run(take, foot_lock=True).footing)
    assert slid.max(initial=0.0) <= 0.005, f"a contact slides {1e3 * slid.max():.1f} mm"


# ---------------------------------------------------------------------------------------------
# Flat ground at the authored floor


@budget()
@given(gait=gaits())
def test_flat_ground_at_the_floor_changes_nothing(gait):
    w = walk(gait)
    planted = plant(w.legs, Plane(base=gait.floor), PlantSettings(fps=gait.fps, floor=gait.floor, foot_lock=False))
    assert np.abs(planted.foot - w.legs.foot).max() <= 1e-9
    assert np.abs(planted.toe - w.legs.toe).max() <= 1e-9
    assert np.abs(planted.body - np.eye(4)).max() <= 1e-9
    assert not planted.no_ground.any()


def in_place(legs: Legs) -> Legs:
    """``legs`` walked in place: every point moved back by the pelvis' travel across the floor, so the standing feet
    slide back under a body that stays, as a game's cycle does."""
    back = legs.pelvis[0] - legs.pelvis
    back[:, 2] = 0.0
    foot = legs.foot.copy()
    foot[..., :3, 3] += back[:, None]
    moved = {name: getattr(legs, name) + back[:, None] for name in ("ball", "tip", "hip")}
    return dataclasses.replace(legs, foot=foot, pelvis=legs.pelvis + back, **moved)


@budget()
@given(gait=gaits(), pinned=st.integers(0, 1))
def test_a_cycle_walked_in_place_is_locked_only_where_forced_down(gait, pinned):
    """Its feet slide back by design: the foot lock leaves them to slide, planted as without it, but for a foot the
    animator forces down over a stance, whose ball it holds where it stood."""
    w = walk(gait)
    legs = in_place(w.legs)
    settings_ = PlantSettings(fps=gait.fps, floor=gait.floor)
    ground = Plane(base=gait.floor)
    locked = plant(legs, ground, settings_)
    free = plant(legs, ground, dataclasses.replace(settings_, foot_lock=False))
    assert np.abs(locked.foot - free.foot).max() <= 1e-9
    stance = np.flatnonzero(w.stance[:, pinned])
    first = stance[: int(np.argmax(np.diff(stance) > 1)) + 1] if (np.diff(stance) > 1).any() else stance
    forced = np.zeros(legs.ball.shape[:2], int)
    forced[first, pinned] = DOWN
    planted = plant(legs, ground, settings_, forced)
    ball = carried(legs.foot, planted.foot, legs.ball)[first, pinned, :2]
    assert np.abs(ball - ball[0]).max() <= 1e-6, (
        f"the forced foot's ball moves {1e3 * np.abs(ball - ball[0]).max():.1f} mm"
    )


@budget()
@given(gait=gaits(), slope=st.floats(3.0, 12.0), direction=st.floats(0.0, 2.0 * math.pi))
def test_a_cycle_walked_in_place_on_a_slope_keeps_its_feet_down_on_it(gait, slope, direction):
    """A cycle walked in place on a slope, rising any way: where the take has a foot down (its ball within 3 cm of
    its lowest, as the shared measure finds an in-place cycle's contacts, by height alone), landing and lifting as
    well as standing, the planted ball is as high above the slope as the take has it above its floor (p95 within a
    millimetre), and no knee turns more than 10° in a frame beyond the take's. A landing foot that rode on its hip
    instead stood up to 4.6 mm off at the 95th percentile (the Quaternius stag's first frames on the benchmark's
    slope: 27.8 mm)."""
    legs = in_place(walk(gait).legs)
    ground = Plane(slope=math.radians(slope), direction=direction, base=gait.floor, origin=tuple(legs.pelvis[0, :2]))
    planted = plant(legs, ground, PlantSettings(fps=gait.fps, floor=gait.floor))
    footing = measure(legs, planted, ground, gait.fps, gait.floor)
    ball = legs.ball[..., 2]
    down = ball <= ball.min(axis=0) + 0.03
    off = np.percentile(np.abs(footing.height_error[down]), 95)
    assert off <= 0.001, f"a foot down stands {1e3 * off:.1f} mm off its height (p95)"
    assert np.abs(footing.knee_turn).max() <= 10.0


# ---------------------------------------------------------------------------------------------
# Missing ground, NaN, bad input


@st.composite
def takes_with_holes(draw, miss: float) -> Take:
    take = draw(takes(draw(st.sampled_from(["plane", "step", "sine"]))))
    g = take.gait
    hole = draw(holes(g.start, g.heading, g.speed * g.seconds))
    return Take(g, dataclasses.replace(take.terrain, hole=hole, miss=miss))


def finite(planted: Planted) -> bool:
    return all(np.isfinite(a).all() for a in (planted.foot, planted.toe, planted.body))


@budget()
@given(take=takes_with_holes(miss=1e3))
def test_missing_ground_is_reported_where_the_foot_is(take):
    """``no_ground`` holds wherever the planted ball is over the hole, and nowhere the planted ball is
    more than 1 cm outside it (the solver casts from the ball before the foot is bent in the air).
    Whatever ``cast_down`` puts where it hits nothing is never read: the result is the same for
    another filler (to the last bits, which BLAS may round differently from call to call)."""
    result = run(take)
    planted, ball = result.planted, result.footing.ball
    assert finite(planted)
    x, y, radius = take.terrain.hole
    outside = np.hypot(ball[..., 0] - x, ball[..., 1] - y) - radius
    assert planted.no_ground[outside <= 0.0].all()
    assert not planted.no_ground[outside > 0.01].any()
    elsewhere = dataclasses.replace(take.terrain, miss=-7.0)
    other = plant(result.walk.legs, elsewhere, PlantSettings(fps=take.gait.fps, floor=take.gait.floor))
    for a, b in zip((planted.foot, planted.toe, planted.body), (other.foot, other.toe, other.body)):
        np.testing.assert_allclose(a, b, rtol=0.0, atol=1e-12)


@budget(examples=5, shrink=False)
@example(take=Take(CLEAN_WALK, Plane(hole=(0.0, 0.8, 0.3), miss=math.nan)))
@given(take=takes_with_holes(miss=math.nan))
def test_no_nan_where_the_ground_reads_nan_off_its_edge(take):
    """``cast_down``'s heights and normals mean nothing where it hits nothing: NaN there is fair."""
    assert finite(run(take).planted)


@pytest.mark.parametrize("kind", ["plane", "step", "sine"])
@budget(examples=max(EXAMPLES // 2, 5))
@given(data=st.data())
def test_no_nan_ever(kind, data):
    planted = run(data.draw(takes(kind))).planted
    assert finite(planted)
    assert not planted.no_ground.any()


def small_legs(frames: int = 6) -> Legs:
    """A valid pair of standing legs for the bad-input tests."""
    foot = np.tile(np.eye(4), (frames, 2, 1, 1))
    foot[:, :, :3, 3] = [[0.1, 0.0, 0.08], [-0.1, 0.0, 0.08]]
    ball = foot[:, :, :3, 3] + [0.0, 0.14, -0.08]
    return Legs(
        foot=foot,
        ball=ball,
        tip=ball + [0.0, 0.05, 0.0],
        toe=np.tile(np.eye(3), (frames, 2, 1, 1)),
        hip=foot[:, :, :3, 3] + [0.0, 0.0, 0.8],
        pelvis=np.tile([0.0, 0.0, 0.9], (frames, 1)),
        thigh=np.full((frames, 2), 0.43),
        shin=np.full((frames, 2), 0.43),
    )


def test_small_legs_plant():
    planted = plant(small_legs(), Plane(), PlantSettings(fps=30.0))
    assert finite(planted)


BAD_LEGS = {
    "foot shape": dict(foot=np.tile(np.eye(4), (6, 2, 1, 1))[:, :, :3]),
    "ball frames": dict(ball=np.zeros((5, 2, 3))),
    "tip legs": dict(tip=np.zeros((6, 3, 3))),
    "toe shape": dict(toe=np.zeros((6, 2, 3))),
    "hip shape": dict(hip=np.zeros((6, 2, 2))),
    "pelvis per leg": dict(pelvis=np.zeros((6, 2, 3))),
    "thigh per leg only": dict(thigh=np.full(2, 0.4)),
    "shin count": dict(shin=np.full((6, 3), 0.4)),
    "shin scalar": dict(shin=np.float64(0.4)),
    "girdle count": dict(girdle=np.array([0, 1, 1])),
    "girdle not 0 or 1": dict(girdle=np.array([0, 2])),
    "no frames": dict(
        foot=np.zeros((0, 2, 4, 4)),
        ball=np.zeros((0, 2, 3)),
        tip=np.zeros((0, 2, 3)),
        toe=np.zeros((0, 2, 3, 3)),
        hip=np.zeros((0, 2, 3)),
        pelvis=np.zeros((0, 3)),
    ),
    "zero thigh": dict(thigh=np.where(np.arange(6)[:, None] == 3, [0.43, 0.0], 0.43)),
    "negative shin": dict(shin=np.where(np.arange(6)[:, None] == 0, [-0.43, 0.43], 0.43)),
}


@pytest.mark.parametrize("change", BAD_LEGS.values(), ids=BAD_LEGS.keys())
def test_malformed_legs_raise(change):
    with pytest.raises(SolverError):
        plant(dataclasses.replace(small_legs(), **change), Plane(), PlantSettings(fps=30.0))


@pytest.mark.parametrize("field", ["foot", "ball", "tip", "toe", "hip", "pelvis", "thigh", "shin"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_legs_raise(field, bad):
    value = np.array(getattr(small_legs(), field), dtype=np.float64)
    value.reshape(-1)[value.size // 2] = bad
    with pytest.raises(SolverError):
        plant(dataclasses.replace(small_legs(), **{field: value}), Plane(), PlantSettings(fps=30.0))


BAD_SETTINGS = {
    "fps zero": dict(fps=0.0),
    "fps negative": dict(fps=-24.0),
    "fps NaN": dict(fps=math.nan),
    "floor infinite": dict(fps=30.0, floor=math.inf),
    "contact height negative": dict(fps=30.0, contact_height=-0.01),
    "contact speed negative": dict(fps=30.0, contact_speed=-0.3),
    "max tilt negative": dict(fps=30.0, max_tilt=-0.1),
    "smoothing negative": dict(fps=30.0, smoothing=-0.15),
    "release negative": dict(fps=30.0, release=-0.1),
    "smoothing NaN": dict(fps=30.0, smoothing=math.nan),
}


@pytest.mark.parametrize("values", BAD_SETTINGS.values(), ids=BAD_SETTINGS.keys())
def test_bad_settings_raise(values):
    with pytest.raises(SolverError):
        PlantSettings(**values)


# ---------------------------------------------------------------------------------------------
# The animator's word: forced contacts


def test_a_foot_forced_down_over_its_swing_stands_locked():
    """Forced down over a swing the motion has, the ball stays where it stood, on the ground (within 5 mm)."""
    take = UP_A_PLANE
    w = walk(take.gait)
    first, last = next((a, b) for a, b in intervals(~w.stance[:, 0]) if a > 0 and b < w.frames - 1)
    forced = np.zeros(w.stance.shape, np.int8)
    forced[first : last + 1, 0] = DOWN
    planted = plant(w.legs, take.terrain, PlantSettings(fps=take.gait.fps, floor=take.gait.floor), forced)
    ball = measure(w.legs, planted, take.terrain, take.gait.fps, take.gait.floor).ball[first : last + 1, 0]
    assert planted.contacts.stance[first : last + 1, 0].any(axis=1).all()
    assert np.linalg.norm(ball[:, :2] - ball[0, :2], axis=1).max() <= 0.005
    on_the_ground = ball[:, 2] - take.terrain.height(ball[:, :2])  # the walker's balls rest on its floor
    assert np.abs(on_the_ground).max() <= 0.005
    swung = np.linalg.norm(w.legs.ball[last, 0, :2] - w.legs.ball[first, 0, :2])
    assert swung > 0.2, "the swing forced down moves far in the motion"


def test_a_foot_forced_up_is_free():
    """Forced up over the whole take, a sliding foot on flat ground at the floor goes where animated across the
    ground: no lock (in the air, its leg's bend may lift it a little)."""
    gait = dataclasses.replace(CLEAN_WALK, slide=0.015625)
    w = walk(gait)
    settings = PlantSettings(fps=gait.fps, floor=gait.floor)
    locked = plant(w.legs, Plane(base=gait.floor), settings)
    assert np.abs(locked.foot[:, 0, :2, 3] - w.legs.foot[:, 0, :2, 3]).max() > 0.005  # the lock moves it, unforced
    forced = np.zeros(w.stance.shape, np.int8)
    forced[:, 0] = UP
    planted = plant(w.legs, Plane(base=gait.floor), settings, forced)
    assert not planted.contacts.down[:, 0].any() and not planted.contacts.stance[:, 0].any()
    assert np.abs(planted.foot[:, 0, :2, 3] - w.legs.foot[:, 0, :2, 3]).max() <= 1e-9


def test_nothing_forced_is_planting_as_before():
    w = walk(UP_A_PLANE.gait)
    settings = PlantSettings(fps=UP_A_PLANE.gait.fps)
    plain = plant(w.legs, UP_A_PLANE.terrain, settings)
    auto = plant(w.legs, UP_A_PLANE.terrain, settings, np.zeros(w.stance.shape, np.int8))
    assert np.array_equal(plain.foot, auto.foot) and np.array_equal(plain.body, auto.body)


def test_forced_contacts_of_the_wrong_shape_raise():
    with pytest.raises(SolverError, match="forced"):
        plant(small_legs(), Plane(), PlantSettings(fps=30.0), np.zeros((5, 2), np.int8))


def test_forcing_down_where_the_motion_stands_changes_nothing():
    """Stances forced down as they are found keep their authored heights: only frames that stand because they
    are forced are lowered to the contact level."""
    gait = dataclasses.replace(CLEAN_WALK, jitter=0.002, slide=0.01, toe_rest=(0.015625, 0.0))
    w = walk(gait)
    settings = PlantSettings(fps=gait.fps, floor=gait.floor)
    found = plant(w.legs, UP_A_PLANE.terrain, settings)
    standing = found.contacts.stance.any(axis=2)
    assert standing.any() and (found.contacts.clearance[standing] > 0.001).any()
    forced = plant(w.legs, UP_A_PLANE.terrain, settings, np.where(standing, DOWN, 0).astype(np.int8))
    assert not forced.contacts.pressed.any()
    np.testing.assert_array_equal(forced.foot, found.foot)
    np.testing.assert_array_equal(forced.body, found.body)


# ---------------------------------------------------------------------------------------------
# Mesh soles (Legs.solid): a sole keyed into the floor is raised onto it


def _sunk(gait: Gait, depth: float) -> Legs:
    """The walk of ``gait`` with the whole body ``depth`` lower: every sole point on the floor is under it."""
    legs = walk(gait).legs
    down = np.array([0.0, 0.0, depth])
    foot = legs.foot.copy()
    foot[..., :3, 3] -= down
    return dataclasses.replace(
        legs, foot=foot, ball=legs.ball - down, tip=legs.tip - down, hip=legs.hip - down, pelvis=legs.pelvis - down
    )


@budget()
@given(gait=gaits(), depth=st.floats(0.005, 0.03))
def test_a_mesh_sole_keyed_into_the_floor_is_raised_onto_it_pitch_kept(gait, depth):
    legs = _sunk(gait, depth)
    ground, options = Plane(base=gait.floor), PlantSettings(fps=gait.fps, floor=gait.floor, foot_lock=False)
    kept = plant(legs, ground, options)  # bone soles: as deep as the take has them
    assert np.abs(kept.foot - legs.foot).max() <= 1e-9
    planted = plant(dataclasses.replace(legs, solid=np.ones(legs.ball.shape[1], bool)), ground, options)
    assert np.abs(planted.foot[..., :3, :3] - legs.foot[..., :3, :3]).max() <= 1e-9  # pitch kept
    carry = planted.foot @ np.linalg.inv(legs.foot)  # each foot's planting, as a world transform

    def carried(points):
        return np.einsum("fnij,fnj->fni", carry[..., :3, :3], points) + carry[..., :3, 3]

    heel, ball = carried(heel_points(legs.foot, legs.ball)), carried(legs.ball)
    tip = ball + np.einsum("fnij,fnj->fni", planted.toe @ np.swapaxes(legs.toe, -1, -2), legs.tip - legs.ball)
    lowest = np.minimum(np.minimum(heel[..., 2], ball[..., 2]), tip[..., 2])
    assert lowest.min() >= gait.floor - 1e-6, lowest.min() - gait.floor


def _clawed(legs: Legs, below) -> Legs:
    """``legs`` with one outline point under each ball, ``below`` (F, n) metres lower, fixed in the foot's frame as
    the foot turns but for that: a claw (or a skinned vertex) that curls under the sole where ``below`` grows."""
    claw = legs.ball - np.asarray(below)[..., None] * np.array([0.0, 0.0, 1.0])
    return dataclasses.replace(legs, outline=claw[:, :, None], solid=np.ones(legs.ball.shape[1], bool))


@budget()
@given(gait=gaits(), depth=st.floats(0.005, 0.04))
def test_an_outline_point_under_the_floor_raises_a_solid_foot_onto_it(gait, depth):
    """A claw that the take keeps under the floor wherever the foot is down (the mesh sole above it) is raised
    onto the floor with its foot; a bone sole's outline (not solid) is kept as deep as the take has it."""
    legs = walk(gait).legs
    options = PlantSettings(fps=gait.fps, floor=gait.floor, foot_lock=False)
    clawed = _clawed(legs, np.full(legs.ball.shape[:2], depth))
    planted = plant(clawed, Plane(base=gait.floor), options)
    claw = carried(legs.foot, planted.foot, clawed.outline[:, :, 0])
    assert claw[..., 2].min() >= gait.floor - 1e-6, claw[..., 2].min() - gait.floor
    kept = plant(dataclasses.replace(clawed, solid=None), Plane(base=gait.floor), options)
    assert np.abs(kept.foot - plant(legs, Plane(base=gait.floor), options).foot).max() <= 1e-9


@budget()
@given(gait=gaits(), depth=st.floats(0.01, 0.05))
def test_a_foot_raised_for_its_push_off_leaves_as_the_take_does(gait, depth):
    """A claw that curls under the floor only over the last frames before a foot leaves (a paw rolling off its
    toes) raises the foot there, and no longer: the frame after the take has it out of the floor, the leg (hip to
    ankle) is at most 60% of the raise shorter than planting without the claw has it, the frame after that 40%
    (its knee turning no faster than it may). Carrying the push-off's raise on towards the landing, as planting
    did, keeps 80-115% of it over both frames (it held a wolf's paw 2-4 cm above the floor after the take lifts
    it out)."""
    legs = walk(gait).legs
    down = contacts(legs, gait.fps)
    below = np.zeros(down.shape)
    for n in range(down.shape[1]):
        for _, last in runs(down[:, n]):
            if last < len(below) - 2:
                below[max(last - 1, 0) : last + 1, n] = depth  # the last two frames down
    assume(below.any())
    options = PlantSettings(fps=gait.fps, floor=gait.floor, foot_lock=False)

    def extension(planted: Planted) -> np.ndarray:
        hips = np.einsum("fij,fnj->fni", planted.body[:, :3, :3], legs.hip) + planted.body[:, None, :3, 3]
        return np.linalg.norm(hips - planted.foot[..., :3, 3], axis=2)

    planted = plant(_clawed(legs, below), Plane(base=gait.floor), options)
    shorter = extension(plant(legs, Plane(base=gait.floor), options)) - extension(planted)
    out = np.zeros(below.shape, bool)  # the first frame the claw is out of the floor again
    out[1:] = (below[1:] == 0.0) & (below[:-1] > 0.0)
    assert shorter[out].max() <= 0.6 * depth, f"{1e3 * shorter[out].max():.1f} mm shorter the frame after"
    then = np.roll(out, 1, axis=0)
    assert np.abs(shorter[then]).max() <= 0.4 * depth, f"{1e3 * np.abs(shorter[then]).max():.1f} mm two frames after"


@budget()
@given(gait=gaits(("walk",)), which=st.integers(0, 7), part=st.floats(0.2, 0.8), rise=st.floats(0.1, 0.3))
def test_a_stance_straddling_a_riser_moves_to_where_its_whole_sole_stands(gait, which, part, rise):
    """A step whose riser passes between a stance's ball and its tip, the upper level under the toe. Planted where
    the take has it, that foot stood on its toe over the upper level, its ball in the air over the lower one (CMU's
    hops on a step: ball p95 290 mm). It moves along the foot to where its whole sole is on one level: wherever the
    take has that foot standing, its ball is at its authored height above the ground under it, within the contact
    height, and goes no deeper into it than the take has it under its floor; it does not slide across the ground
    while it stands; and it is never further from where the take has it than a sole's length (heel to tip) and the
    clearance it keeps from the edge. Walks: a jog's push-off slides its toe on across the riser after the stance,
    so its foot is still lifted towards the upper level as it stands: the miss of the strict xfail on a step
    below."""
    legs = walk(gait).legs
    stances = runs(contacts(legs, gait.fps)[:, 0])
    first, last = stances[which % len(stances)]
    middle = (first + last) // 2
    ball, tip = legs.ball[middle, 0, :2], legs.tip[middle, 0, :2]
    ahead = tip - ball
    assume(np.linalg.norm(ahead) > 0.02)
    riser = Step(
        rise=rise, direction=math.atan2(ahead[1], ahead[0]), base=gait.floor, origin=tuple(ball + part * ahead)
    )
    planted = plant(legs, riser, PlantSettings(fps=gait.fps, floor=gait.floor))
    footing = measure(legs, planted, riser, gait.fps, gait.floor)
    standing = planted.contacts.stance[first : last + 1, 0].any(axis=1)
    error = footing.height_error[first : last + 1, 0][standing]
    keyed_under = np.maximum(gait.floor - legs.ball[first : last + 1, 0, 2], 0.0)[standing]
    assert (error <= 0.03).all() and (error >= -keyed_under - 0.005).all(), (1e3 * error.min(), 1e3 * error.max())
    moved = footing.ball[first : last + 1, 0, :2][standing] - legs.ball[first : last + 1, 0, :2][standing]
    assert (
        np.linalg.norm(moved - moved[0], axis=1).max()
        <= 0.005 + np.linalg.norm(np.diff(legs.ball[first : last + 1, 0, :2][standing], axis=0), axis=1).sum()
    ), "it slides as it stands"
    sole = np.linalg.norm(legs.tip[middle, 0] - heel_points(legs.foot, legs.ball)[middle, 0])
    assert np.linalg.norm(moved, axis=1).max() <= sole + CLEARANCE + 0.02


@budget()
@given(
    raised=st.floats(0.0, 0.1),
    rise=st.floats(0.0, 0.3),
    part=st.floats(0.05, 0.95),
    sole=st.floats(0.12, 0.3),
    heading=st.floats(-math.pi, math.pi),
)
def test_a_stance_on_its_ball_with_its_toe_over_a_riser_moves(raised, rise, part, sole, heading):
    """A foot standing on its ball, its toe raised ``raised`` above the floor, a riser ``rise`` high passing between
    ball and tip: where the riser is higher than the toe by more than the contact height and the 5° a sole may pitch
    beyond its ground, the toe cannot stand there, and the stance moves to where no point of its sole is over higher
    ground than its ball can rest it on (all on the lower level, or the ball over the upper one).
    Before, a sole could tip 40° to reach it: CMU 131_01 on 15 cm stairs stood its ball on the lower level with the
    toe 8.8 cm up, the toe over the first tread; the foot then hung from its toe, in the air, and the body stepping
    up pulled it 59 cm off the ground (ball p95 402 mm)."""
    way = np.array([math.cos(heading), math.sin(heading)])
    ball = np.zeros(2)
    heel, tip = ball - 0.7 * sole * way, ball + 0.3 * sole * way
    frames = 10
    points = np.zeros((frames, 1, 3, 3))
    points[:, 0, :, :2] = heel, ball, tip
    points[:, 0, :, 2] = 0.02, 0.0, raised  # the heel a little up too, as on the ball of the foot
    riser = Step(rise=rise, direction=heading, origin=tuple(ball + part * (tip - ball)))
    offsets = footing_offsets(
        points,
        np.ones((frames, 1), bool),
        np.zeros((frames, 1, 3)),
        np.zeros((frames, 1)),
        riser,
        math.radians(40.0),
        0.03,
    )
    over = rise - raised - math.tan(math.radians(5.0)) * np.linalg.norm(tip - ball)
    assume(abs(over - 0.03) > 1e-6)
    if over < 0.03:
        assert not offsets.any(), "a toe the foot can rest on moved the stance"
        return
    moved = points[0, 0, :, :2] + offsets[0, 0]
    assert offsets.any(), "the stance stays straddling the riser"
    ground = riser.height(moved)
    allowed = points[0, 0, :, 2] + 0.03 + math.tan(math.radians(5.0)) * np.linalg.norm(moved - moved[1], axis=1)
    assert (ground - ground[1] <= allowed).all(), "a point of its sole is still over the upper level, its ball under"
    assert np.linalg.norm(offsets[0, 0]) <= sole + CLEARANCE + 1e-9


@budget()
@given(take=takes("plane", max_slope=35.0))
def test_a_stance_on_ground_a_foot_can_follow_keeps_its_place(take):
    """On a plane no steeper than the steepest a foot tips to follow (40°), no stance straddles an edge: none
    moves."""
    g, legs = take.gait, walk(take.gait).legs
    sole = np.stack([heel_points(legs.foot, legs.ball), legs.ball, legs.tip], axis=2)
    standing = contacts(legs, g.fps)
    depth = np.minimum(sole[..., 2] - g.floor, 0.0)
    stood_on = np.full(standing.shape, g.floor)
    offsets = footing_offsets(sole, standing, depth, stood_on, take.terrain, math.radians(40.0), 0.03)
    assert not offsets.any()


#: A shuffle up a 20 cm step at 30 fps: the swing skims 1.5 cm over the floor, within the contact height, so the
#: moving foot is down the whole stride.
SHUFFLE_UP_A_STEP = Take(
    dataclasses.replace(CLEAN_WALK, fps=30.0, clearance=0.015),
    Step(rise=0.2, direction=0.5 * math.pi, origin=(0.0, 0.8)),
)


def test_a_foot_skimming_over_a_riser_rises_over_its_swing():
    """A foot that slides along the lower level without standing, across the riser, and stands on the upper one is
    a swing landing up there: it rises over the frames before, not up the riser's edge in one frame."""
    result = run(SHUFFLE_UP_A_STEP)
    legs, foot = result.walk.legs, result.planted.foot
    moved = np.abs(np.diff(foot[..., 2, 3], axis=0)) - np.abs(np.diff(legs.foot[..., 2, 3], axis=0))
    assert moved.max() <= 0.06, f"an ankle rises {1e3 * moved.max():.0f} mm in one frame beyond the source"
