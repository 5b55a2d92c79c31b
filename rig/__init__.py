# SPDX-License-Identifier: GPL-3.0-or-later
"""The rig layer: the only code that reads or writes armatures.

It turns limb settings into checked chains (:mod:`.limbs.chain`), reads goals and poses from Blender
as float64 arrays (:mod:`.limbs.goals`, :mod:`.pose`), hands them to :func:`..solvers.solve_by_count`
and writes the result back (:mod:`.solve`). Problems are raised as :class:`.errors.LimbIKError`.
"""
