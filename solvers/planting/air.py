# SPDX-License-Identifier: GPL-3.0-or-later
"""A leg in the air bends as it was animated, give or take a difference that eases from what it
was at take-off to what it will be at landing. Where a standing leg had to bend more (or less)
than animated, the knee carries that into the swing and lets it go smoothly, instead of turning
fast wherever the animation swings the leg straight."""

import numpy as np

from .timeline import intervals, smoothstep


def bend(distance, thigh, shin) -> np.ndarray:
    """The knee's bend (radians, 0 = straight) of a leg whose hip and ankle are ``distance`` apart."""
    cos = (thigh * thigh + shin * shin - np.asarray(distance) ** 2) / (2.0 * thigh * shin)
    return np.pi - np.arccos(np.clip(cos, -1.0, 1.0))


def extension(angle, thigh, shin) -> np.ndarray:
    """The hip-to-ankle distance of a leg bent by ``angle`` (radians)."""
    return np.sqrt(np.maximum(thigh * thigh + shin * shin + 2.0 * thigh * shin * np.cos(angle), 0.0))


def bend_in_air(held, standing, hips, ankles, animated, thigh, shin, longest) -> np.ndarray:
    """One leg's (F, 3) ankles, moved along the line from the (F, 3) ``hips`` on the frames it is
    not ``held`` (F,), so that its bend (with ``thigh`` and ``shin`` lengths (F,)) differs from the
    ``animated`` bend (from the animated hip-to-ankle distances (F,)) by an amount easing from
    take-off to landing (held as it was where the take starts or ends in the air); never farther
    than ``longest`` (F,) from the hip. Where the motion has the foot ``standing`` (F,) though it is not
    held (hanging over an edge), the ankle moves straight up or down instead, so the foot does not slide."""
    ankles = np.array(ankles, dtype=np.float64)
    frames = len(held)
    if not np.asarray(held, bool).any():
        return ankles
    apart = ankles - hips
    distance = np.linalg.norm(apart, axis=1)
    difference = bend(distance, thigh, shin) - bend(animated, thigh, shin)
    for first, last in intervals(~np.asarray(held, bool)):
        before = difference[first - 1 if first > 0 else last + 1]
        after = difference[last + 1 if last < frames - 1 else first - 1]
        span = slice(first, last + 1)
        u = smoothstep((np.arange(first, last + 1) - first + 1) / (last - first + 2))
        wanted = bend(animated[span], thigh[span], shin[span]) + before + u * (after - before)
        extent = np.minimum(extension(np.clip(wanted, 0.0, np.pi), thigh[span], shin[span]), longest[span])
        direction = apart[span] / np.maximum(distance[span], 1e-12)[:, None]
        moved = hips[span] + direction * extent[:, None]
        across = np.linalg.norm(apart[span, :2], axis=1)
        upright = np.asarray(standing, bool)[span] & (extent > across)
        moved[upright, :2] = ankles[span][upright, :2]
        moved[upright, 2] = hips[span][upright, 2] - np.sqrt(extent[upright] ** 2 - across[upright] ** 2)
        ankles[span] = moved
    return ankles
