# SPDX-License-Identifier: GPL-3.0-or-later
"""Operators (``limb_ik.*``): poll, call the rig layer, report. No solving logic lives here."""

import bpy

# Imported and registered in this order, unregistered in reverse.
register, unregister = bpy.utils.register_submodule_factory(__name__, ("limbs", "solve", "bake", "contacts", "check"))
