# SPDX-License-Identifier: GPL-3.0-or-later
"""Live solving on frame change, composing the animator's pose itself on big rigs."""
