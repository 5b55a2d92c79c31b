# SPDX-License-Identifier: GPL-3.0-or-later
"""Limb IK: closed-form procedural IK for limbs, foot planting on uneven ground, and baking to keys.

Layers, top to bottom: ``operators``, ``panels``, ``handlers`` (Blender-facing, thin) → ``rig``
(the only code that touches armatures) → ``solvers`` (pure float64 maths, no ``bpy``).
"""

import bpy

# Registered in this order, unregistered in reverse: properties first, the command line last.
register, unregister = bpy.utils.register_submodule_factory(
    __name__, ("properties", "operators", "panels", "handlers", "viewport", "cli")
)
