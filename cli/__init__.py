# SPDX-License-Identifier: GPL-3.0-or-later
"""The batch command line: ``blender --command limb_ik <subcommand> FILES... [options]``.

Every file is opened, each of its armatures goes through :mod:`..api`, and the result is saved
beside the other outputs (or over the input with ``--in-place``). The ``bpy``-wheel launcher
(``tools/limb_ik_cli.py``) calls :func:`main` with its own child command.

- ``batch``: :func:`main`, the whole run and its report
- ``arguments``: the syntax and its usage errors
- ``commands``: what each subcommand does to one armature
- ``one_file``: one .blend opened, done and saved
- ``files``: input names and patterns, output names, the atomic save
- ``parallel``: ``--jobs``, the files shared out over child processes
- ``report``, ``console``: the JSON report, and what is printed
"""

import bpy

from .batch import main
from .parallel import COMMAND, blender_worker

__all__ = ["COMMAND", "blender_worker", "execute", "main", "register", "unregister"]


def execute(argv: list[str]) -> int:
    """Entry point of ``blender --command limb_ik``."""
    return main(list(argv))


_handle = None


def register():
    global _handle
    _handle = bpy.utils.register_cli_command(COMMAND, execute)


def unregister():
    global _handle
    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None
