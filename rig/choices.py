# SPDX-License-Identifier: GPL-3.0-or-later
"""The choices a limb's settings offer, as enum items: (identifier, name, tooltip).

Their order is their code: ``foreach_get`` reads an enum setting as the position of its item, and
the solvers' :class:`~..solvers.options.Reach` codes follow ``REACH_ITEMS``.
"""

REACH_ITEMS = (
    ("EXTEND", "Extend", "Out of reach, point straight at the target; too close, fold with the longer bone toward it"),
    ("HOLD", "Hold", "Out of reach, keep the animated pose"),
    ("STRETCH", "Stretch", "Out of reach, scale both bones along their length, up to Max Stretch"),
)
END_ROTATION_ITEMS = (
    (
        "TARGET",
        "Target",
        "The end bone turns with the target, from the turn it had when the target was set (its animated "
        "rotation when the limb has no target)",
    ),
    ("FK", "Animated", "The end bone keeps its animated world rotation"),
)
SWIVEL_ITEMS = (
    ("LEAST_MOTION", "Least Motion", "Without a pole, the knee moves as little as possible"),
    (
        "END_PLANE",
        "End Plane",
        "Without a pole, the knee swivels so the whole limb lies in one plane with the end bone",
    ),
)
PLANE_ITEMS = (
    ("NONE", "None", "Solve in 3D: the knee or elbow may leave any plane"),
    (
        "SIDE",
        "Side (XZ)",
        "Keep the limb in the armature's XZ plane (normal along its Y axis), through the limb's first joint: "
        "a character walking along X seen side-on, or a 2D cut-out rig drawn in Blender's front view",
    ),
    (
        "FRONT",
        "Front (YZ)",
        "Keep the limb in the armature's YZ plane (normal along its X axis), through the limb's first joint: "
        "the plane a character facing -Y swings its legs in",
    ),
    ("CUSTOM", "Custom", "Keep the limb in the plane through its first joint whose normal is Plane Normal"),
)
#: Each plane's normal in the armature's space, in the order of ``PLANE_ITEMS`` (the custom one is the limb's).
PLANE_NORMALS = ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 0.0))
