# SPDX-License-Identifier: GPL-3.0-or-later
"""The built package installs through Blender's extension installer and works from there."""

import subprocess
import sys
import textwrap
from pathlib import Path

import bpy

ROOT = Path(__file__).resolve().parents[2]

# Runs in a separate Blender session: the source tree is already enabled in this one, and two
# copies of an extension cannot register the same classes.
INSTALL_AND_USE = textwrap.dedent(
    """
    import os, sys, tempfile
    os.environ["BLENDER_USER_RESOURCES"] = tempfile.mkdtemp()
    import bpy
    import addon_utils
    result = bpy.ops.extensions.package_install_files(
        filepath=sys.argv[1], repo="user_default", enable_on_install=True)
    assert result == {"FINISHED"}, result
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    assert bpy.ops.limb_ik.detect_limbs() == {"FINISHED"}
    rig = bpy.context.object
    print("MODULE", type(rig.limb_ik).__module__)
    print("LIMBS", ",".join(limb.name for limb in rig.limb_ik.limbs), flush=True)
    os._exit(0)  # the bpy wheels hang (4.5) on exit once Rigify is enabled
    """
)


def build_package(folder: Path) -> Path:
    tool = Path(bpy.utils.system_resource("SCRIPTS")) / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    archive = folder / "limb_ik.zip"
    for command in (
        ["build", "--source-dir", str(ROOT), "--output-filepath", str(archive)],
        ["validate", str(archive)],
    ):
        subprocess.run([sys.executable, str(tool), *command], check=True, capture_output=True, text=True)
    return archive


def test_package_excludes_tests_and_tooling(tmp_path):
    import zipfile

    names = zipfile.ZipFile(build_package(tmp_path)).namelist()
    assert "blender_manifest.toml" in names and "solvers/two_bone.py" in names and "cli/merge.py" in names
    left_out = {"tests", "tools", "benchmarks", "demo", "takes", "farm", ".ci", "dist"}
    assert not [n for n in names if n.split("/")[0] in left_out]


def test_installed_package_runs_an_operator(tmp_path):
    archive = build_package(tmp_path)
    done = subprocess.run([sys.executable, "-c", INSTALL_AND_USE, str(archive)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "MODULE bl_ext.user_default.limb_ik.properties" in done.stdout
    assert "LIMBS leg.L,leg.R,arm.L,arm.R" in done.stdout
