#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Set up and run Limb IK's development tasks with the official ``bpy`` wheel from PyPI.

    python3.11 tools/run.py demo     # the walk planted on a ramp and a step: out/demo.blend, demo.png, filmstrip.jpg
    python3.11 tools/run.py test     # the whole test suite (--blender 4.5 or 4.2 for the LTSs)
    python3.11 tools/run.py bench    # benchmarks, with ratios against Blender's own IK measured in the same run
    python3.11 tools/run.py build    # dist/limb_ik-<version>.zip, built and validated by Blender's extension tool
    python3.11 tools/run.py cli bake 'shots/*.blend' --output-dir baked   # the batch command line (cli --help)

Each Blender version gets its own virtual environment under ``$LIMB_IK_CACHE`` (default
``~/.cache/limb_ik``), created on first use and reused while its requirements file is unchanged.
Arguments after the task go to pytest (test), to the script (demo, bench) or to the command line
(cli: all of them, ``--help`` included, except ``--blender``).
"""

import argparse
import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ("5.0", "4.5", "4.2")
TASKS = ("demo", "test", "bench", "build", "cli")


def cache_dir() -> Path:
    base = os.environ.get("LIMB_IK_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "limb_ik"
    return Path(base)


def environment(version: str) -> Path:
    """The virtual environment's Python for Blender ``version``, created or updated as needed."""
    requirements = ROOT / "tools" / f"requirements-{version}.txt"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    home = cache_dir() / f"venv-blender-{version}"
    python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    stamp = home / "requirements.sha256"
    if python.exists() and stamp.exists() and stamp.read_text() == digest:
        return python
    print(f"Setting up {home} for Blender {version} (the bpy wheel is about 370 MB; once only)", flush=True)
    venv.EnvBuilder(with_pip=True, clear=python.exists()).create(home)
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "--requirement", str(requirements)], check=True)
    stamp.write_text(digest)
    return python


def blender_ext(python: Path) -> list[str]:
    """Blender's own extension command line, as shipped inside the bpy wheel."""
    code = "import bpy, pathlib; print(pathlib.Path(bpy.utils.system_resource('SCRIPTS')))"
    scripts = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True)
    tool = Path(scripts.stdout.strip().splitlines()[-1]) / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    return [str(python), str(tool)]


def build(python: Path) -> Path:
    dist = ROOT / "dist"
    dist.mkdir(exist_ok=True)
    manifest = (ROOT / "blender_manifest.toml").read_text()
    version = next(line.split('"')[1] for line in manifest.splitlines() if line.startswith("version"))
    archive = dist / f"limb_ik-{version}.zip"
    tool = blender_ext(python)
    subprocess.run([*tool, "build", "--source-dir", str(ROOT), "--output-filepath", str(archive)], check=True)
    subprocess.run([*tool, "validate", str(archive)], check=True)
    return archive


def split_cli_arguments(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The cli task's arguments: ``--blender`` is ours, everything else (``--help`` included) goes to
    the command line unchanged and in order."""
    rest, blender, index = [], VERSIONS[0], 0
    argv = list(argv)
    argv.remove("cli")
    while index < len(argv):
        arg = argv[index]
        if arg == "--blender" and index + 1 < len(argv):
            blender, index = argv[index + 1], index + 2
            continue
        if arg.startswith("--blender="):
            blender = arg.partition("=")[2]
        else:
            rest.append(arg)
        index += 1
    if blender not in VERSIONS:
        sys.exit(f"--blender must be one of {', '.join(VERSIONS)}, not '{blender}'")
    return argparse.Namespace(task="cli", blender=blender), rest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=TASKS)
    parser.add_argument("--blender", choices=VERSIONS, default=VERSIONS[0], help="Blender (bpy wheel) version")
    argv = sys.argv[1:]
    if next((arg for arg in argv if arg in TASKS), None) == "cli":
        args, rest = split_cli_arguments(argv)
    else:
        args, rest = parser.parse_known_args(argv)
    if sys.version_info[:2] != (3, 11):
        print(f"The bpy wheels need Python 3.11; this is {sys.version.split()[0]}. Run it with python3.11.")
        return 2
    python = environment(args.blender)
    if args.task == "build":
        print(build(python))
        return 0
    command = {
        "test": ["-m", "pytest", "-p", "no:pytest-blender", *rest],
        "demo": [str(ROOT / "demo" / "plant_walk.py"), *rest],
        "bench": [str(ROOT / "benchmarks" / "run_all.py"), *rest],
        "cli": [str(ROOT / "tools" / "limb_ik_cli.py"), *rest],
    }[args.task]
    # The command line takes the user's paths, relative to where it was started, and names the command
    # typed in its usage lines.
    python_and_script = sys.orig_argv[: len(sys.orig_argv) - len(sys.argv) + 1]
    typed = " ".join([os.path.basename(python_and_script[0]), *python_and_script[1:], "cli"])
    env = {**os.environ, "LIMB_IK_CLI_PROG": typed} if args.task == "cli" else None
    return subprocess.run([str(python), *command], cwd=None if args.task == "cli" else ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
