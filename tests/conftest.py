# SPDX-License-Identifier: GPL-3.0-or-later
"""Makes the bpy-free ``solvers`` package importable on its own, as the pure maths tests use it."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
