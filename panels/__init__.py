# SPDX-License-Identifier: GPL-3.0-or-later
"""User interface: the sidebar tab. Panels only draw; every change goes through an operator or a property."""

from . import sidebar

_modules = (sidebar,)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
