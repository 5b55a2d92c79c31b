# SPDX-License-Identifier: GPL-3.0-or-later
"""Limb IK for scripts: everything the sidebar does, as plain functions.

Usable from Blender's Python console, a ``--python`` script, the ``bpy`` wheel or the
``limb_ik`` command line. These are the same code paths as the operators; they differ only in
how problems surface: every function raises :class:`LimbIKError` with a sentence naming the
limb, bone or object at fault, and leaves the scene as it was. A rig is given as its armature
object or by the object's name; like the operators, every function refuses one in Edit Mode.
Functions that evaluate the rig take the ``scene`` to evaluate it in; default: the current one.
Frames and steps are whole numbers (``int``); ``solve`` and ``bake`` refuse a rig with no enabled
limbs (or none of those named).

Example, from a script run inside Blender (the extension installed and enabled)::

    import importlib
    limb_ik = importlib.import_module("bl_ext.user_default.limb_ik.api")  # or your repository's name

    rig = bpy.data.objects["Armature"]
    limb_ik.detect_limbs(rig)                    # {"leg.L": "name", "leg.R": "name", "arm.L": "name", …}
    limb_ik.solve(rig)                           # pose the enabled limbs now
    report = limb_ik.bake(rig, frame_start=1, frame_end=120)
    print(report.keys, "keys")
"""

import numbers
from collections.abc import Callable

import bpy

from .rig import bake as _bake
from .rig import check as _check
from .rig import solve as _solve
from .rig import timeline as _timeline
from .rig.errors import LimbIKError
from .rig.limbs import setup as _limbs
from .rig.limbs import switch as _switch
from .rig.limbs.chain import check_armature
from .rig.planting import contacts as _contacts
from .rig.planting import figures as _figures
from .rig.planting import source as _source

__all__ = [
    "LimbIKError",
    "add_limb",
    "bake",
    "check",
    "contacts",
    "detect_limbs",
    "foot_report",
    "force_contact",
    "frame_range",
    "held_by_ik",
    "legs",
    "match_fk",
    "plant",
    "remove_limb",
    "remove_planting",
    "solve",
    "switch_to_fk",
]


def _armature(obj: bpy.types.Object | str) -> bpy.types.Object:
    """The armature object ``obj``, which may also be given by name."""
    if isinstance(obj, str):
        found = bpy.data.objects.get(obj)
        if found is None:
            raise LimbIKError(f"There is no object named '{obj}'.")
        obj = found
    if not isinstance(obj, bpy.types.Object):
        raise LimbIKError(f"Expected an armature object or its name, not {obj!r}.")
    check_armature(obj)
    if obj.mode == "EDIT":  # as the operators refuse it
        raise LimbIKError(
            f"Armature '{obj.name}' is in Edit Mode; leave it first: its pose is not up to date while bones are edited."
        )
    return obj


def _depsgraph(scene: bpy.types.Scene | None):
    """The evaluated dependency graph of ``scene`` (default: the current one; another scene's first
    view layer), up to date."""
    context = bpy.context
    if scene is None or scene == context.scene:
        return context.evaluated_depsgraph_get()
    if not isinstance(scene, bpy.types.Scene):
        raise LimbIKError(f"Expected a scene, not {scene!r}.")
    return _timeline.evaluated(scene.view_layers[0])


def _frames(**given) -> tuple[int | None, ...]:
    """Frame numbers (and steps) as given: whole numbers, or None for the default."""
    for name, value in given.items():
        if value is not None and (not isinstance(value, numbers.Integral) or isinstance(value, bool)):
            raise LimbIKError(f"{name} must be a whole frame number, not {value!r}.")
    return tuple(None if value is None else int(value) for value in given.values())


def detect_limbs(
    obj: bpy.types.Object | str, with_targets: bool = False, scene: bpy.types.Scene | None = None
) -> dict[str, str]:
    """Find arms and legs (by bone name, else by shape) and add those not set up yet; returns the
    names added, each with what found it. ``with_targets`` gives each a target Empty at its tip.

    >>> detect_limbs(bpy.data.objects["metarig"])
    {'leg.L': 'name', 'leg.R': 'name', 'arm.L': 'name', 'arm.R': 'name'}

    On a generated Rigify rig the limbs are its FK controls, which the mesh follows only once the
    rig's IK/FK switch is at FK: see :func:`held_by_ik` and :func:`switch_to_fk`.
    """
    obj = _armature(obj)
    added, _ = _limbs.detect_limbs(obj, _depsgraph(scene), with_targets)
    return {limb.name: how for limb, how in added}


