# SPDX-License-Identifier: GPL-3.0-or-later
"""The demo (:mod:`demo.plant_walk`): the bundled walk (``demo/clips/``) planted on a course, with its
filmstrip (:mod:`demo.filmstrip`); and the side-on picture of limbs in a plane (:mod:`demo.side_on`).
The clips and grounds it plants come from :mod:`takes`, which the tests and benchmarks share.

Not part of the extension: it plants feet only through the extension's API. Import it from a
``bpy`` session with the repository root on ``sys.path``.
"""
