# SPDX-License-Identifier: GPL-3.0-or-later
"""What the command line prints: a line per file, and the batch's last line."""

import os


def print_entry(entry: dict, dry_run: bool) -> None:
    name = os.path.basename(entry["path"])
    if entry["status"] != "ok":
        print(f"FAILED  {name}: {entry['error']}", flush=True)
        return
    details = []
    for part in entry["armatures"]:
        bits = [f"detected {', '.join(part['detected'])}" if part["detected"] else ""]
        if part["baked"]:
            bits.append(f"baked {', '.join(part['baked'])} ({part['keys']} keys)")
        bits += [f"{limb}: {text}" for limb, text in part["problems"].items()] + [part.get("note", "")]
        details.append(f"{part['name']}: " + ("; ".join(b for b in bits if b) or "nothing to do"))
    if entry["written"]:
        where = f" -> {entry['output']}"
    elif entry["output"] and dry_run and (entry["changed"] or entry["output"] != entry["path"]):
        where = f" (dry run, would write {entry['output']})"
    elif entry["output"]:
        where = " (unchanged, not rewritten)"
    else:
        where = ""
    print(f"ok      {name}{where} [{entry['seconds']:.1f} s] " + " | ".join(details), flush=True)


def print_summary(done: int, total: int, failed: int, seconds: float) -> None:
    print(f"{done} of {total} files done, {failed} failed ({seconds:.1f} s).", flush=True)
