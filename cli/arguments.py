# SPDX-License-Identifier: GPL-3.0-or-later
"""The command line's syntax: subcommands, options, and the usage errors (exit status 2)."""

import argparse
import os

from .commands import SUBCOMMANDS

#: The rig's pelvis modes, as ``--pelvis-mode`` takes them (``properties.py`` holds their descriptions).
PELVIS_MODES = ("AVERAGE", "FRONT_UPHILL", "LOWEST")


def _frames(text: str) -> tuple[int, int]:
    start, colon, end = text.partition(":")
    try:
        if not colon:
            raise ValueError
        first, last = int(start), int(end)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a frame range like 1:250") from None
    if last < first:
        raise argparse.ArgumentTypeError(f"the range {text} ends before it starts")
    return first, last


def _forced(text: str) -> tuple[str, int, int]:
    """``leg.L:10-20`` (or ``leg.L:12``, one frame) as (limb, first, last)."""
    limb, colon, frames = text.rpartition(":")
    start, dash, end = frames.partition("-")
    try:
        if not colon or not limb:
            raise ValueError
        first = int(start)
        last = int(end) if dash else first
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a leg and its frames like leg.L:10-20") from None
    if last < first:
        raise argparse.ArgumentTypeError(f"the frames of {text} end before they start")
    return limb, first, last


def forced_contacts(args: argparse.Namespace) -> dict[str, list[tuple[int, int, str]]] | None:
    """The feet forced down or up on the command line, as :func:`api.plant` takes them (up after down: where
    both are given, up wins); None when none are."""
    out: dict[str, list] = {}
    for state in ("down", "up"):
        for limb, first, last in getattr(args, f"force_{state}", None) or ():
            out.setdefault(limb, []).append((first, last, state))
    return out or None


def _metres(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a distance in metres (0 or more)")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of processes (1 or more)")
    return value


def build_parser(prog: str) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The command line's parser, and each subcommand's."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Limb IK on many .blend files at once. A file that fails is reported and skipped; "
        "exit status 0: all fine, 1: some files failed, 2: usage error.",
        epilog=f"'{prog} SUBCOMMAND --help' lists the options of a subcommand.",
    )
    choices = parser.add_subparsers(dest="subcommand", required=True, metavar="SUBCOMMAND")
    subparsers = {}
    for name, command in SUBCOMMANDS.items():
        sub = subparsers[name] = choices.add_parser(name, help=command.help, description=command.help)
        sub.add_argument("files", nargs="+", metavar="FILE", help=".blend files or glob patterns ('shots/**/*.blend')")
        if command.writes:
            where = sub.add_mutually_exclusive_group()
            where.add_argument("--output-dir", metavar="DIR", help="write each result here under its input's name")
            where.add_argument("--in-place", action="store_true", help="overwrite the input files")
            sub.add_argument("--dry-run", action="store_true", help="do everything but write no .blend file")
        if command.uses_frames:
            sub.add_argument("--frames", type=_frames, metavar="A:B", help="frame range (default: each scene's)")
        if command.uses_ground:
            sub.add_argument("--ground", metavar="COLLECTION", help="collection to stand on (default: the rig's own)")
            sub.add_argument(
                "--authored-ground",
                metavar="COLLECTION",
                help="collection the take was made on (default: the rig's own, else read from the stances)",
            )
            sub.add_argument(
                "--pelvis-mode",
                type=str.upper,
                choices=PELVIS_MODES,
                help="which standing legs set the body's height (default: the rig's own)",
            )
            sub.add_argument(
                "--max-pelvis-drop",
                type=_metres,
                metavar="METRES",
                help="most the pelvis sits lower above the ground than animated (default: the rig's own)",
            )
        if command.forces_contacts:
            for state, what in (("down", "standing, locked"), ("up", "free")):
                sub.add_argument(
                    f"--force-{state}",
                    type=_forced,
                    action="append",
                    metavar="LEG:A-B",
                    help=f"force the foot of LEG {state} ({what}) over frames A to B, kept in the file; repeatable",
                )
        sub.add_argument("--json", metavar="REPORT", help="also write a machine-readable report to this file")
        sub.add_argument("--jobs", type=_jobs, default=1, metavar="N", help="files done in parallel (default 1)")
        # A --jobs child: stops when its standard input (a pipe from the parent) closes.
        sub.add_argument("--from-parent", action="store_true", help=argparse.SUPPRESS)
    return parser, subparsers


def parse(argv: list[str], prog: str) -> argparse.Namespace:
    """The parsed arguments, with the output folder made unless it is a dry run; raises SystemExit
    (status 2) on a usage error, before any file is read or written."""
    parser, subparsers = build_parser(prog)
    args = parser.parse_args(argv)
    usage_error = subparsers[args.subcommand].error
    if SUBCOMMANDS[args.subcommand].writes and not (args.output_dir or args.in_place):
        usage_error(f"{args.subcommand} changes files: pass --output-dir DIR, or --in-place to overwrite them")
    problem = getattr(args, "output_dir", None) and _output_folder_problem(args.output_dir, not args.dry_run)
    if problem:
        usage_error(problem)
    return args


def _output_folder_problem(folder: str, create: bool) -> str | None:
    """Why ``folder`` cannot take the outputs, or None; with ``create`` it is made if missing."""
    path = os.path.abspath(folder)
    existing = path
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        if existing == path:
            return f"--output-dir '{folder}' is a file, not a folder"
        return f"--output-dir '{folder}' cannot be created: '{existing}' is a file, not a folder"
    if create:
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as error:
            return f"--output-dir '{folder}' cannot be created: {error.strerror or error}"
    return None
