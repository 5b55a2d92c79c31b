# SPDX-License-Identifier: GPL-3.0-or-later
"""The one exception the solvers raise."""


class SolverError(ValueError):
    """Input that no limb can have: a non-finite or out-of-range number, a zero-length bone,
    a zero direction, or inconsistent options. The message says which."""