def held_by_ik(obj: bpy.types.Object | str) -> dict[str, str]:
    """The limbs whose deform bones the rig's IK/FK switch keeps on its IK chain (Rigify's ``IK_FK``
    below 1), each with the bone holding that switch. Posing or baking them does not move the mesh.

    >>> held_by_ik(bpy.data.objects["rig"])
    {'leg.L': 'thigh_parent.L', 'leg.R': 'thigh_parent.R', 'arm.L': 'upper_arm_parent.L', …}
    """
    obj = _armature(obj)
    return {limb.name: limb.switch_bone for limb in _switch.held_by_ik(obj)}


def switch_to_fk(obj: bpy.types.Object | str, limbs: list[str] | str | None = None) -> list[str]:
    """Set the IK/FK switch of the named limbs (default: all) to FK, so the deform bones follow the
    bones Limb IK poses; returns the limbs switched. Refused when a switch is keyed or driven."""
    obj = _armature(obj)
    return [limb.name for limb in _switch.switch_to_fk(obj, _limbs.chosen(obj, limbs, "ALL"))]


def add_limb(obj: bpy.types.Object | str, bones: list[str], name: str = "", with_target: bool = False) -> str:
    """Add a limb over two or three bones of one chain (root first); returns its name. The third may hang from
    no bone of the chain (an exported IK foot under the root): the solve then moves it by its location too.

    >>> add_limb(rig, ["thigh.L", "shin.L", "foot.L"], with_target=True)
    'leg.L'
    """
    obj = _armature(obj)
    return _limbs.add_limb(obj, list(bones), name, with_target).name


def remove_limb(obj: bpy.types.Object | str, name: str) -> None:
    """Remove the limb called ``name``; its bones and target stay."""
    obj = _armature(obj)
    index = obj.limb_ik.limbs.find(name)
    if index < 0:
        raise LimbIKError(f"Armature '{obj.name}' has no limb named '{name}'.")
    _limbs.remove_limb(obj, index)


def check(obj: bpy.types.Object | str, scene: bpy.types.Scene | None = None) -> dict[str, str]:
    """Every enabled limb that cannot be solved as set up, with the reason; empty when all can.
    Planted legs are planted over the take to find out: a foot with no ground under it is a problem.

    >>> check(rig)
    {'arm.R': "Limb 'arm.R': bone 'hand.R' does not exist in armature 'rig'."}
    """
    obj = _armature(obj)
    return _check.check(obj, _depsgraph(scene))


def solve(
    obj: bpy.types.Object | str, limbs: list[str] | None = None, scene: bpy.types.Scene | None = None
) -> _solve.Report:
    """Solve the named limbs (default: every enabled one) at the current frame and write the pose.

    Returns a report with ``solved`` and ``unreached`` limb names (the tip written is off its goal: out of
    reach, or short of it below full influence), and ``off_plane``: for each limb held in a plane (its
    ``plane`` setting) whose goal lay off it, how far (world units).
    """
    obj = _armature(obj)
    return _solve.solve_rig(obj, _depsgraph(scene), _limbs.chosen(obj, limbs))


def match_fk(
    obj: bpy.types.Object | str,
    limbs: list[str] | None = None,
    insert_keys: bool = True,
    scene: bpy.types.Scene | None = None,
) -> _solve.Report:
    """Solve the named limbs (default: every enabled one) at the current frame, key their bones' rotations
    there (``insert_keys``) and switch the limbs off, so the animation carries on in FK without a jump.
    Returns the solve's report (see :func:`solve`). Refused, changing nothing, where the keys cannot be written.
    """
    obj = _armature(obj)
    return _bake.match_fk(obj, _depsgraph(scene), _limbs.chosen(obj, limbs), insert_keys)


