# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a limb's target and pole are, in its armature's space."""

import numpy as np


def world_matrices(goals, depsgraph) -> np.ndarray:
    """(n, 4, 4) evaluated world matrices of ``goals``: (object, bone name) pairs, the bone's when an
    armature and a bone are named, else the object's."""
    out = np.empty((len(goals), 4, 4))
    for row, (goal, bone_name) in enumerate(goals):
        evaluated = goal.evaluated_get(depsgraph)
        out[row] = evaluated.matrix_world
        if goal.type == "ARMATURE" and bone_name:
            out[row] = out[row] @ np.array(evaluated.pose.bones[bone_name].matrix)
    return out
