# SPDX-License-Identifier: GPL-3.0-or-later
"""How a chain behaves at the edge of its range: reach mode, soft IK, stretch and bend limits."""

import enum
import math
from dataclasses import dataclass, fields

from .constants import COORDINATE_LIMIT
from .errors import SolverError


class Reach(enum.IntEnum):
    """What a chain does when its target is out of range."""

    EXTEND = 0  #: straighten toward a far target; fold, longer bone first, toward a near one
    HOLD = 1  #: keep the current pose
    STRETCH = 2  #: scale both bones (up to ``max_stretch``), then extend


@dataclass(frozen=True, slots=True)
class ReachOptions:
    """Reach and hinge settings of one chain. Angles are in radians.

    ``min_bend``/``max_bend`` limit the angle between the two bones (0 = straight, pi = folded
    flat); ``softness`` is a distance: the effector eases in exponentially over the last
    ``softness`` of the chain's reach, so the knee never snaps straight (0 = off).
    ``stretch_start`` is the fraction of full reach at which STRETCH begins scaling the bones (or the
    shortest reach, if that is longer), so STRETCH reaches every target EXTEND reaches.
    """

    mode: Reach = Reach.EXTEND
    softness: float = 0.0
    max_stretch: float = 1.0
    stretch_start: float = 1.0
    min_bend: float = 0.0
    max_bend: float = math.pi

    def __post_init__(self):
        try:  # stored as the enum member itself, so the solvers can compare by identity
            object.__setattr__(self, "mode", Reach(self.mode))
        except ValueError:
            raise SolverError(f"reach mode must be one of {[m.name for m in Reach]}, not {self.mode!r}") from None
        if not 0.0 <= self.softness < COORDINATE_LIMIT:
            raise SolverError(f"softness must be a finite distance of zero or more, not {self.softness}")
        if not 1.0 <= self.max_stretch < COORDINATE_LIMIT:
            raise SolverError(f"max_stretch must be 1 or more, not {self.max_stretch}")
        if not 0.0 < self.stretch_start <= 1.0:
            raise SolverError(f"stretch_start must be in (0, 1], not {self.stretch_start}")
        if not 0.0 <= self.min_bend <= self.max_bend <= math.pi:
            raise SolverError(
                f"bend limits must satisfy 0 <= min_bend <= max_bend <= pi, not {self.min_bend}, {self.max_bend}"
            )


DEFAULT_OPTIONS = ReachOptions()
#: Each setting's default by name, for the solvers that take the settings as keywords, one value or one per limb.
REACH_DEFAULTS = {field.name: field.default for field in fields(ReachOptions)}


def reach_settings(given: dict) -> dict:
    """Every reach setting by name: those ``given``, the defaults for the others. A name that is not a setting (a
    misspelt one would otherwise be left at its default unseen) raises TypeError, as an unknown keyword does."""
    unknown = given.keys() - REACH_DEFAULTS.keys()
    if unknown:
        raise TypeError(f"unknown reach settings {sorted(unknown)}: the settings are {list(REACH_DEFAULTS)}")
    return {**REACH_DEFAULTS, **given}
