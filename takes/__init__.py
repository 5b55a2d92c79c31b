# SPDX-License-Identifier: GPL-3.0-or-later
"""Real motion to plant, for the demo, the tests and the benchmarks alike: the clips and how to stage one
(:mod:`takes.clips`), the grounds to plant it on (:mod:`takes.grounds`) and the independent measure of the
result (:mod:`takes.measure`, which needs the shared folder).

Not part of the extension: it plants feet only through the extension's API. Import it from a ``bpy``
session with the repository root on ``sys.path``.
"""
