# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a limb's target and pole are, in its armature's space."""

import bpy
import numpy as np

from ..solvers import rotation_modes


def world_matrix(goal: bpy.types.Object, bone_name: str, depsgraph) -> np.ndarray:
    """Evaluated world matrix of an object, or of one of its bones when it is an armature and a bone is named."""
    evaluated = goal.evaluated_get(depsgraph)
    matrix = np.array(evaluated.matrix_world, dtype=np.float64)
    if goal.type == "ARMATURE" and bone_name:
        matrix = matrix @ np.array(evaluated.pose.bones[bone_name].matrix, dtype=np.float64)
    return matrix


def rotation_of(matrices: np.ndarray) -> np.ndarray:
    """(n, 4) quaternions of the nearest rotations to (n, 3, 3) matrices, whatever their scale or shear."""
    u, _, vt = np.linalg.svd(matrices)
    rotation = u @ vt
    flip = np.linalg.det(rotation) < 0.0
    u[flip, :, 2] *= -1.0
    return rotation_modes.matrix_to_quat(u @ vt)
