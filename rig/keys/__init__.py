# SPDX-License-Identifier: GPL-3.0-or-later
"""Keys: F-curves in slotted actions, pose-bone keys, and ranges of keys spliced in place."""
