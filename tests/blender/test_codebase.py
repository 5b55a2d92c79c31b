# SPDX-License-Identifier: GPL-3.0-or-later
"""The conventions the extension keeps: names, tooltips, undo, handlers, headers, imports, manifest."""

import ast
import re
import tomllib
from pathlib import Path

import bpy
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOT_SHIPPED = {"tests", "tools", "benchmarks", "demo", "takes"}
PRODUCT = [p for p in ROOT.rglob("*.py") if not set(p.relative_to(ROOT).parts) & NOT_SHIPPED]
EDITS_NOTHING = {"limb_ik.foot_report", "limb_ik.check"}  # they measure and look only


def registered(base) -> list:
    """Our registered classes deriving from ``base``."""
    return [cls for cls in base.__subclasses__() if cls.__module__.startswith("bl_ext.limb_ik_dev.limb_ik")]


def test_operators_are_named_documented_and_undoable(lik):
    operators = registered(bpy.types.Operator)
    assert {op.bl_idname for op in operators} >= {
        "limb_ik.add_limb",
        "limb_ik.detect_limbs",
        "limb_ik.remove_limb",
        "limb_ik.solve",
        "limb_ik.match_fk",
        "limb_ik.bake",
        "limb_ik.plant",
        "limb_ik.check",
        "limb_ik.foot_report",
    }
    for op in operators:
        assert re.fullmatch(r"LIMB_IK_OT_[a-z_]+", op.__name__), op.__name__
        assert op.bl_idname == "limb_ik." + op.__name__.removeprefix("LIMB_IK_OT_"), op.bl_idname
        assert op.__doc__ and op.__doc__.strip(), f"{op.__name__} has no tooltip"
        assert "poll" in op.__dict__, f"{op.__name__} has no poll()"
        if op.bl_idname not in EDITS_NOTHING:
            assert {"REGISTER", "UNDO"} <= op.bl_options, op.bl_idname


#: Each verb of the API and the operator that does the same job: one path for each job, from a script or the
#: sidebar. held_by_ik's limbs are named by Check (and shown in the sidebar); no operator is left without a verb.
TWINS = {
    "detect_limbs": "limb_ik.detect_limbs",
    "add_limb": "limb_ik.add_limb",
    "remove_limb": "limb_ik.remove_limb",
    "solve": "limb_ik.solve",
    "match_fk": "limb_ik.match_fk",
    "bake": "limb_ik.bake",
    "plant": "limb_ik.plant",
    "remove_planting": "limb_ik.remove_planting",
    "check": "limb_ik.check",
    "held_by_ik": "limb_ik.check",
    "switch_to_fk": "limb_ik.switch_to_fk",
    "foot_report": "limb_ik.foot_report",
    "force_contact": "limb_ik.force_contact",
}
#: What the API holds besides verbs: its error, and questions a script asks before a verb, which the
#: operators' dialogs answer by showing them (the legs Plant takes, the frames a bake takes), and the stances
#: planting finds, which the sidebar lists.
NOT_VERBS = {"LimbIKError", "legs", "frame_range", "contacts"}


def test_every_api_verb_has_an_operator_and_every_operator_a_verb(lik):
    """There was no Plant or Check operator, and Match FK had no verb in the API."""
    public = set(lik.api.__all__)
    assert public >= NOT_VERBS
    assert public - NOT_VERBS == set(TWINS), "a verb without its operator in TWINS, or one gone"
    assert all(callable(getattr(lik.api, name)) for name in public)
    assert {op.bl_idname for op in registered(bpy.types.Operator)} == set(TWINS.values())


