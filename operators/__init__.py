# SPDX-License-Identifier: GPL-3.0-or-later
"""Operators (``limb_ik.*``): poll, call the rig layer, report. No solving logic lives here."""

from . import bake, limbs, plant, solve

_modules = (limbs, solve, bake, plant)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
