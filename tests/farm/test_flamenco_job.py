# SPDX-License-Identifier: GPL-3.0-or-later
"""The Flamenco job type (``farm/flamenco/limb_ik.js``): valid JavaScript for node, and its compile
function unit-tested by ``flamenco_job.test.mjs`` with node's own test runner."""

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JOB_TYPE = ROOT / "farm" / "flamenco" / "limb_ik.js"
NODE = shutil.which("node") or "/usr/bin/node"


def node(*args) -> subprocess.CompletedProcess:
    return subprocess.run([NODE, *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_job_type_is_valid_javascript():
    done = node("--check", JOB_TYPE)
    assert done.returncode == 0, done.stderr


def test_compile_function():
    done = node("--test", Path(__file__).with_name("flamenco_job.test.mjs"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = int(re.search(r"^# pass (\d+)$", done.stdout, re.MULTILINE).group(1))
    failed = int(re.search(r"^# fail (\d+)$", done.stdout, re.MULTILINE).group(1))
    assert (passed, failed) == (5, 0), done.stdout[-4000:]
