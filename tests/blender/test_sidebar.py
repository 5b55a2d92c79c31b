# SPDX-License-Identifier: GPL-3.0-or-later
"""What the sidebar shows: Bake in the main panel, the IK/FK switch warning on generated rigs, a leg's stances.

Blender builds no UILayout without a window, so each panel's own draw() runs on a recorder that
notes what it asks for (operators, properties, labels); the scene and the operators are real."""

import bpy
import rigs

from takes import clips


class Recorder:
    """Stands in for a UILayout: keeps what is drawn, in order, as (kind, name) pairs."""

    def __init__(self, drawn: list):
        self.drawn = drawn

    def _sub(self, *_, **__):
        return Recorder(self.drawn)

    row = column = box = split = _sub

    def operator(self, idname, **_):
        self.drawn.append(("operator", idname))
        return type("Properties", (), {})()  # takes any setting, as OperatorProperties would

    def prop(self, data, name, **_):
        self.drawn.append(("prop", name))

    def prop_search(self, data, name, *_, **__):
        self.drawn.append(("prop", name))

    def label(self, text="", **_):
        self.drawn.append(("label", text))

    def template_list(self, *_, **__):
        self.drawn.append(("list", ""))

    def separator(self, *_, **__):
        pass


def drawn(panel: str) -> list[tuple[str, str]]:
    """What the panel ``panel`` draws for the current context, or [] when its poll() refuses."""
    cls = getattr(bpy.types, panel)
    if not cls.poll(bpy.context):
        return []
    out = []
    cls.draw(type("Panel", (), {"layout": Recorder(out)})(), bpy.context)
    return out


def operators(panel: str) -> list[str]:
    return [name for kind, name in drawn(panel) if kind == "operator"]


def test_bake_and_check_are_in_the_main_panel_plant_by_the_ground_and_the_foot_report_with_planted_legs():
    rig = rigs.human_metarig()
    bpy.ops.limb_ik.detect_limbs()
    main = operators("LIMB_IK_PT_limbs")
    assert "limb_ik.bake" in main and "limb_ik.solve" in main and "limb_ik.check" in main
    assert "limb_ik.plant" in operators("LIMB_IK_PT_ground")  # beside the planting settings
    assert "limb_ik.foot_report" not in main and "limb_ik.switch_to_fk" not in main
    rig.limb_ik.limbs["leg.L"].plant = True
    assert "limb_ik.foot_report" in operators("LIMB_IK_PT_limbs")
    assert "limb_ik.foot_report" in operators("LIMB_IK_PT_ground")
    before = rigs.limbs_table(rig)
    for panel in ("LIMB_IK_PT_limbs", "LIMB_IK_PT_limb", "LIMB_IK_PT_reach", "LIMB_IK_PT_hinge", "LIMB_IK_PT_ground"):
        assert drawn(panel), panel
    assert rigs.limbs_table(rig) == before


def test_limbs_held_on_ik_are_shown_with_the_switch(generated_rig):
    rig = rigs.open_generated(generated_rig)
    bpy.ops.limb_ik.detect_limbs()
    main = drawn("LIMB_IK_PT_limbs")
    assert ("label", "The mesh follows the rig's IK chain on leg.L, leg.R, arm.L, arm.R") in main
    assert ("operator", "limb_ik.switch_to_fk") in main
    rig.limb_ik.active_limb_index = rig.limb_ik.limbs.find("arm.R")
    assert ("label", "The mesh follows the IK chain: upper_arm_parent.R IK_FK is not 1") in drawn("LIMB_IK_PT_limb")

    assert bpy.ops.limb_ik.switch_to_fk(only_active=True) == {"FINISHED"}
    assert "limb_ik.switch_to_fk" not in operators("LIMB_IK_PT_limb")
    assert ("label", "The mesh follows the rig's IK chain on leg.L, leg.R, arm.L") in drawn("LIMB_IK_PT_limbs")
    assert bpy.ops.limb_ik.switch_to_fk() == {"FINISHED"}
    assert "limb_ik.switch_to_fk" not in operators("LIMB_IK_PT_limbs")


def test_the_contacts_panel_lists_the_active_legs_stances_with_buttons_to_force_them(lik):
    rig, _, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    for limb in rig.limb_ik.limbs:
        limb.plant = limb.name.startswith("leg")
    rig.limb_ik.ground = ground
    rig.limb_ik.active_limb_index = rig.limb_ik.limbs.find("leg.L")
    assert ("label", "Plant, Check or switch on Live to list the stances") in drawn("LIMB_IK_PT_contacts")
    lik.api.force_contact(rig, "leg.L", 42, 46)
    stances = lik.api.contacts(rig)["leg.L"]
    shown = drawn("LIMB_IK_PT_contacts")
    assert ("list", "") in shown
    assert [text for kind, text in shown if kind == "label" and "–" in text] == [
        f"{start} – {end}  {kind}" for start, end, kind in stances
    ]
    assert "42 – 46  down" in {text for _, text in shown}
    # Down, up and automatic here; down and up for each automatic stance, automatic for the forced one.
    assert operators("LIMB_IK_PT_contacts").count("limb_ik.force_contact") == 3 + 2 * (len(stances) - 1) + 1
    rig.limb_ik.active_limb_index = rig.limb_ik.limbs.find("arm.L")
    assert drawn("LIMB_IK_PT_contacts") == []  # not planted


def test_a_limb_whose_end_bone_the_chain_does_not_carry_says_so(lik):
    """Quaternius' horse, its legs detected with the IK bones their hooves hang from as feet: the limb panel says
    the end bone is moved by its location; a made leg whose foot is the shin's child does not."""
    rig, _, _ = clips.stage("quaternius_horse", "flat")
    assert bpy.ops.limb_ik.detect_limbs() == {"FINISHED"}
    note = ("label", "The chain does not carry its end bone: it is moved by its location too")
    assert note in drawn("LIMB_IK_PT_limb")
    leg = rigs.leg_armature()
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.objects.active = leg
    assert bpy.ops.limb_ik.detect_limbs() == {"FINISHED"}
    assert leg.limb_ik.limbs and note not in drawn("LIMB_IK_PT_limb")


def test_the_ground_panel_shows_what_the_last_planting_bake_said_until_the_planting_is_removed(lik):
    rig, _, ground = clips.stage("wolf_run", "slope")
    lik.api.detect_limbs(rig)
    report = lik.api.plant(rig, ground)
    labels = [name for kind, name in drawn("LIMB_IK_PT_ground") if kind == "label"]
    assert report.warnings and "The last planting bake said:" in labels
    shown = " ".join(labels[labels.index("The last planting bake said:") + 1 :])
    assert all(f"Limb '{limb}'" in shown for limb in report.warnings), shown
    lik.api.remove_planting(rig)
    assert not any("planting bake" in name for kind, name in drawn("LIMB_IK_PT_ground") if kind == "label")
    rig, _, ground = clips.stage("walk", "slope")
    lik.api.detect_limbs(rig)
    assert not lik.api.plant(rig, ground).warnings
    assert ("label", "The last planting bake is within the limits") in drawn("LIMB_IK_PT_ground")
