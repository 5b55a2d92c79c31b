# SPDX-License-Identifier: GPL-3.0-or-later
"""Run this source tree as an installed extension inside a ``bpy`` session (tests, demo, benchmarks).

Call :func:`isolate_user_resources` before the first ``import bpy``, then :func:`enable`. The
tree is registered as a local extension repository, so it loads as
``bl_ext.limb_ik_dev.limb_ik`` exactly as a user's install would, relative imports included.
"""

import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent.parent
REPOSITORY = "limb_ik_dev"
MODULE = f"bl_ext.{REPOSITORY}.limb_ik"


def isolate_user_resources() -> Path:
    """Point Blender's user folders (preferences, extensions) at a fresh temporary folder."""
    if "bpy" in __import__("sys").modules:
        raise RuntimeError("isolate_user_resources() must run before bpy is imported")
    folder = Path(tempfile.mkdtemp(prefix="limb_ik_user_"))
    os.environ["BLENDER_USER_RESOURCES"] = str(folder)
    return folder


def enable():
    """Register the source tree as a local extension repository, enable it, and return its module."""
    import addon_utils
    import bpy

    repositories = bpy.context.preferences.extensions.repos
    if REPOSITORY not in {r.module for r in repositories}:
        folder = Path(tempfile.mkdtemp(prefix="limb_ik_repo_"))
        try:
            (folder / "limb_ik").symlink_to(ROOT, target_is_directory=True)
        except OSError:  # no symlinks (Windows without developer mode): copy the package
            shutil.copytree(ROOT, folder / "limb_ik", ignore=shutil.ignore_patterns(".git", "dist", "out", ".*cache*"))
        repositories.new(name="Limb IK (source)", module=REPOSITORY, custom_directory=str(folder), source="USER")
    if addon_utils.enable(MODULE, default_set=True, handle_error=_raise) is None:
        raise RuntimeError(f"could not enable {MODULE}")
    return importlib.import_module(MODULE)


def _raise(error):
    raise error


def leave(status: int) -> NoReturn:
    """End the process with ``status``, skipping the exit handlers of the ``bpy`` wheel.

    Once files have been loaded and extensions (this one, Rigify) enabled, the 4.5 wheel deadlocks
    in them; nothing the tools need runs there. Call it last, with everything written.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
