# SPDX-License-Identifier: GPL-3.0-or-later
"""Closed-form limb IK maths in float64. Imports nothing from Blender.

What the add-on runs: :func:`solve_chains` solves a :class:`ChainBatch` (many limbs, or one limb
set at many frames, joined by :func:`stack`) into a :class:`ChainResult`; :mod:`.planting` plants
legs over a take; :mod:`.rotation_modes` converts rotations to and from each bone's mode. Numbers
shared by all of them live in :mod:`.constants`. Every bad input raises :class:`SolverError`.

The kernels behind :func:`solve_chains`, one limb at a time in pure Python floats (a few
microseconds each) and over many limbs with numpy, tested against each other:
:func:`solve_two_bone` and :func:`solve_two_bone_batch`, :func:`solve_three_bone` and
:func:`solve_three_bone_batch`; for limbs held in a plane, :func:`solve_two_bone_plane` and
:func:`solve_three_bone_plane`; the 2D :func:`two_bone_angles`; :func:`rotation_between`; from
new joint positions to local bone rotations, :func:`chain_local_rotations`.
"""

from . import rotation_modes
from .batch import solve_three_bone_batch, solve_two_bone_batch
from .chains import ChainBatch, ChainResult, solve_chains, stack
from .errors import SolverError
from .local_rotation import chain_local_rotations
from .options import Reach, ReachOptions
from .planar import PlanarAngles, two_bone_angles
from .plane import solve_three_bone_plane, solve_two_bone_plane
from .rotation import rotation_between
from .three_bone import ThreeBoneSolution, solve_three_bone
from .two_bone import TwoBoneSolution, solve_two_bone

__all__ = [
    "ChainBatch",
    "ChainResult",
    "PlanarAngles",
    "Reach",
    "ReachOptions",
    "SolverError",
    "ThreeBoneSolution",
    "TwoBoneSolution",
    "chain_local_rotations",
    "rotation_between",
    "rotation_modes",
    "solve_chains",
    "solve_three_bone",
    "solve_three_bone_batch",
    "solve_three_bone_plane",
    "solve_two_bone",
    "solve_two_bone_batch",
    "solve_two_bone_plane",
    "stack",
    "two_bone_angles",
]