def test_the_command_line_goes_through_the_api_only():
    """cli/ used to read the rig layer (the frame range, which limbs are legs, the foot report's words)."""
    for path in sorted((ROOT / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level > 1:  # out of cli/: the API, nothing else
                names = [node.module] if node.module else [alias.name for alias in node.names]
                assert names == ["api"], f"{path.name}: {ast.unparse(node)}"


#: Tests of the demo itself (its filmstrip, its side-on picture): no other test depends on the demo's code.
TESTS_OF_THE_DEMO = {"test_filmstrip.py", "test_footprints_picture.py", "test_planar_limbs.py"}


def test_tests_import_the_demo_only_to_test_it():
    """The planting tests used to stage their clips and measure them with the demo's modules (now in takes/)."""
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                if "demo" in {module.split(".")[0] for module in modules}:
                    assert path.name in TESTS_OF_THE_DEMO, f"{path.name}: {ast.unparse(node)}"


def test_panels_and_lists_are_named_and_in_the_sidebar_tab(lik):
    panels = registered(bpy.types.Panel)
    assert panels
    for panel in panels:
        assert re.fullmatch(r"LIMB_IK_PT_[a-z_]+", panel.__name__), panel.__name__
        assert (panel.bl_space_type, panel.bl_region_type, panel.bl_category) == ("VIEW_3D", "UI", "Limb IK")
    for ui_list in registered(bpy.types.UIList):
        assert re.fullmatch(r"LIMB_IK_UL_[a-z_]+", ui_list.__name__), ui_list.__name__


TOOLTIP = 120  #: characters: a tooltip is one sentence


def _settings_of(rna):
    return [p for p in rna.properties if p.identifier not in {"rna_type", "name"}]


def test_every_setting_has_a_name_and_a_tooltip(lik):
    groups = (lik.properties.LIMB_IK_PG_contact, lik.properties.LIMB_IK_PG_limb, lik.properties.LIMB_IK_PG_rig)
    owners = {cls.__name__: cls.bl_rna for cls in groups}
    for op in registered(bpy.types.Operator):
        category, name = op.bl_idname.split(".")
        owners[op.__name__] = getattr(getattr(bpy.ops, category), name).get_rna_type()
    tooltips = {op.__name__: " ".join(op.__doc__.split()) for op in registered(bpy.types.Operator)}
    for owner, rna in owners.items():
        for prop in _settings_of(rna):
            assert prop.name, f"{owner}.{prop.identifier} has no name"
            assert prop.description, f"{owner}.{prop.identifier} has no tooltip"
            tooltips[f"{owner}.{prop.identifier}"] = prop.description
    for owner, text in tooltips.items():  # one sentence: what a tooltip has room for
        assert len(text) <= TOOLTIP and not re.search(r"[.!?] +[A-Z(]", text), f"{owner}: {text!r}"


def test_object_gets_one_pointer_property(lik):
    assert isinstance(bpy.types.Object.bl_rna.properties["limb_ik"], bpy.types.PointerProperty)
    assert bpy.types.Object.bl_rna.properties["limb_ik"].fixed_type.identifier == "LIMB_IK_PG_rig"


def test_handlers_are_persistent_and_registered_once(lik):
    ours = [
        handler
        for handlers in (
            bpy.app.handlers.frame_change_pre,
            bpy.app.handlers.frame_change_post,
            bpy.app.handlers.save_pre,
            bpy.app.handlers.save_post,
            bpy.app.handlers.load_post,
        )
        for handler in handlers
        if getattr(handler, "__module__", "").startswith("bl_ext.limb_ik_dev.limb_ik")
    ]
    assert ours
    assert len({h.__name__ for h in ours}) == len(ours)
    assert all(hasattr(h, "_bpy_persistent") for h in ours)


@pytest.mark.parametrize("path", PRODUCT, ids=lambda p: str(p.relative_to(ROOT)))
def test_source_files_have_a_licence_header_and_a_docstring(path):
    text = path.read_text()
    assert text.startswith("# SPDX-License-Identifier: GPL-3.0-or-later\n"), path
    assert ast.get_docstring(ast.parse(text)), f"{path} has no module docstring"


@pytest.mark.parametrize("path", PRODUCT, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_within_the_extension_are_relative(path):
    """The installed package is ``bl_ext.<repository>.limb_ik``: its name must never be spelled out."""
    tree = ast.parse(path.read_text())
    ours = {"solvers", "rig", "operators", "panels", "properties", "handlers", "api", "cli", "limb_ik"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not {a.name.split(".")[0] for a in node.names} & ours, f"{path}: {ast.unparse(node)}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            assert (node.module or "").split(".")[0] not in ours, f"{path}: {ast.unparse(node)}"
    documented = (ast.Module, ast.FunctionDef, ast.ClassDef)
    docstrings = {
        id(node.body[0].value) for node in ast.walk(tree) if isinstance(node, documented) and ast.get_docstring(node)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            assert "bl_ext." not in node.value, f"{path} names the installed package: {node.value!r}"


def test_solvers_import_nothing_from_blender():
    for path in (ROOT / "solvers").glob("*.py"):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add((node.module or "").split(".")[0])
        assert not names & {"bpy", "mathutils", "bpy_extras", "gpu"}, path


def test_manifest():
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    assert manifest["id"] == "limb_ik"
    assert manifest["blender_version_min"] == "4.5.0"
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
    assert len(manifest["tagline"]) <= 64 and not manifest["tagline"].endswith(".")
    excluded = manifest["build"]["paths_exclude_pattern"]
    assert {"__pycache__/", "/.*", "/*.zip", "/farm/", *(f"/{folder}/" for folder in NOT_SHIPPED)} <= set(excluded)


def test_the_readme_picture_names_every_folder_and_module_of_the_layers():
    """ "How it works" shows the layout a newcomer sees in ``ls``: every folder of rig/ and solvers/ (as
    ``name/``) and every module in them; each folder says in one line what it owns."""
    readme = (ROOT / "README.md").read_text()
    picture = readme[readme.index("## How it works") :].split("```")[1]
    words = set(re.findall(r"[a-z_]+", picture))
    for layer in ("rig", "solvers"):
        for init in sorted((ROOT / layer).rglob("__init__.py")):
            folder = init.parent
            doc, where = ast.get_docstring(ast.parse(init.read_text())), folder.relative_to(ROOT)
            assert doc, f"{where}/ does not say what it holds"
            if folder.parent.name == "rig":  # the rig layer's role folders: one line each
                assert "\n" not in doc.strip() and doc.strip().endswith("."), f"{where}: {doc!r}"
            if folder.name != layer:
                assert f"{folder.name}/" in picture, f"{where}/ missing from the picture"
            modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
            assert modules <= words, f"{where}/ modules missing from the picture: {sorted(modules - words)}"


def test_only_the_orchestrators_import_the_solve():
    """The rig layer's data (the plan, poses, chains, keys, frames, planting) does not reach up into the
    solve for a type: only what runs a whole job does (the diagnostic, the bake, a live frame)."""
    orchestrators = {"rig/check.py", "rig/bake.py", "rig/live/frame.py"}
    importers = set()
    for path in (ROOT / "rig").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                names = {alias.name for alias in node.names}
                if (node.module or "").split(".")[-1] == "solve" or (not node.module and "solve" in names):
                    importers.add(path.relative_to(ROOT).as_posix())
    assert importers == orchestrators


def test_the_rig_layers_role_folders_depend_one_way():
    """Each role folder of rig/ (limbs, frames, planting, keys, live) imports from others in one direction
    only: no two folders import from each other, directly or round a loop, so each can be read knowing only
    those below it. What uses them all (plan, solve, check, bake) sits at rig/'s top."""
    rig = ROOT / "rig"
    folders = {p.name for p in rig.iterdir() if (p / "__init__.py").is_file()}
    uses = {folder: set() for folder in folders}
    for folder in folders:
        for path in (rig / folder).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.level == 2:
                    target = (node.module or "").split(".")[0] or None
                    names = [target] if target else [alias.name for alias in node.names]
                    uses[folder] |= {name for name in names if name in folders and name != folder}
    order, done = [], set()

    def visit(folder, path):
        assert folder not in path, f"role folders import each other: {' → '.join([*path, folder])}"
        if folder not in done:
            for used in sorted(uses[folder]):
                visit(used, [*path, folder])
            done.add(folder)
            order.append(folder)

    for folder in sorted(folders):
        visit(folder, [])
    assert len(order) == len(folders) >= 5
