# SPDX-License-Identifier: GPL-3.0-or-later
"""User interface: the sidebar tab. Panels only draw; every change goes through an operator or a property."""

import bpy

# Imported and registered in this order, unregistered in reverse.
register, unregister = bpy.utils.register_submodule_factory(__name__, ("sidebar", "contacts", "dopesheet"))
