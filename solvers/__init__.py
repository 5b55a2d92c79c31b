# SPDX-License-Identifier: GPL-3.0-or-later
"""Closed-form limb IK maths in float64. Imports nothing from Blender.

Scalar solvers (pure Python floats, a few microseconds each): :func:`solve_two_bone`,
:func:`solve_three_bone`, :func:`two_bone_angles`, :func:`rotation_between`. The same maths
over many limbs with numpy: :func:`solve_two_bone_batch`, :func:`solve_three_bone_batch`, and for limbs
held in a plane :func:`solve_two_bone_plane`, :func:`solve_three_bone_plane`.
From new joint positions to local bone rotations: :func:`chain_local_rotations`; rotation-mode
conversions live in :mod:`.rotation_modes`. Every bad input raises :class:`SolverError`.
"""

from .batch import solve_three_bone_batch, solve_two_bone_batch
from .errors import SolverError
from .local_rotation import chain_local_rotations
from .options import Reach, ReachOptions
from .planar import PlanarAngles, two_bone_angles
from .plane import solve_three_bone_plane, solve_two_bone_plane
from .rotation import rotation_between
from .three_bone import ThreeBoneSolution, solve_three_bone
from .two_bone import TwoBoneSolution, solve_two_bone

__all__ = [
    "PlanarAngles",
    "Reach",
    "ReachOptions",
    "SolverError",
    "ThreeBoneSolution",
    "TwoBoneSolution",
    "chain_local_rotations",
    "rotation_between",
    "solve_three_bone",
    "solve_three_bone_batch",
    "solve_three_bone_plane",
    "solve_two_bone",
    "solve_two_bone_batch",
    "solve_two_bone_plane",
    "two_bone_angles",
]
