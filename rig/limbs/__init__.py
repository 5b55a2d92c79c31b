# SPDX-License-Identifier: GPL-3.0-or-later
"""Limbs: adding, detecting and choosing them, their bone chains, goals, feet's soles and Rigify's IK/FK switch."""
