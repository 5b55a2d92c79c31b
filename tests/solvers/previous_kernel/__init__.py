# SPDX-License-Identifier: GPL-3.0-or-later
"""The solve kernel as it stood on main before issue 12's speed work (commit b46ccf3, planes included), verbatim
but for imports of the modules that work left alone: the oracle that ``test_kernel_speedup.py`` holds the
faster kernel to. Nothing else may import it; delete it with that test once the faster kernel has a history
of its own."""
