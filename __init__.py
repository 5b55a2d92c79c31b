# SPDX-License-Identifier: GPL-3.0-or-later
"""Limb IK: closed-form procedural IK for limbs, foot planting on uneven ground, and baking to keys.

Layers, top to bottom: ``operators``, ``panels``, ``handlers`` (Blender-facing, thin) → ``rig``
(the only code that touches armatures) → ``solvers`` (pure float64 maths, no ``bpy``).
"""

from . import cli, handlers, operators, panels, properties

# Registered in this order, unregistered in reverse: properties first, the command line last.
_modules = (properties, operators, panels, handlers, cli)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