def frame_range(
    frame_start: int | None = None, frame_end: int | None = None, scene: bpy.types.Scene | None = None
) -> tuple[int, int]:
    """The frames :func:`bake`, :func:`plant` and :func:`foot_report` work over when given ``frame_start``
    and ``frame_end``: each the scene's own where it is None.

    >>> frame_range(frame_end=48)
    (1, 48)
    """
    frame_start, frame_end = _frames(frame_start=frame_start, frame_end=frame_end)
    if scene is None:
        scene = bpy.context.scene
    elif not isinstance(scene, bpy.types.Scene):
        raise LimbIKError(f"Expected a scene, not {scene!r}.")
    return _timeline.frame_range(scene, frame_start, frame_end)


def bake(
    obj: bpy.types.Object | str,
    limbs: list[str] | None = None,
    frame_start: int | None = None,
    frame_end: int | None = None,
    step: int = 1,
    turn_off_live: bool = True,
    progress: Callable[[float], None] | None = None,
    scene: bpy.types.Scene | None = None,
    contacts: dict | None = None,
) -> _bake.BakeReport:
    """Key the solved pose over a frame range (default: the scene's) on the limb bones' rotation
    channels only; every other key stays as it was. Returns a report with ``frames``, ``keys``,
    ``unreached`` (limb -> frames its tip was off its goal), ``off_plane`` (limb -> frames its goal lay off the
    plane the limb is held in, and the farthest it lay, in world units), ``seconds``, ``lift`` (how far planting
    raised the body where it moved it least, negative lowered; None without planting), ``problems``
    (limb -> sentence: what was keyed but is wrong, such as a body moved further than the take explains) and
    ``warnings`` (limb -> sentence: what was keyed beyond the planting limits, measured on the keys as they play,
    with the frames and the cause where it shows: a knee turning more than 10° in a frame beyond the animation; a
    standing foot off its authored height or pitch, sunk into the ground or sliding; a take where no foot stands).

    ``progress``, if given, is called after each frame is read with the fraction of the range done
    (0 to 1); an exception it raises ends the bake with the scene as it was. ``contacts`` forces planted
    feet down or up first, as :func:`force_contact` does, and is kept (put back if the bake fails).
    """
    obj = _armature(obj)
    frame_start, frame_end, step = _frames(frame_start=frame_start, frame_end=frame_end, step=step)
    depsgraph = _depsgraph(scene)
    with _contacts.forcing(obj, contacts):
        return _bake.bake(
            obj, depsgraph, _limbs.chosen(obj, limbs), frame_start, frame_end, step, turn_off_live, progress
        )


def plant(
    obj: bpy.types.Object | str,
    ground: bpy.types.Collection | str | None = None,
    limbs: list[str] | str | None = None,
    frame_start: int | None = None,
    frame_end: int | None = None,
    step: int = 1,
    progress: Callable[[float], None] | None = None,
    scene: bpy.types.Scene | None = None,
    contacts: dict | None = None,
    pelvis_mode: str | None = None,
    max_pelvis_drop: float | None = None,
    authored_ground: bpy.types.Collection | str | None = None,
) -> _bake.BakeReport:
    """Plant the legs' feet on the ground and bake the result: the planted legs and the pelvis are
    keyed, nothing else.

    ``ground``: the collection (or its name) to stand on; default: the rig's ground setting.
    ``authored_ground``: the collection (or its name) the take was made on (a capture stage's blocks);
    default: the rig's Authored Ground setting, and where that is empty, read from where the feet stand.
    ``limbs``: the legs to plant; default: those marked planted, or if none is, every limb named
    like a leg that has a foot. A limb without a foot, or whose foot is nowhere near the ground
    (an arm), is refused. If the bake fails, these settings are put back too. ``progress`` is
    called with the fraction of the take read so far (planting reads the whole take). ``contacts``:
    feet forced down or up, ``{limb: [(start, end, "down"|"up"|"auto"), …]}``, as :func:`force_contact`
    forces them; they are kept (and put back if the planting fails). ``pelvis_mode`` (``"AVERAGE"``,
    ``"FRONT_UPHILL"`` or ``"LOWEST"``) and ``max_pelvis_drop`` (metres), where given, become the rig's *Pelvis*
    and *Max Pelvis Drop* settings, as the ground does.

        plant(rig, "Terrain")                    # every leg on the Terrain collection
        plant(rig, limbs=["leg.L"], frame_end=48)
        plant(rig, contacts={"leg.L": [(10, 20, "down")]})
        plant(rig, pelvis_mode="LOWEST", max_pelvis_drop=0.05)
    """
    obj = _armature(obj)
    frame_start, frame_end, step = _frames(frame_start=frame_start, frame_end=frame_end, step=step)
    depsgraph = _depsgraph(scene)
    with _contacts.forcing(obj, contacts):
        return _bake.plant(
            obj,
            depsgraph,
            ground,
            limbs,
            frame_start,
            frame_end,
            step,
            progress,
            pelvis_mode,
            max_pelvis_drop,
            authored_ground,
        )


