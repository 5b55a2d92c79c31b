#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""``blender --command limb_ik`` without Blender: the same command line on the ``bpy`` wheel.

    python3.13 tools/limb_ik_cli.py bake shots/*.blend --output-dir baked --jobs 2 --json report.json
    python3 tools/run.py cli bake shots/*.blend --output-dir baked     # the same, in the cached venv

Run it with a Python that has the ``bpy`` wheel installed. This source tree is enabled as an
extension in throw-away user folders (the user's own Blender preferences are never read or
written), then the extension's own ``cli.main`` parses the arguments and does the work. For
``--jobs N`` the files are shared out over new processes of this same launcher. Usage lines name
the command as typed, or ``$LIMB_IK_CLI_PROG`` when a wrapper (``tools/run.py cli``) sets it.
Blender's own form of the command (``--background --command limb_ik bake ...``) works as well,
so a farm job template that runs Blender can run this launcher instead.
"""

import importlib
import os
import shutil
import signal
import sys
from pathlib import Path

import source_extension


def run(argv: list[str], received: list[int]) -> int:
    """The command line ``argv``; ``received``: the signals noted while starting, which stop it at once."""
    user_folder = source_extension.isolate_user_resources()
    bpy = import_bpy_quietly()

    repository = None
    try:
        source_extension.enable()
        repositories = bpy.context.preferences.extensions.repos
        repository = next((r for r in repositories if r.module == source_extension.REPOSITORY), None)
        cli = importlib.import_module(f"{source_extension.MODULE}.cli")
        worker = [sys.executable, str(Path(__file__).resolve())]
        return cli.main(argv, prog=typed_command(), worker=worker, received=received)
    finally:
        # Throw-away folders: the user resources and the repository that links to this tree.
        if repository is not None and repository.custom_directory:
            shutil.rmtree(repository.custom_directory, ignore_errors=True)
        shutil.rmtree(user_folder, ignore_errors=True)


def import_bpy_quietly():
    """``import bpy`` with this process's standard output pointed at the null device meanwhile.

    Where the environment names a colour configuration (``OCIO``: a studio's, or the one a parent
    process that imported ``bpy`` set for its children), Blender 5.2 and later log which one they use
    on the standard output as they start, below Python's ``sys.stdout``."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        import bpy
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return bpy


def typed_command() -> str:
    """This command as it was typed, up to the subcommand: ``python3.13 tools/limb_ik_cli.py``."""
    python, *script = sys.orig_argv[: len(sys.orig_argv) - len(sys.argv) + 1]
    return os.environ.get("LIMB_IK_CLI_PROG") or " ".join([os.path.basename(python), *script])


def command_arguments(argv: list[str]) -> list[str]:
    """The command line's own arguments. Blender's form, ``[--background ...] --command limb_ik ARGS``,
    is accepted too, so this launcher can stand in for the Blender executable of a farm job."""
    if "--command" in argv[:-1] and argv[argv.index("--command") + 1] == "limb_ik":
        return argv[argv.index("--command") + 2 :]
    return argv


def main() -> None:
    # Importing bpy takes a second or more: a Ctrl-C or SIGTERM then is noted, as the batch notes them
    # (cli/stop.py), not a KeyboardInterrupt raised inside that import or the end of the process.
    received: list[int] = []
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda number, frame: received.append(number))
    source_extension.leave(run(command_arguments(sys.argv[1:]), received))


if __name__ == "__main__":
    main()
