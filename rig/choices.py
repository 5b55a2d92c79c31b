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
