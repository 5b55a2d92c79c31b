# SPDX-License-Identifier: GPL-3.0-or-later
"""The JSON report: one entry per file (``status`` ok, failed or stopped); :func:`.merge.write` writes it
whole and renames it into place."""

import json
import tomllib
from pathlib import Path


def entry(path: str, output: str | None = None, error: str | None = None) -> dict:
    """A file's part of the report; failed when ``error`` is given."""
    return {
        "path": path,
        "status": "failed" if error else "ok",
        "error": error,
        "output": None if error else output,
        "written": False,
        "changed": False,
        "armatures": [],
        "seconds": 0.0,
    }


def not_done(path: str, reason: str) -> dict:
    """The entry of a file the batch was stopped before."""
    return {**entry(path, error=reason), "status": "stopped"}


def read_json(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return None


def version() -> str:
    """The extension's version, from its manifest."""
    try:
        with open(Path(__file__).parent.parent / "blender_manifest.toml", "rb") as file:
            return tomllib.load(file)["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return ""
