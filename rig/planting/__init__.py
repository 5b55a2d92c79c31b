# SPDX-License-Identifier: GPL-3.0-or-later
"""Foot planting in the rig: the legs and their goals, the ground, the animator's kept keys, the foot figures."""
