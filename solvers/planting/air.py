# SPDX-License-Identifier: GPL-3.0-or-later
"""A leg in the air bends as it was animated, give or take a difference that eases from what it
was at take-off to what it will be at landing. Where a standing leg had to bend more (or less)
than animated, the knee carries that into the swing and lets it go smoothly, instead of turning
fast wherever the animation swings the leg straight."""

import numpy as np

from .timeline import bridges, intervals

#: Metres into what a foot passes that count as in it (less is rounding).
CLEAR = 1e-4


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
    take-off to landing (from or to the animated bend where the take starts or ends in the air); never farther
    than ``longest`` (F,) from the hip. Where the motion has the foot ``standing`` (F,) though it is not
    held (hanging over an edge), the ankle moves straight up or down instead, so the foot does not slide."""
    ankles = np.array(ankles, dtype=np.float64)
    if not np.asarray(held, bool).any():
        return ankles
    apart = ankles - hips
    distance = np.linalg.norm(apart, axis=1)
    difference = bend(distance, thigh, shin) - bend(animated, thigh, shin)
    for first, last, before, after, u in bridges(held):
        span = slice(first, last + 1)
        start = difference[before] if first > 0 else 0.0
        end = difference[after] if last < len(held) - 1 else 0.0
        eased = start + u * (end - start)
        wanted = bend(animated[span], thigh[span], shin[span]) + eased
        extent = np.minimum(extension(np.clip(wanted, 0.0, np.pi), thigh[span], shin[span]), longest[span])
        direction = apart[span] / np.maximum(distance[span], 1e-12)[:, None]
        moved = hips[span] + direction * extent[:, None]
        across = np.linalg.norm(apart[span, :2], axis=1)
        upright = np.asarray(standing, bool)[span] & (extent > across)
        moved[upright, :2] = ankles[span][upright, :2]
        moved[upright, 2] = hips[span][upright, 2] - np.sqrt(extent[upright] ** 2 - across[upright] ** 2)
        ankles[span] = moved
    return ankles


def beyond(hips, ankles, animated, thigh, shin) -> np.ndarray:
    """How much more (radians; negative: less) a knee bends with its ankles at ``ankles`` from its ``hips`` (F, 3)
    than at the ``animated`` hip-to-ankle distances (F,), with ``thigh`` and ``shin`` lengths (F,)."""
    distance = np.linalg.norm(np.asarray(hips) - np.asarray(ankles), axis=1)
    return bend(distance, thigh, shin) - bend(animated, thigh, shin)


def gentle_knees(held, hips, ankles, animated, thigh, shin, most: float, least=None) -> np.ndarray:
    """One leg's (F, 3) offsets that move its ankle (``ankles`` (F, 3), as it will be: lifted over what it passes)
    along the line from its hip (``hips`` (F, 3)) on the frames it is not ``held`` (F,), so that the knee's bend
    beyond the ``animated`` one (from the animated hip-to-ankle distances (F,), with ``thigh`` and ``shin`` lengths
    (F,)) turns by at most ``most`` (radians) a frame, or as little as going from take-off to landing allows: kept
    within what reaches both from there, and bent early where it would bend at once (a foot lifted over rising
    ground). ``least`` (F,), if given, is the bend beyond the animated one a frame in the air needs at the least
    (-inf: none): the knee bends to it from take-off and from landing no faster than it must to get there. Zero
    where nothing needs it."""
    held = np.asarray(held, bool)
    hips, ankles = np.asarray(hips, np.float64), np.asarray(ankles, np.float64)
    wanted = bend(animated, thigh, shin)
    more = beyond(hips, ankles, animated, thigh, shin)
    offsets = np.zeros_like(ankles)
    frames = len(held)
    for first, last in intervals(~held):
        span = np.arange(max(first - 1, 0), min(last + 2, frames))
        ends = [end for end in (first - 1, last + 1) if 0 <= end < frames]
        rate = most
        if len(ends) == 2:
            rate = max(most, abs(more[ends[1]] - more[ends[0]]) / (ends[1] - ends[0]))
        # Within what turns no faster than that from each end, then the least bend above it that does.
        kept = more[span].copy()
        for end in ends:
            kept = np.clip(kept, more[end] - rate * np.abs(span - end), more[end] + rate * np.abs(span - end))
        gentle = np.maximum(  # the least bend at or above it that turns no faster: max over k of kept(k) - rate |f - k|
            np.maximum.accumulate(kept + rate * span) - rate * span,
            np.maximum.accumulate((kept - rate * span)[::-1])[::-1] + rate * span,
        )
        if least is not None:  # no less than a bend it needs, reached from take-off and landing no faster than it must
            for k in span[~held[span] & np.isfinite(least[span])]:
                steep = [max(rate, (least[k] - more[end]) / abs(k - end)) for end in ends]
                ramp = np.where(
                    span <= k,
                    least[k] - steep[0] * (k - span) if first > 0 else -np.inf,
                    least[k] - steep[-1] * (span - k) if last < frames - 1 else -np.inf,
                )
                gentle = np.maximum(gentle, ramp)
        air = (span >= first) & (span <= last)
        moving = span[air & (np.abs(gentle - more[span]) > 1e-9)]
        if not len(moving):
            continue
        turned = gentle[moving - span[0]] + wanted[moving]
        reach = extension(np.clip(turned, 0.0, np.pi), thigh[moving], shin[moving])
        apart = ankles[moving] - hips[moving]
        distance = np.linalg.norm(apart, axis=1)
        offsets[moving] = apart * (reach / np.maximum(distance, 1e-12) - 1.0)[:, None]
    return offsets


def gentle_swing(held, hips, ankles, animated, thigh, shin, most: float, sinking) -> tuple[np.ndarray, np.ndarray]:
    """:func:`gentle_knees`' (F, 3) offsets for one leg, and how far (F,) its foot so moved still goes into what it
    passes (``sinking(offsets)``: (F,) how far the foot moved by (F, 3) offsets must rise to clear it). Where a knee
    turning gently would take the foot into something, the foot rises straight up just clear of it there, and the
    knee bends to that from take-off and landing as gently as it can, faster than ``most`` only where it must."""
    held = np.asarray(held, bool)
    offsets = gentle_knees(held, hips, ankles, animated, thigh, shin, most)
    if not offsets.any():
        return offsets, np.zeros(len(held))
    need = sinking(offsets)
    short = (need > CLEAR) & ~held
    if short.any():
        clear = ankles + offsets
        clear[short, 2] += need[short]
        least = np.where(short, beyond(hips, clear, animated, thigh, shin), -np.inf)
        offsets = gentle_knees(held, hips, ankles, animated, thigh, shin, most, least)
        binding = short & (beyond(hips, ankles + offsets, animated, thigh, shin) <= least + 1e-9)
        offsets[binding] = (clear - ankles)[binding]
        need = sinking(offsets)
    return offsets, need
