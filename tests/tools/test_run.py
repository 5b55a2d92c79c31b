# SPDX-License-Identifier: GPL-3.0-or-later
"""The development runner (``tools/run.py``): every tested Blender version has pinned requirements for the
Python its wheel needs, the README and the manifest name the same versions, and a missing Python is
named in one sentence."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import run  # noqa: E402


def pins(version: str) -> dict[str, str]:
    lines = (ROOT / "tools" / f"requirements-{version}.txt").read_text().splitlines()
    return dict(line.split("==") for line in lines if line and not line.startswith("#"))


@pytest.mark.parametrize("version", run.VERSIONS)
def test_each_version_pins_its_wheel_and_a_numpy_for_its_python(version):
    pinned = pins(version)
    assert pinned["bpy"].startswith(version + "."), pinned["bpy"]
    numpy_major = int(pinned["numpy"].split(".")[0])
    assert numpy_major == (2 if run.PYTHONS[version] == "3.13" else 1), (version, pinned["numpy"])


def test_requirement_files_are_the_tested_versions_only():
    files = {
        path.name.removeprefix("requirements-").removesuffix(".txt")
        for path in (ROOT / "tools").glob("requirements-*.txt")
    }
    assert files == set(run.VERSIONS)


def test_manifest_minimum_is_the_oldest_tested_version():
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    oldest = min(run.VERSIONS, key=lambda v: tuple(map(int, v.split("."))))
    assert manifest["blender_version_min"] == f"{oldest}.0"


def test_readme_version_table_names_every_tested_version_and_the_default():
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("### Blender versions") :].split("\n\n")[1]
    tested = {row.split("|")[1].strip().split()[0] for row in table.splitlines()[2:] if "| tested" in row}
    assert tested == set(run.VERSIONS)
    default = next(row for row in table.splitlines() if "the default" in row)
    assert default.split("|")[1].strip().startswith(run.VERSIONS[0])
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"for version in ([\d. ]+);", ci).group(1).split() == list(run.VERSIONS)


def test_the_python_each_wheel_needs_is_found_by_its_version():
    mine = "{}.{}".format(*sys.version_info[:2])
    version = next(v for v, python in run.PYTHONS.items() if python == mine)
    command = run.base_python(version)
    found = subprocess.run(
        [*command, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
    )
    assert found.stdout.strip() == mine


def test_a_missing_python_is_named_in_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setitem(run.PYTHONS, "9.9", "3.99")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "requirements-9.9.txt").write_text("bpy==9.9.0\n")
    monkeypatch.setattr(run, "ROOT", tmp_path)
    monkeypatch.setenv("LIMB_IK_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SystemExit) as stopped:
        run.environment("9.9")
    message = str(stopped.value)
    assert len(re.findall(r"[.!?](?:\s|$)", message)) == 1 and message.endswith(".")  # one sentence
    assert "Blender 9.9" in message and "install Python 3.99" in message
    assert not (tmp_path / "cache").exists()  # nothing created


def test_an_unknown_version_is_refused_with_the_tested_ones():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "run.py"), "test", "--blender", "4.2"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "invalid choice: '4.2'" in done.stderr and all(v in done.stderr for v in run.VERSIONS)


def test_plain_pytest_runs_the_suite_without_the_launcher():
    """pytest-blender, which the requirements install, used to be turned off by tools/run.py alone: a plain
    ``python -m pytest`` in a wheel's environment stopped at "'blender' executable not found"."""
    pytest.importorskip("pytest_blender")  # installed: it would look for a Blender binary unless turned off
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "tests/tools/test_run.py"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
