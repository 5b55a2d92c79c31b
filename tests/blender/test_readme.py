# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's first-five-minutes script, run verbatim on the scene it describes (the human metarig
added to the default scene): every ``print`` shows what its comment says, and the foot goes where
the script sends it."""

import contextlib
import io
import re
from pathlib import Path

import bpy
import numpy as np
import rigs

README = Path(__file__).resolve().parents[2] / "README.md"


def snippet() -> str:
    """The Python block that follows "The same in a script" in the README."""
    text = README.read_text()
    start = text.index("The same in a script, on that scene")
    return re.search(r"```python\n(.*?)```", text[start:], re.DOTALL)[1]


def test_the_first_five_minutes_script_runs_as_written(lik):
    code = snippet()
    assert "import bpy" in code and 'bpy.data.objects["metarig"]' in code
    bpy.ops.object.armature_human_metarig_add()  # Add > Armature > Human (Meta-Rig)
    bpy.ops.object.mode_set(mode="OBJECT")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(README), "exec"), {"__name__": "__main__"})
    comments = [line.split("#", 1)[1].strip() for line in code.splitlines() if line.startswith("print(")]
    lines = printed.getvalue().splitlines()
    assert len(lines) == len(comments) == 2
    for line, comment in zip(lines, comments):
        assert comment.startswith(line), (line, comment)  # the comment may go on to explain

    rig = bpy.data.objects["metarig"]
    target = bpy.data.objects["metarig_leg.L_target"]
    assert not rig.limb_ik.live  # the bake switched it off
    for frame in (1, 24):
        bpy.context.scene.frame_set(frame)
        assert np.linalg.norm(rigs.world_tip(rig, "foot.L") - np.array(target.matrix_world.translation)) < 1e-5
