# SPDX-License-Identifier: GPL-3.0-or-later
"""The animation over many frames: read from F-curves in bulk, or by stepping the scene."""
