# SPDX-License-Identifier: GPL-3.0-or-later
"""Live solving on frame change, and the animator's pose under it."""
