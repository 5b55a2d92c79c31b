# SPDX-License-Identifier: GPL-3.0-or-later
"""The way a live frame takes from the frame-change handler to the write: each of Limb IK's modules is
entered at most three times (re-entered at most twice), so what a frame does reads top to bottom. Counted
with Python's profile hook on real frame changes, inside ``frame_change_post`` (the handler that solves;
the one before the change only puts the animator's values back); the maths (``solvers``) is a library the
rig layer calls and is not counted."""

import collections
import sys

import bpy
import pytest
import rigs

MOST = 3  #: entries into one module on one live frame


def entries(lik, frame: int) -> collections.Counter:
    """How often each module of the add-on is entered from another one in the live solve of the change to
    ``frame``."""
    package, maths = lik.__name__, lik.__name__ + ".solvers"
    stack, counts = [], collections.Counter()
    handler = lik.handlers.limb_ik_frame_change_post.__code__

    def hook(call, event, _arg):
        if event == "call":
            module = call.f_globals.get("__name__", "")
            inside = module.startswith(package + ".") and not module.startswith(maths)
            solving = call.f_code is handler or any(code is handler for _, code in stack)
            if solving and inside and (not stack or stack[-1][0] != module):
                counts[module.removeprefix(package + ".")] += 1
            stack.append((module, call.f_code))
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(hook)
    try:
        bpy.context.scene.frame_set(frame)
    finally:
        sys.setprofile(None)
    return counts


def test_a_planted_live_frame_enters_each_module_at_most_three_times(lik):
    rigs.planted_clip(lik, "walk", "slope", live=True)
    bpy.context.scene.frame_set(10)  # the take read and planted
    counts = entries(lik, 11)
    assert counts["handlers"] == 1 and counts["rig.planting.legs"] and counts["rig.pose"]  # planted and written
    assert {module: n for module, n in counts.items() if n > MOST} == {}


@pytest.mark.parametrize("composes", [False, True], ids=["restored", "composed"])
def test_a_live_frame_with_targets_enters_each_module_at_most_three_times(lik, monkeypatch, composes):
    """Restoring the animator's pose before the frame change, or composing it in the solve (a big rig)."""
    monkeypatch.setattr(lik.rig.live.compose, "COMPOSE_FROM", 0 if composes else 10**9)
    rig = rigs.human_with_targets()
    rig.limb_ik.live = True
    for frame in (1, 2):
        bpy.context.scene.frame_set(frame)
    counts = entries(lik, 3)
    assert bool(counts["rig.live.compose"]) == composes
    assert {module: n for module, n in counts.items() if n > MOST} == {}
