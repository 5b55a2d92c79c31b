# SPDX-License-Identifier: GPL-3.0-or-later
"""How far a planted knee turns in one frame beyond the animation's turn: what planting is held to (10°), read
from where the hips and ankles go, so a take planting cannot keep to it is named, not baked as fine."""

import numpy as np

from .air import bend

#: The most a knee may turn in one frame beyond the animation's turn (radians): the planting limits' 10°.
KNEE_POP = np.radians(10.0)


def knee_turns(hips, ankles, animated_hips, animated_ankles, thigh, shin) -> np.ndarray:
    """(F - 1, n) how far (radians) each knee's turn from a frame to the next, planted (``hips`` and ``ankles``
    (F, n, 3) where they go), is from its turn as animated (``animated_hips``, ``animated_ankles``): bending where
    the animation straightens counts both. By the law of cosines with ``thigh`` and ``shin`` (F, n); a knee whose
    ankle is out of reach stands straight."""
    planted = bend(np.linalg.norm(np.asarray(hips) - np.asarray(ankles), axis=-1), thigh, shin)
    animated = bend(np.linalg.norm(np.asarray(animated_hips) - np.asarray(animated_ankles), axis=-1), thigh, shin)
    return np.abs(np.diff(planted, axis=0) - np.diff(animated, axis=0))
