# SPDX-License-Identifier: GPL-3.0-or-later
"""Hypothesis settings for the pure solver tests: enough examples to find edge cases, few enough
that the whole suite stays well under a minute on two cores. ``LIMB_IK_HYPOTHESIS=thorough``
runs ten times as many (about six minutes)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "solvers", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile("thorough", parent=settings.get_profile("solvers"), max_examples=2000)
settings.load_profile(os.environ.get("LIMB_IK_HYPOTHESIS", "solvers"))
