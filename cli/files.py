# SPDX-License-Identifier: GPL-3.0-or-later
"""Files: the inputs named by paths and patterns, each output's name, and the atomic save."""

import glob
import os

import bpy

from .commands import SUBCOMMANDS
from .json_report import entry

# Start of a compressed .blend: zstd (Blender 3.0+) or gzip (older files).
_COMPRESSED_MAGIC = (b"\x28\xb5\x2f\xfd", b"\x1f\x8b")


def expand(patterns: list[str]) -> list[str | dict]:
    """The inputs in order, each an absolute file path (named once, even if given twice) or, for a
    pattern that names no file, its failed report entry."""
    items, seen = [], set()
    for pattern in patterns:
        if os.path.isfile(pattern):  # a file named like a pattern ("take[2].blend") is that file
            matches = [pattern]
        elif glob.has_magic(pattern):
            matches = sorted(match for match in glob.glob(pattern, recursive=True) if os.path.isfile(match))
            if not matches:
                items.append(entry(pattern, error=f"No file matches '{pattern}'."))
        elif os.path.isdir(pattern):
            items.append(entry(pattern, error=f"'{pattern}' is a folder; name the files, e.g. '{pattern}/*.blend'."))
            continue
        else:
            items.append(entry(pattern, error=f"'{pattern}' does not exist."))
            continue
        for match in matches:
            if os.path.realpath(match) not in seen:
                seen.add(os.path.realpath(match))
                items.append(os.path.abspath(match))
    return items


def outputs(files: list[str], args) -> tuple[dict[str, str | None], dict[str, str]]:
    """Each input's output path (None when the subcommand writes nothing), and the inputs that cannot
    be written with the reason."""
    if not SUBCOMMANDS[args.subcommand].writes:
        return dict.fromkeys(files), {}
    if args.in_place:
        return {path: path for path in files}, {}
    folder = os.path.abspath(args.output_dir)
    found, problems, taken = {}, {}, {}
    for path in files:
        output = os.path.join(folder, os.path.basename(path))
        if os.path.realpath(output) == os.path.realpath(path):
            problems[path] = (
                f"'{os.path.basename(path)}' is already in the output folder; writing it there would overwrite "
                "the input (pass --in-place to do that)."
            )
        elif output in taken:
            problems[path] = f"Its output '{output}' would overwrite the output of '{taken[output]}'."
        else:
            taken[output] = path
            found[path] = output
    return found, problems


def is_compressed(path: str) -> bool:
    with open(path, "rb") as file:
        return file.read(4).startswith(_COMPRESSED_MAGIC)


def save(output: str, compress: bool) -> None:
    """Save the open file as ``output`` through a temporary file in the same folder, so relative paths
    are remapped for the final place and an interrupted save never leaves a partial file there. Raises
    :class:`OSError` with the system's reason when the folder or ``output`` cannot be written."""
    folder, name = os.path.split(output)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.limb_ik-tmp")
    try:
        open(temporary, "wb").close()  # a folder that refuses it says why here; Blender would name this file
        os.remove(temporary)  # left there, Blender would keep it as a backup (.limb_ik-tmp1)
        bpy.ops.wm.save_as_mainfile(filepath=temporary, copy=True, compress=compress, relative_remap=True)
        os.replace(temporary, output)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
