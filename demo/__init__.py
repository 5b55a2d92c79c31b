# SPDX-License-Identifier: GPL-3.0-or-later
"""The demo, and what the planting tests and benchmarks share with it: real motion to plant
(:mod:`demo.clips`), the grounds it is planted on (:mod:`demo.grounds`), the independent measure
(:mod:`demo.measure`), the demo itself (:mod:`demo.plant_walk`) and its filmstrip
(:mod:`demo.filmstrip`).

Not part of the extension: it plants feet only through the extension's API. Import it from a
``bpy`` session with the repository root on ``sys.path``.
"""
