# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a foot touches the ground: the skinned mesh's sole where a mesh follows the foot, else the bones.

A character's bones do not touch the ground, its mesh does: the lowest vertices its foot's bones carry.
Read once per plan, in the rest pose, and kept in the carrying bone's rest space, so each frame's sole
is a matrix product (:func:`..planting.legs.leg_sample`). Without a mesh on the foot, the sole is the bones' (the
toe's head and tail, or a toe-less foot's tail), as before.

A mesh's foot may hang from bones outside the leg chain (a glTF export's baked IK bones: the hooves of
Quaternius' animals on ``IKFrontLeg.L`` > ``FF.L`` under the root). :func:`outside` finds those bones: Detect
Limbs makes them a footless leg's foot and toe, which the solve then moves by location too; where a leg has
a foot of its own, the plan says they stay behind.
"""

from dataclasses import dataclass

import bpy
import numpy as np

from ...solvers.rotation_modes import axis_angle_to_quat, quat_to_matrix
from ..keys.actions import fcurves

#: Metres above a foot's lowest vertex (at rest, along the up as the rig stands) that still count as its sole.
BAND = 0.02
#: A vertex belongs to the foot when the foot's bones carry at least this share of its weight.
CARRIED = 0.5
#: Degrees a foot may pitch (toe down or up) and roll from standing as the rig stands at rest, in steps, for the
#: outline: the vertex lowest at each of those turns.
PITCHES, ROLLS = (-60.0, -30.0, 0.0, 30.0, 60.0), (-30.0, 0.0, 30.0)
#: Degrees the ankle bends (flexed and pointed, then tipped in and out) from its rest angle, for the outline: skin
#: weighted partly to the bones above the foot (a heel's skin on the shin, a claw's on the root) moves across the
#: foot as the ankle bends, and what is lowest with it bent may touch.
ANKLE_PITCHES, ANKLE_ROLLS = (-40.0, 40.0), (-20.0, 20.0)
#: Metres between the points of a sole's underside kept in its outline, as the rig stands: an edge under the sole.
SPACING = 0.03


@dataclass(frozen=True)
class Sole:
    """A foot's heel, ball and tip on its mesh, each in the rest space of the bone that carries it:
    heel and ball the foot bone's, tip the toe bone's (the foot's for a toe-less foot). Tuples, so that
    a plan holding them compares and hashes (the live cache's key)."""

    heel: tuple[float, float, float, float]
    ball: tuple[float, float, float, float]
    tip: tuple[float, float, float, float]
    #: heel and ball are in the toe's rest space: a digitigrade leg stands on a toe apart from its foot's hierarchy
    on_toe: bool = False
    #: the foot's outline (:func:`_outline`): the vertices that may touch the ground as the foot turns, each moved by
    #: all the bones that weight it (a claw the skin drags into the floor as the shin bends)
    outline: tuple["Skinned", ...] = ()
    #: every vertex of the foot (and of a digitigrade leg's long bone above its toe), so moved: what a planting bake
    #: reads for how deep its foot goes into the ground (a shin's skin over a step's edge, not on the outline)
    skin: tuple["Skinned", ...] = ()


@dataclass(frozen=True)
class Skinned:
    """A vertex as the Armature modifier moves it: the sum of where each bone that weights it carries it."""

    bones: tuple[int, ...]  #: pose bone indices
    weights: tuple[float, ...]  #: each bone's share, together 1
    local: tuple[tuple[float, float, float, float], ...]  #: the vertex in each bone's rest space


@dataclass
class _Skin:
    """The rest-pose vertices (armature space) of the meshes deformed by a rig, and their weights: one entry per
    vertex and deforming bone weighting it (most vertices have a few of a rig's many bones)."""

    points: np.ndarray  #: (V, 3)
    vertex: np.ndarray  #: (K,) the vertex of each weight
    column: np.ndarray  #: (K,) its bone, by index in ``bones``
    weight: np.ndarray  #: (K,) positive
    bones: list[str]  #: the rig's deforming bones
    edges: np.ndarray  #: (E, 2) vertex pairs

    @property
    def dominant(self) -> np.ndarray:
        """(V,) each vertex's bone with the largest weight (index in ``bones``), -1 for none."""
        dominant = np.full(len(self.points), -1)
        order = np.lexsort((self.weight, self.vertex))  # by vertex, the largest weight last
        dominant[self.vertex[order]] = self.column[order]
        return dominant


def skinned_meshes(obj: bpy.types.Object) -> list[bpy.types.Object]:
    """The mesh objects that an Armature modifier, shown in the viewport, deforms by ``obj``, in its scenes."""
    scenes = set(obj.users_scene)
    return [
        mesh
        for mesh in bpy.data.objects
        if mesh.type == "MESH"
        and scenes & set(mesh.users_scene)
        and any(m.type == "ARMATURE" and m.object == obj and m.show_viewport for m in mesh.modifiers)
    ]


def parented_meshes(obj: bpy.types.Object, skinned) -> list[bpy.types.Object]:
    """The mesh objects parented to a bone of ``obj`` (rigid parts: a robot's feet), in its scenes, but the
    ``skinned`` ones (:func:`skinned_meshes`), which the Armature modifier deforms by it. Not those of a bone with
    Relative Parenting, which follow only its own channels."""
    scenes, bones = set(obj.users_scene), obj.data.bones
    return [
        mesh
        for mesh in obj.children
        if mesh.type == "MESH"
        and mesh.parent_type == "BONE"
        and mesh.parent_bone in bones
        and not bones[mesh.parent_bone].use_relative_parent
        and scenes & set(mesh.users_scene)
        and mesh not in skinned
    ]


def read_skin(obj: bpy.types.Object, rigid: bool = False) -> _Skin | None:
    """The skin of ``obj`` at rest, or None when no mesh with vertex groups follows it. With ``rigid``, the meshes
    parented to its bones too (:func:`parented_meshes`), each vertex weighted wholly to its bone."""
    skinned = skinned_meshes(obj)
    parts = parented_meshes(obj, skinned) if rigid else []
    carriers = {mesh.parent_bone for mesh in parts}
    bones = [b.name for b in obj.data.bones if b.use_deform or b.name in carriers]
    index = {name: i for i, name in enumerate(bones)}
    to_armature = np.linalg.inv(np.array(obj.matrix_world, dtype=np.float64))
    points, entries, edges, offset = [], [], [], 0
    for mesh in [*skinned, *parts]:
        data = mesh.data
        part = mesh in parts
        groups = {g.index: index.get(g.name, -1) for g in mesh.vertex_groups}
        if not (groups or part) or not len(data.vertices):
            continue
        co = np.empty(len(data.vertices) * 3)
        data.vertices.foreach_get("co", co)
        if part:  # where its bone at rest carries it: the bone's tail, then the parenting as set
            bone = obj.data.bones[mesh.parent_bone]
            tail = np.eye(4)
            tail[1, 3] = bone.length
            matrix = np.array(bone.matrix_local, dtype=np.float64) @ tail
            matrix = matrix @ np.array(mesh.matrix_parent_inverse, dtype=np.float64)
            matrix = matrix @ np.array(mesh.matrix_basis, dtype=np.float64)
        else:
            matrix = to_armature @ np.array(mesh.matrix_world, dtype=np.float64)
        points.append(co.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3])
        if part:
            entries += [(offset + v, index[mesh.parent_bone], 1.0) for v in range(len(data.vertices))]
        else:
            entries += [
                (offset + v.index, groups.get(g.group, -1), g.weight)
                for v in data.vertices
                for g in v.groups
                if g.weight > 0
            ]
        pairs = np.empty(len(data.edges) * 2, dtype=np.int64)
        data.edges.foreach_get("vertices", pairs)
        edges.append(pairs.reshape(-1, 2) + offset)
        offset += len(data.vertices)
    if not points:
        return None
    vertex, column, weight = (np.array(values) for values in zip(*entries)) if entries else (np.empty(0),) * 3
    kept = column >= 0  # groups of the rig's deforming bones only
    return _Skin(
        np.concatenate(points),
        vertex[kept].astype(int),
        column[kept].astype(int),
        weight[kept].astype(np.float64),
        bones,
        np.concatenate(edges),
    )


def _columns(skin: _Skin, bones) -> list[int]:
    return [skin.bones.index(b) for b in bones if b in skin.bones]


def _carried(skin: _Skin, bones) -> np.ndarray:
    """(V,) which vertices ``bones`` carry: at least :data:`CARRIED` of their weight."""
    return _share(skin, bones) >= CARRIED


def _share(skin: _Skin, bones) -> np.ndarray:
    """(V,) the share of each vertex's weight on ``bones`` (0 for a vertex no bone weights)."""
    count = len(skin.points)
    total = np.bincount(skin.vertex, skin.weight, minlength=count)
    mine = np.isin(skin.column, _columns(skin, bones))
    part = np.bincount(skin.vertex[mine], skin.weight[mine], minlength=count)
    return np.divide(part, total, out=np.zeros(count), where=total > 0.0)


def _foot_bones(obj: bpy.types.Object, foot: str, toe: str | None) -> list[str]:
    bones = obj.data.bones
    names = [foot, *(b.name for b in bones[foot].children_recursive)]
    if toe:
        names += [toe, *(b.name for b in bones[toe].children_recursive)]
    return list(dict.fromkeys(names))


def _up(obj: bpy.types.Object, bone: str) -> tuple[np.ndarray, float]:
    """The world's up in the armature's rest space as the rig stands (a unit vector), and how many metres an
    armature unit is. The up is taken back through the armature object and through the turn of the bone at
    the top of ``bone``'s hierarchy where that turn is a constant the action does not key, as where a bind pose
    lying on its side stands up only through its root's (Quaternius' triceratops). The same at every frame, so a
    plan does not depend on the frame it is made at."""
    world = np.array(obj.matrix_world, dtype=np.float64)[:3, :3]
    up = np.linalg.solve(world, [0.0, 0.0, 1.0])
    up /= np.linalg.norm(up)
    scale = float(np.linalg.norm(world @ up))
    above = obj.data.bones[bone].parent_recursive
    if not above:
        return up, scale
    root = above[-1]
    path = f'pose.bones["{bpy.utils.escape_identifier(root.name)}"].rotation_'
    if any(curve.data_path.startswith(path) for curve in fcurves(obj) or ()):
        return up, scale
    rest = np.array(root.matrix_local, dtype=np.float64)[:3, :3]
    turn = np.array(obj.pose.bones[root.name].matrix_basis, dtype=np.float64)[:3, :3]
    standing = np.linalg.solve(rest @ turn @ np.linalg.inv(rest), up)
    return standing / np.linalg.norm(standing), scale


def sole(obj: bpy.types.Object, skin: _Skin | None, foot: str, toe: str | None) -> Sole | None:
    """The heel, ball and tip of the foot bone ``foot`` (and its ``toe``) on the mesh, or None where no
    vertex is carried by them.

    The sole is the foot's vertices within :data:`BAND` of its lowest, at rest, as the rig stands
    (:func:`_up`). Along the way the foot
    points (ankle to toe joint, or to the foot's tail; the sole's own spread where those are level), the
    heel is its rearmost vertex, the tip its foremost; the ball is under the toe joint, at the sole's
    lowest height (a toe-less foot's ball is its tip, as on the bones). A toe that hangs from no bone of the
    foot's (a digitigrade leg's foot under the root, below the long bone down to it) is what the leg stands on,
    turning apart from that bone: heel, ball and tip are then the toe's own sole, in its space."""
    if skin is None:
        return None
    on_toe = bool(toe) and obj.data.bones[foot] not in obj.data.bones[toe].parent_recursive
    carried = np.flatnonzero(_carried(skin, _foot_bones(obj, toe, None) if on_toe else _foot_bones(obj, foot, toe)))
    if not len(carried):
        return None
    up, scale = _up(obj, foot)
    points = skin.points[carried]
    height = points @ up
    lowest = height.min()
    band = height <= lowest + BAND / scale  # the sole
    low = points[band]
    bones = obj.data.bones
    ankle = np.array(bones[foot].head_local, dtype=np.float64)
    ahead = np.array((bones[toe].head_local if toe else bones[foot].tail_local), dtype=np.float64) - ankle
    forward = ahead - (ahead @ up) * up
    if np.linalg.norm(forward) <= 0.1 * np.linalg.norm(ahead):  # the foot points down: the sole's long way
        spread = low - low.mean(axis=0)
        spread -= np.outer(spread @ up, up)
        forward = np.linalg.svd(spread, full_matrices=False)[2][0] if len(low) > 1 else np.zeros(3)
        if forward @ (low.mean(axis=0) - ankle) < 0.0:
            forward = -forward
    along = low @ forward
    heel, tip = low[int(np.argmin(along))], low[int(np.argmax(along))]
    if toe:
        joint = np.array(bones[toe].head_local, dtype=np.float64)
        ball = joint - (joint @ up - lowest) * up
    else:
        ball = tip

    def local(bone: str, point: np.ndarray) -> tuple:
        rest = np.array(bones[bone].matrix_local, dtype=np.float64)
        return tuple(float(x) for x in np.linalg.solve(rest, np.append(point, 1.0)))

    carrier = toe if on_toe else foot
    # The outline: of the foot and the toe, each vertex as its bones carry it (a digitigrade foot's spur, on the long
    # bone above the toe it stands on, too).
    whole = np.flatnonzero(_carried(skin, _foot_bones(obj, foot, toe))) if on_toe else carried
    every = _skinned(obj, skin, whole)
    own = _share(skin, _foot_bones(obj, toe, None) if on_toe else _foot_bones(obj, foot, toe))[whole]
    joint = np.array(bones[carrier].head_local, dtype=np.float64)
    on_sole = np.flatnonzero(np.isin(whole, carried[band]))
    spread = _spread(skin.points[whole[on_sole]], up, SPACING / scale)
    kept = np.union1d(_bent_outline(skin.points[whole], own, joint, up, forward), on_sole[spread])
    outline = tuple(every[k] for k in kept)
    return Sole(local(carrier, heel), local(carrier, ball), local(toe or foot, tip), on_toe, outline, every)


def _skinned(obj: bpy.types.Object, skin: _Skin, vertices: np.ndarray) -> tuple[Skinned, ...]:
    """The ``vertices`` of ``skin``, each with the bones that weight it."""
    mine = np.isin(skin.vertex, vertices)
    order = np.argsort(skin.vertex[mine], kind="stable")
    vertex, column, weight = skin.vertex[mine][order], skin.column[mine][order], skin.weight[mine][order]
    starts = np.searchsorted(vertex, vertices)
    ends = np.searchsorted(vertex, vertices, side="right")
    bones = {skin.bones[c] for c in set(column.tolist())}
    rests = {name: np.array(obj.data.bones[name].matrix_local, dtype=np.float64) for name in bones}
    out = []
    for v, first, last in zip(vertices, starts, ends):
        names = [skin.bones[c] for c in column[first:last]]
        point = np.append(skin.points[v], 1.0)
        out.append(
            Skinned(
                tuple(obj.pose.bones.find(name) for name in names),
                tuple(float(w) for w in weight[first:last] / weight[first:last].sum()),
                tuple(tuple(float(x) for x in np.linalg.solve(rests[name], point)) for name in names),
            )
        )
    return tuple(out)


def _bent_outline(points: np.ndarray, own: np.ndarray, joint: np.ndarray, up: np.ndarray, forward) -> np.ndarray:
    """(k,) the indices of ``points`` on the :func:`_outline` with the ankle at rest and bent by each of
    :data:`ANKLE_PITCHES` and :data:`ANKLE_ROLLS` at ``joint``: as seen from the foot, the share of each point's weight
    not on the foot's own bones (1 - ``own``) turns the other way about the joint."""
    forward = _forward(forward, up)
    side = np.cross(forward, up)
    bends = ((side, ANKLE_PITCHES), (forward, ANKLE_ROLLS))
    turns = np.array([(-np.radians(angle), *axis) for axis, angles in bends for angle in angles])  # the other way
    found = [_outline(points, up, forward)]
    for turn in quat_to_matrix(axis_angle_to_quat(turns)):
        dragged = (points - joint) @ turn.T + joint
        found.append(_outline(own[:, None] * points + (1.0 - own[:, None]) * dragged, up, forward))
    return np.unique(np.concatenate(found))


def _spread(points: np.ndarray, up: np.ndarray, spacing: float) -> np.ndarray:
    """(k,) indices of ``points``, one in each square ``spacing`` wide across the ground (the lowest along ``up``):
    where a sole may rest on an edge (a step's, as a foot crosses it) rather than on its rim."""
    flat = points - np.outer(points @ up, up)
    cells = np.floor(flat / spacing).astype(np.int64)
    order = np.lexsort((points @ up, *cells.T[::-1]))
    first = np.ones(len(order), bool)
    first[1:] = np.any(np.diff(cells[order], axis=0) != 0, axis=1)
    return np.sort(order[first])


def _forward(forward: np.ndarray, up: np.ndarray) -> np.ndarray:
    """``forward`` made a unit vector; for a sole of one point (none), any way along the ground."""
    if np.linalg.norm(forward) <= 1e-12:
        forward = np.cross(up, [1.0, 0.0, 0.0] if abs(up[0]) < 0.9 else [0.0, 1.0, 0.0])
    return forward / np.linalg.norm(forward)


def _outline(points: np.ndarray, up: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """(k,) the indices of those of ``points`` (armature rest space) lowest with the foot pitched and rolled by each
    of :data:`PITCHES` and :data:`ROLLS` from the rig's ``up`` (the foot pointing along ``forward``): what may touch
    the ground as a foot rolls onto its toes or heel or tips onto an edge (a claw's point, a spur under the heel,
    a hoof's rim)."""
    forward = _forward(forward, up)
    side = np.cross(forward, up)
    pitch, roll = np.meshgrid(np.radians(PITCHES), np.radians(ROLLS))
    pitch, roll = pitch.ravel(), roll.ravel()
    down = (
        -np.outer(np.cos(pitch) * np.cos(roll), up)
        + np.outer(np.sin(pitch), forward)
        + np.outer(np.cos(pitch) * np.sin(roll), side)
    )
    return np.unique(np.argmax(points @ down.T, axis=0))


def lowest_at_rest(obj: bpy.types.Object, skin: _Skin | None, bones) -> tuple[float, float, float] | None:
    """How high (along the up as the rig stands, :func:`_up`; armature units) the lowest vertex ``bones`` carry
    stands at rest, with the lowest and highest of every vertex the rig deforms; None where no vertex is carried
    by them."""
    if skin is None:
        return None
    carried = _carried(
        skin, [b for name in bones for b in (name, *(c.name for c in obj.data.bones[name].children_recursive))]
    )
    if not carried.any():
        return None
    height = skin.points @ _up(obj, bones[0])[0]
    return float(height[carried].min()), float(height.min()), float(height.max())


def outside(
    obj: bpy.types.Object,
    skin: _Skin | None,
    chain: list[str],
    toe: str | None,
    as_low: bool = False,
    within: float | None = None,
) -> list[str]:
    """The bones outside the leg ``chain`` (thigh, shin and any foot, plus ``toe``) whose skin carries the
    leg's foot: joined to the chain's end by skin (a vertex weighted to both, or a mesh edge between
    vertices each carries), one after another, and reaching lower than the chain's own skin does (as the
    rig stands, :func:`_up`), by more than :data:`BAND`; with ``as_low``, reaching as low, to
    within it, or to ``within`` (armature units) where given (a foot whose shin's skin comes down to the
    sole with it, as a knight's boot). Empty without a mesh."""
    if skin is None:
        return []
    bones = obj.data.bones
    end = chain[-1]
    own = _foot_bones(obj, end, toe)
    barred = set(chain) | set(own) | {b.name for b in bones[chain[0]].parent_recursive}
    up, scale = _up(obj, chain[0])
    height = skin.points @ up
    dominant = skin.dominant
    carried = _carried(skin, own)
    if not carried.any():
        return []
    margin = (BAND / scale if within is None else within) if as_low else -BAND / scale
    lowest = height[carried].min() + margin
    ends = dominant[skin.edges]
    touching = set(map(tuple, ends[(ends >= 0).all(axis=1)].tolist()))
    found: list[str] = []
    reached = set(own)
    while True:
        columns = _columns(skin, reached)
        sharing = np.isin(skin.vertex, skin.vertex[np.isin(skin.column, columns)])  # weights on their vertices
        near = set(skin.column[sharing].tolist())
        near |= {b for a, b in touching if a in columns} | {a for a, b in touching if b in columns}
        more = [
            skin.bones[c]
            for c in sorted(near)
            if skin.bones[c] not in barred | reached and (dominant == c).any() and height[dominant == c].min() < lowest
        ]
        if not more:
            return found
        found += more
        reached |= set(more)


def hung_foot(obj: bpy.types.Object, skin: _Skin | None, limb: str, chain, toe: str | None = None) -> str | None:
    """Words for a foot skinned outside its leg's chain (:func:`outside`): part of a sentence; None if it is not."""
    bones = outside(obj, skin, list(chain), toe)
    if not bones:
        return None
    names = ", ".join(f"'{b}'" for b in bones)
    return (
        f"the foot of limb '{limb}' is skinned to {names}, outside its chain {' > '.join(repr(b) for b in chain)}, "
        "which planting does not move"
    )
