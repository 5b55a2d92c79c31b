# SPDX-License-Identifier: GPL-3.0-or-later
"""Limbs: adding, detecting and choosing them, their bone chains, goals and Rigify's IK/FK switch."""
