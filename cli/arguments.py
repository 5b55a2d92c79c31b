# SPDX-License-Identifier: GPL-3.0-or-later
"""The command line's syntax: subcommands, options, and the usage errors (exit status 2)."""

import argparse

from .commands import SUBCOMMANDS


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


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of processes (1 or more)")
    return value


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Limb IK on many .blend files at once. A file that fails is reported and skipped; "
        "exit status 0: all fine, 1: some files failed, 2: usage error.",
        epilog=f"'{prog} SUBCOMMAND --help' lists the options of a subcommand.",
    )
    subparsers = parser.add_subparsers(dest="subcommand", required=True, metavar="SUBCOMMAND")
    for name, command in SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=command.help, description=command.help)
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
        sub.add_argument("--json", metavar="REPORT", help="also write a machine-readable report to this file")
        sub.add_argument("--jobs", type=_jobs, default=1, metavar="N", help="files done in parallel (default 1)")
    return parser


def parse(argv: list[str], prog: str) -> argparse.Namespace:
    """The parsed arguments; raises SystemExit (status 2) on a usage error."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if SUBCOMMANDS[args.subcommand].writes and not (args.output_dir or args.in_place):
        parser.error(f"{args.subcommand} changes files: pass --output-dir DIR, or --in-place to overwrite them")
    return args
