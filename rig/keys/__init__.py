# SPDX-License-Identifier: GPL-3.0-or-later
"""Keys: F-curves in bulk, pose-bone keys, ranges spliced in place, and the bake that writes them."""
