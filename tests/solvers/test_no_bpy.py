# SPDX-License-Identifier: GPL-3.0-or-later
"""The solvers package stands on its own: importing all of it pulls in neither ``bpy`` nor ``mathutils``."""

import ast
import re
import subprocess
import sys
from pathlib import Path

SOLVERS = Path(__file__).resolve().parents[2] / "solvers"
BLENDER = {"bpy", "mathutils", "bpy_extras", "bmesh", "gpu", "gpu_extras", "addon_utils", "bl_math"}

IMPORT_ALL = """
import importlib, importlib.util, pkgutil, sys
package = {package!r}
spec = importlib.util.spec_from_file_location("solvers", package + "/__init__.py", submodule_search_locations=[package])
module = importlib.util.module_from_spec(spec)
sys.modules["solvers"] = module
spec.loader.exec_module(module)
for info in pkgutil.iter_modules([package]):
    importlib.import_module("solvers." + info.name)
print(",".join(sorted(name for name in sys.modules if name.split(".")[0] in {blender!r})))
"""


def test_importing_every_solver_module_loads_no_blender_module(tmp_path):
    """In a fresh interpreter (one that could import bpy: the test venv has the wheel), from a folder
    outside the repository, so nothing but the package itself is found by path."""
    code = IMPORT_ALL.format(package=str(SOLVERS), blender=BLENDER)
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "", f"solvers imported {run.stdout.strip()}"


def test_no_solver_file_imports_blender():
    files = sorted(SOLVERS.rglob("*.py"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\b(import|from)\s+(bpy|mathutils)\b", text), path.name
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module",
                "__import__",
            ):
                names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            else:
                continue
            assert not {name.split(".")[0] for name in names} & BLENDER, f"{path.name}:{node.lineno} imports {names}"
