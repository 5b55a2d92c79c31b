# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender for the tests: user data in a temporary folder, this tree enabled as an installed
extension, and a fresh default scene for every test."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import source_extension  # noqa: E402

source_extension.isolate_user_resources()  # must precede the first `import bpy`

import bpy  # noqa: E402, I001  (bpy first: it puts addon_utils on the path)
import addon_utils  # noqa: E402
import pytest  # noqa: E402

EXTENSION = source_extension.enable()
addon_utils.enable("rigify", default_set=True)  # ships with Blender: real rigs to test on


@pytest.fixture
def lik():
    """The enabled extension package (``bl_ext.limb_ik_dev.limb_ik``)."""
    return EXTENSION


@pytest.fixture(scope="session")
def generated_rig(tmp_path_factory):
    """A .blend holding the rig Rigify generates from the human metarig, made once per session
    (generating takes seconds); open it with ``rigs.open_generated``."""
    bpy.ops.wm.read_homefile(app_template="")
    bpy.ops.object.armature_human_metarig_add()
    assert bpy.ops.pose.rigify_generate() == {"FINISHED"}
    path = tmp_path_factory.mktemp("rigify") / "generated.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


@pytest.fixture(autouse=True)
def fresh_scene():
    """Every test starts from Blender's default scene, in object mode, at frame 1."""
    bpy.ops.wm.read_homefile(app_template="")
    yield bpy.context.scene


_exit_status = 0


def pytest_sessionfinish(session, exitstatus):
    global _exit_status
    _exit_status = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    # The bpy wheels' own exit handlers hang (4.5) once Rigify has been enabled,
    # which would turn every run into a failure: leave with pytest's status, everything reported.
    source_extension.leave(_exit_status)
