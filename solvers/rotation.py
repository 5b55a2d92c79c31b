# SPDX-License-Identifier: GPL-3.0-or-later
"""Minimal rotation between two directions, as a unit quaternion (w, x, y, z)."""

import math

from .constants import IDENTITY
from .errors import SolverError

Quat = tuple[float, float, float, float]


def rotation_between(u, v) -> Quat:
    """The smallest rotation taking direction ``u`` to direction ``v`` (any lengths).

    The angle is ``atan2(|u x v|, u . v)``, which keeps its digits for tiny angles where
    ``acos(u . v)`` loses them. Parallel vectors give the identity; anti-parallel ones a half
    turn about an axis perpendicular to ``u``. A zero-length vector has no direction, so it
    gives the identity too. Non-finite input raises :class:`SolverError`.
    """
    ux, uy, uz = u
    vx, vy, vz = v
    if not math.isfinite(ux + uy + uz + vx + vy + vz):
        raise SolverError(f"rotation_between needs finite vectors, got {u} and {v}")
    nu = math.hypot(ux, uy, uz)
    nv = math.hypot(vx, vy, vz)
    if nu == 0.0 or nv == 0.0:
        return IDENTITY
    ux, uy, uz = ux / nu, uy / nu, uz / nu
    vx, vy, vz = vx / nv, vy / nv, vz / nv
    cx, cy, cz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    sin_angle = math.hypot(cx, cy, cz)
    cos_angle = ux * vx + uy * vy + uz * vz
    if sin_angle < 1e-15:
        if cos_angle > 0.0:
            return IDENTITY
        ax, ay, az = any_perpendicular((ux, uy, uz))
        return (0.0, ax, ay, az)
    half = 0.5 * math.atan2(sin_angle, cos_angle)
    if cos_angle < 0.0:
        # Nearly opposite: rounding leaves the axis along u by up to 1e-16 / sin_angle of its length,
        # which would tip a near half turn off v by twice that (1e-4 at 1e-12 rad); take that part out.
        k = cx * ux + cy * uy + cz * uz
        cx, cy, cz = cx - k * ux, cy - k * uy, cz - k * uz
        sin_angle = math.hypot(cx, cy, cz)
    s = math.sin(half) / sin_angle
    return (math.cos(half), cx * s, cy * s, cz * s)


def any_perpendicular(d) -> tuple[float, float, float]:
    """A unit vector perpendicular to the unit vector ``d``, chosen from the axis it is least aligned with."""
    dx, dy, dz = d
    ax, ay, az = abs(dx), abs(dy), abs(dz)
    if ax <= ay and ax <= az:  # cross with X
        px, py, pz = 0.0, dz, -dy
    elif ay <= az:  # cross with Y
        px, py, pz = -dz, 0.0, dx
    else:  # cross with Z
        px, py, pz = dy, -dx, 0.0
    n = math.sqrt(px * px + py * py + pz * pz)
    return (px / n, py / n, pz / n)


def quat_multiply(a: Quat, b: Quat) -> Quat:
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def quat_rotate(q: Quat, v) -> tuple[float, float, float]:
    """Rotate vector ``v`` by the unit quaternion ``q``."""
    w, x, y, z = q
    vx, vy, vz = v
    # v + 2w (q_xyz x v) + 2 q_xyz x (q_xyz x v)
    tx, ty, tz = 2.0 * (y * vz - z * vy), 2.0 * (z * vx - x * vz), 2.0 * (x * vy - y * vx)
    return (
        vx + w * tx + (y * tz - z * ty),
        vy + w * ty + (z * tx - x * tz),
        vz + w * tz + (x * ty - y * tx),
    )
