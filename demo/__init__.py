# SPDX-License-Identifier: GPL-3.0-or-later
"""Inputs for the demo and the planting tests: procedural gaits keyed on Rigify's human metarig
(:mod:`demo.motion`) and the ground they are tried on (:mod:`demo.terrain`).

Not part of the extension: nothing here plants feet. Import it from a ``bpy`` session with the
repository root on ``sys.path``.
"""
