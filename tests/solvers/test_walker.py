# SPDX-License-Identifier: GPL-3.0-or-later
"""The synthetic walker the planting properties run on does what it says: legs within reach, rigid
feet, stances where its ground truth has them, the capture noise it was asked for."""

import numpy as np
from footing import contacts, runs
from hypothesis import given, settings
from walker import gaits, walk

EXAMPLES = max(settings.default.max_examples // 8, 10)
quick = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)


@quick
@given(gaits())
def test_every_ankle_is_within_reach(gait):
    legs = walk(gait).legs
    distance = np.linalg.norm(legs.hip - legs.foot[..., :3, 3], axis=-1)
    assert distance.max() <= gait.reach * (gait.thigh + gait.shin) + 1e-12


@quick
@given(gaits())
def test_feet_are_rigid(gait):
    """The ball sits at one place in the foot's frame; the tip at the toe's length from the ball."""
    legs = walk(gait).legs
    ball = np.concatenate([legs.ball, np.ones(legs.ball.shape[:-1] + (1,))], axis=-1)
    local = np.linalg.solve(legs.foot, ball[..., None])[..., :3, 0]
    assert np.ptp(local, axis=0).max() <= 1e-9
    np.testing.assert_allclose(np.linalg.norm(legs.tip - legs.ball, axis=-1), gait.toe_length, atol=1e-9)
    np.testing.assert_allclose(np.linalg.det(legs.foot[..., :3, :3]), 1.0, atol=1e-9)
    np.testing.assert_allclose(np.linalg.det(legs.toe), 1.0, atol=1e-9)


@quick
@given(gaits())
def test_contacts_are_where_the_ground_truth_stands(gait):
    """Every frame with the ball down is a contact by the tests' own measure (but the take's first and
    last, where a ball that just landed or is about to leave cannot be told from one passing by), and
    every contact lies within a stance or within 60 ms of one (a foot arriving or leaving low and slow)."""
    w = walk(gait)
    found = contacts(w.legs, gait.fps)
    assert found[1:-1][w.ball_down[1:-1]].all()
    near = max(int(round(0.06 * gait.fps)), 1)
    grown = w.stance.copy()
    for n in range(grown.shape[1]):
        for first, last in runs(w.stance[:, n]):
            grown[max(first - near, 0) : last + near + 1, n] = True
    assert not (found & ~grown)[near:-near].any()  # at the take's ends the next stance may be beyond it


@quick
@given(gaits())
def test_standing_balls_slide_and_dip_as_asked(gait):
    w = walk(gait)
    legs = w.legs
    for n in range(2):
        for first, last in runs(w.ball_down[:, n]):
            xy = legs.ball[first : last + 1, n, :2]
            assert np.linalg.norm(xy - xy[0], axis=1).max() <= gait.slide + 6.0 * gait.jitter + 1e-9
    assert w.dipped.sum(axis=0).max() <= gait.dips
    assert (legs.ball[w.dipped][:, 2] < gait.floor).all()
