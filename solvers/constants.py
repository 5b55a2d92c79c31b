# SPDX-License-Identifier: GPL-3.0-or-later
"""Numbers shared by the solvers (and the rig layer): the identity rotation, and the tolerances that
decide what is too large, too short, degenerate, straight or reached."""

#: The quaternion (w, x, y, z) of no rotation.
IDENTITY = (1.0, 0.0, 0.0, 0.0)
#: Coordinates and lengths beyond this magnitude are rejected, so that no square overflows.
COORDINATE_LIMIT = 1e12
#: A bone shorter than this is a zero-length bone.
MIN_LENGTH = 1e-12
#: A swivel direction shorter than this fraction of the limb's length counts as undefined
#: (a pole on the root-goal line, a knee on it, a hinge axis along it).
DEGENERATE = 1e-9
#: A bend whose normal is shorter than this fraction of ``upper * lower`` counts as straight.
STRAIGHT = 1e-6
#: A chain is reached when the posed effector is this close to its target, relative to the chain's length.
REACHED = 1e-5
