# SPDX-License-Identifier: GPL-3.0-or-later
"""Makes the bpy-free ``solvers`` package importable on its own, as the pure maths tests use it, and
sets Hypothesis for the whole suite: enough examples to find edge cases, few enough that a run stays
short, and the same examples every run, so a run's result is repeatable.
``LIMB_IK_HYPOTHESIS=thorough`` draws ten times as many, new ones each run (about six minutes more):
it is how new failures are found, and each becomes an ``@example``."""

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.internal.conjecture import providers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

settings.register_profile(
    "solvers",
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("thorough", parent=settings.get_profile("solvers"), max_examples=2000, derandomize=False)
settings.load_profile(os.environ.get("LIMB_IK_HYPOTHESIS", "solvers"))
if settings.default.derandomize:
    # Hypothesis also draws the constants it finds in the code under test (every module loaded so far): a constant
    # changed anywhere, or another set of test files run first, would change the derandomized examples. Without
    # them the examples depend on the tests alone.
    providers._get_local_constants = providers.Constants