def force_contact(
    obj: bpy.types.Object | str, limb: str, frame_start: int, frame_end: int | None = None, state: str = "down"
) -> None:
    """Force the foot of ``limb`` ``state`` from ``frame_start`` to ``frame_end`` (default: ``frame_start``):
    "down" (it stands there, locked by Foot Lock, whatever the motion shows), "up" (free: neither standing
    nor locked) or "auto" (the motion decides again). Saved on the limb; the bake, live solving and
    :func:`contacts` honour it.

        force_contact(rig, "leg.L", 30, 42)               # the left foot stands from 30 to 42
        force_contact(rig, "leg.L", 30, 42, "auto")       # as the motion has it again
    """
    obj = _armature(obj)
    frame_start, frame_end = _frames(frame_start=frame_start, frame_end=frame_end)
    if frame_start is None:
        raise LimbIKError("frame_start must be a whole frame number, not None.")
    _contacts.force(obj, limb, frame_start, frame_start if frame_end is None else frame_end, str(state))


def contacts(obj: bpy.types.Object | str, scene: bpy.types.Scene | None = None) -> dict[str, list]:
    """Where planting has each planted leg's foot stand over the take, as the sidebar lists it: per leg,
    ``(start, end, kind)`` frame ranges, ``kind`` "auto" (the motion has it standing), "down" (forced down)
    or "up" (forced up: free). Read as :func:`check` reads the take, changing nothing.

    >>> contacts(rig)
    {'leg.L': [(1, 14, 'auto'), (30, 42, 'down'), …], 'leg.R': […]}
    """
    obj = _armature(obj)
    return _check.stances(obj, _depsgraph(scene))


def legs(obj: bpy.types.Object | str) -> list[str]:
    """The limbs taken for legs, enabled or not: those marked planted, and those with a foot named like a
    leg (``leg.L``, ``hind_leg.R``) or over bones named like a leg's (thigh, shin, foot). :func:`plant`
    given no limbs plants the enabled ones among them: those marked planted, else all.

    >>> legs(rig)
    ['leg.L', 'leg.R']
    """
    obj = _armature(obj)
    return [limb.name for limb in _limbs.legs(obj)]


def remove_planting(obj: bpy.types.Object | str) -> int:
    """Put the animator's own keys back on every channel planting keyed (they are kept from the first
    planting on, and every later planting starts from them); returns the number of channels put back.

        plant(rig, "Terrain"); plant(rig, "Terrain")   # the second keys what the first did
        remove_planting(rig)                           # the animation as it was before either
    """
    obj = _armature(obj)
    return _source.remove(obj)


def foot_report(
    obj: bpy.types.Object | str,
    frame_start: int | None = None,
    frame_end: int | None = None,
    scene: bpy.types.Scene | None = None,
) -> dict:
    """How the planted feet stand over a frame range (default: the scene's) as they play back now,
    against the take as authored (as the last planting bake read it, else the animation with live
    solving paused). Per foot: ``contact_frames``, ``ball_height_median``, ``ball_height_p95``,
    ``deepest``, ``pitch_p95``, ``knee_pop``, ``slide`` and ``frames_without_ground``; and the
    ``pelvis_drop`` and ``pelvis_lift``: metres and degrees, each defined once, in
    ``rig/planting/figures.py`` (the README's *Foot planting* section quotes those definitions); ``beyond``
    (limb -> sentence: each foot beyond the planting limits, with the frames, as a planting bake names them); and
    ``lines``, all of it in words (a line per foot, one for the pelvis, then the ``beyond`` sentences), as the Foot
    Report button and the command line's ``check`` show it.

        foot_report(rig)["feet"][0]["slide"]     # 0.0003
    """
    obj = _armature(obj)
    frame_start, frame_end = _frames(frame_start=frame_start, frame_end=frame_end)
    return _figures.foot_report(obj, _depsgraph(scene), frame_start, frame_end).as_dict()
