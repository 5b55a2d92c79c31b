#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Set up and run Limb IK's development tasks with the official ``bpy`` wheel from PyPI.

    python3 tools/run.py demo     # the walk planted on a ramp and a step: out/demo.blend and its pictures
    python3 tools/run.py test     # the whole test suite on Blender 5.2 LTS (--blender 5.3, 5.1, 5.0 or 4.5)
    python3 tools/run.py bench    # benchmarks, with ratios against Blender's own IK measured in the same run
    python3 tools/run.py build    # dist/limb_ik-<version>.zip, built and validated by Blender's extension tool
    python3 tools/run.py cli bake 'shots/*.blend' --output-dir baked   # the batch command line (cli --help)

Any Python 3 runs this script; each ``bpy`` wheel needs its own Python (3.13 from Blender 5.1 on,
3.11 before), which is looked for on this machine. Each Blender version gets its own virtual
environment under ``$LIMB_IK_CACHE`` (default ``~/.cache/limb_ik``), created on first use and reused
while its requirements file is unchanged. Arguments after the task go to pytest (test), to the
script (demo, bench) or to the command line (cli: all of them, ``--help`` included, except ``--blender``).
"""

import argparse
import contextlib
import glob
import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Every tested Blender version and the Python its bpy wheel is built for; the first is the default
#: (the current LTS). The README's version table and the manifest's blender_version_min follow it.
PYTHONS = {"5.2": "3.13", "5.3": "3.13", "5.1": "3.13", "5.0": "3.11", "4.5": "3.11"}
VERSIONS = tuple(PYTHONS)
TASKS = ("demo", "test", "bench", "build", "cli")


def cache_dir() -> Path:
    base = os.environ.get("LIMB_IK_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "limb_ik"
    return Path(base)


def base_python(version: str) -> list[str] | None:
    """The command of a Python on this machine of the minor version Blender ``version``'s bpy wheel
    needs, or None."""
    minor = PYTHONS[version]
    names = [sys.executable, shutil.which(f"python{minor}"), shutil.which("python3"), shutil.which("python")]
    names += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{minor}*/bin/python{minor}")), reverse=True)
    names += [f"/usr/bin/python{minor}", f"/usr/local/bin/python{minor}", f"/opt/homebrew/bin/python{minor}"]
    commands = [[name] for name in names if name] + [["py", f"-{minor}"]]  # py: the Windows launcher
    for command in commands:
        try:  # a pyenv shim of a version not selected is on the path but fails when run
            found = subprocess.run(
                [*command, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if found.returncode == 0 and found.stdout.strip() == minor:
            return command
    return None


def environment(version: str) -> Path:
    """The virtual environment's Python for Blender ``version``, created or updated as needed."""
    requirements = ROOT / "tools" / f"requirements-{version}.txt"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    home = cache_dir() / f"venv-blender-{version}"
    python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    stamp = home / "requirements.sha256"
    if python.exists() and stamp.exists() and stamp.read_text() == digest:
        return python
    base = base_python(version)
    if base is None:
        sys.exit(
            f"Blender {version}'s bpy wheel needs Python {PYTHONS[version]}, which was not found on this machine: "
            f"install Python {PYTHONS[version]} (python.org, your package manager or pyenv) and run this again."
        )
    print(f"Setting up {home} for Blender {version} with {base[-1]} (the bpy wheel: about 400 MB, once)", flush=True)
    subprocess.run([*base, "-m", "venv", "--clear", str(home)], check=True)
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
    python = environment(args.blender)
    if args.task == "build":
        print(build(python))
        return 0
    command = {
        "test": ["-m", "pytest", *rest],
        "demo": [str(ROOT / "demo" / "plant_walk.py"), *rest],
        "bench": [str(ROOT / "benchmarks" / "run_all.py"), *rest],
        "cli": [str(ROOT / "tools" / "limb_ik_cli.py"), *rest],
    }[args.task]
    if args.task != "cli":
        return subprocess.run([str(python), *command], cwd=ROOT).returncode
    # The command line takes the user's paths, relative to where it was started, and names the command
    # typed in its usage lines.
    python_and_script = sys.orig_argv[: len(sys.orig_argv) - len(sys.argv) + 1]
    typed = " ".join([os.path.basename(python_and_script[0]), *python_and_script[1:], "cli"])
    return run_passing_signals([str(python), *command], {**os.environ, "LIMB_IK_CLI_PROG": typed})


def run_passing_signals(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` and wait for it, passing SIGINT and SIGTERM on to it: the command line stops cleanly
    on them and writes its report. (``subprocess.run`` would raise KeyboardInterrupt here on a Ctrl-C and
    kill the command a quarter of a second later.)"""
    child = subprocess.Popen(command, env=env)

    def forward(number: int, _frame) -> None:
        with contextlib.suppress(ValueError):  # Windows passes on SIGTERM only; its Ctrl-C reaches the child anyway
            child.send_signal(number)

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, forward)
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
