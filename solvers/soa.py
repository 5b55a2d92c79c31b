# SPDX-License-Identifier: GPL-3.0-or-later
"""Small-vector maths on structure-of-arrays, for solving many limbs at once.

A vector is a tuple of three 1-D float64 arrays ``(x, y, z)``, a 3x3 matrix a tuple of nine in
row-major order, a quaternion a tuple of four ``(w, x, y, z)``. Each array holds one component
for every limb, so each operation is a handful of numpy calls that run at memory speed, with no
per-limb Python and no small-matrix routines.
"""

import numpy as np

Vec = tuple[np.ndarray, np.ndarray, np.ndarray]
Mat = tuple[np.ndarray, ...]  # nine arrays, row-major
Quat = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def split(array: np.ndarray) -> tuple[np.ndarray, ...]:
    """An (N, k) array as k contiguous float64 component arrays."""
    columns = np.ascontiguousarray(np.asarray(array, dtype=np.float64).T)
    return tuple(columns)


def join(components) -> np.ndarray:
    """k component arrays back into one (N, k) array."""
    return np.stack(components, axis=-1)


def split_matrices(array: np.ndarray) -> Mat:
    """An (N, 3, 3) array as nine row-major component arrays."""
    return split(np.asarray(array, dtype=np.float64).reshape(-1, 9))


def join_matrices(m: Mat) -> np.ndarray:
    return join(m).reshape(-1, 3, 3)


def add(a: Vec, b: Vec) -> Vec:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def sub(a: Vec, b: Vec) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def scale(a: Vec, s) -> Vec:
    return (a[0] * s, a[1] * s, a[2] * s)


def dot(a: Vec, b: Vec) -> np.ndarray:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a: Vec) -> np.ndarray:
    return np.sqrt(dot(a, a))


def where(mask: np.ndarray, a, b) -> tuple[np.ndarray, ...]:
    """Component-wise choice between two vectors (or quaternions) of the same kind."""
    return tuple(np.where(mask, x, y) for x, y in zip(a, b))


def unit_or_zero(a: Vec, eps) -> tuple[Vec, np.ndarray]:
    """``a`` normalised where its length exceeds ``eps`` (zero elsewhere), and that mask."""
    n = norm(a)
    ok = n > eps
    safe = np.where(ok, n, 1.0)  # divided, not multiplied by 1 / n: bit for bit what the scalar solvers do
    return tuple(np.where(ok, c / safe, 0.0) for c in a), ok


def unit_scaled(a: Vec) -> tuple[Vec, np.ndarray]:
    """``a`` at length 1 where it is not zero (zero elsewhere), and that mask. Divided by its largest
    component first, so that a vector as short as 1e-300, whose squares underflow, keeps its direction."""
    big = np.maximum(np.maximum(np.abs(a[0]), np.abs(a[1])), np.abs(a[2]))
    ok = big > 0.0
    safe = np.where(ok, big, 1.0)
    return unit_or_zero((a[0] / safe, a[1] / safe, a[2] / safe), 0.0)[0], ok


def any_perpendicular(d: Vec) -> Vec:
    """A unit vector perpendicular to each unit ``d``, crossed with the axis it is least aligned with."""
    ax, ay, az = np.abs(d[0]), np.abs(d[1]), np.abs(d[2])
    use_x = (ax <= ay) & (ax <= az)
    use_y = ~use_x & (ay <= az)
    zero = np.zeros_like(d[0])
    p = (
        np.where(use_x, zero, np.where(use_y, -d[2], d[1])),
        np.where(use_x, d[2], np.where(use_y, zero, -d[0])),
        np.where(use_x, -d[1], np.where(use_y, d[0], zero)),
    )
    return scale(p, 1.0 / norm(p))


def mat_vec(m: Mat, v: Vec) -> Vec:
    return (
        m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
        m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
        m[6] * v[0] + m[7] * v[1] + m[8] * v[2],
    )


def mat_mul(a: Mat, b: Mat) -> Mat:
    return tuple(
        a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] + a[3 * r + 2] * b[6 + c] for r in range(3) for c in range(3)
    )


def mat_transpose(m: Mat) -> Mat:
    return (m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8])


def mat_scale_columns(m: Mat, s: Vec) -> Mat:
    """``m @ diag(s)``."""
    return (m[0] * s[0], m[1] * s[1], m[2] * s[2], m[3] * s[0], m[4] * s[1], m[5] * s[2],
            m[6] * s[0], m[7] * s[1], m[8] * s[2])  # fmt: skip


def mat_det(m: Mat) -> np.ndarray:
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6])


def mat_inv(m: Mat) -> tuple[Mat, np.ndarray]:
    """Inverse by cofactors, and the determinant (the inverse is meaningless where it is zero)."""
    c0 = m[4] * m[8] - m[5] * m[7]
    c1 = m[5] * m[6] - m[3] * m[8]
    c2 = m[3] * m[7] - m[4] * m[6]
    det = m[0] * c0 + m[1] * c1 + m[2] * c2
    inv_det = np.divide(1.0, det, out=np.zeros_like(det), where=det != 0.0)
    inverse = (
        c0 * inv_det,
        (m[2] * m[7] - m[1] * m[8]) * inv_det,
        (m[1] * m[5] - m[2] * m[4]) * inv_det,
        c1 * inv_det,
        (m[0] * m[8] - m[2] * m[6]) * inv_det,
        (m[2] * m[3] - m[0] * m[5]) * inv_det,
        c2 * inv_det,
        (m[1] * m[6] - m[0] * m[7]) * inv_det,
        (m[0] * m[4] - m[1] * m[3]) * inv_det,
    )
    return inverse, det


def quat_mul(a: Quat, b: Quat) -> Quat:
    """Hamilton product ``a * b``."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def quat_rotate(q: Quat, v: Vec) -> Vec:
    """Rotate ``v`` by the unit quaternion ``q``."""
    w, qv = q[0], (q[1], q[2], q[3])
    t = scale(cross(qv, v), 2.0)
    return add(add(v, scale(t, w)), cross(qv, t))


def quat_to_mat(q: Quat) -> Mat:
    """Rotation matrix of the unit quaternion ``q``."""
    w, x, y, z = q
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    return (
        1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
        2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
        2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy),
    )  # fmt: skip


def mat_to_quat(m: Mat) -> Quat:
    """Unit quaternion of the rotation matrix ``m``, by the largest-diagonal branch (Shepperd)."""
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = m
    trace = m00 + m11 + m22
    # Four candidate formulas; each is accurate where its denominator is largest.
    cand = np.stack([trace, m00, m11, m22])
    pick = np.argmax(cand, axis=0)
    s = np.sqrt(np.maximum(1.0 + np.choose(pick, [trace, m00 - m11 - m22, m11 - m00 - m22, m22 - m00 - m11]), 1e-300))
    half = 0.5 * s
    inv = 0.5 / s
    w = np.choose(pick, [half, (m21 - m12) * inv, (m02 - m20) * inv, (m10 - m01) * inv])
    x = np.choose(pick, [(m21 - m12) * inv, half, (m01 + m10) * inv, (m02 + m20) * inv])
    y = np.choose(pick, [(m02 - m20) * inv, (m01 + m10) * inv, half, (m12 + m21) * inv])
    z = np.choose(pick, [(m10 - m01) * inv, (m02 + m20) * inv, (m12 + m21) * inv, half])
    n = np.sqrt(w * w + x * x + y * y + z * z)
    return (w / n, x / n, y / n, z / n)


def rotation_between(u: Vec, v: Vec) -> Quat:
    """Smallest rotation taking each ``u`` to each ``v`` (see :func:`..rotation.rotation_between`).

    Angle by ``atan2(|u x v|, u . v)``; parallel gives the identity, anti-parallel a half turn
    about an axis perpendicular to ``u``, a zero vector the identity.
    """
    u, u_ok = unit_scaled(u)  # normalised first: no product of two lengths to underflow or overflow
    v, v_ok = unit_scaled(v)
    ok = u_ok & v_ok
    c = cross(u, v)
    sin_angle = norm(c)
    cos_angle = dot(u, v)
    half = 0.5 * np.arctan2(sin_angle, cos_angle)
    general = sin_angle >= 1e-15
    # Nearly opposite: take out the part of the axis along u that rounding leaves (see the scalar version).
    opposed = general & (cos_angle < 0.0)
    c = sub(c, scale(u, np.where(opposed, dot(c, u), 0.0)))
    length = np.where(opposed, norm(c), sin_angle)
    k = np.divide(np.sin(half), length, out=np.zeros_like(half), where=general)
    w = np.where(general, np.cos(half), 1.0)
    x, y, z = c[0] * k, c[1] * k, c[2] * k
    opposite = ok & ~general & (cos_angle < 0.0)
    if opposite.any():
        p = any_perpendicular(where(opposite, u, (np.ones_like(w), np.zeros_like(w), np.zeros_like(w))))
        w = np.where(opposite, 0.0, w)
        x, y, z = (np.where(opposite, pc, qc) for pc, qc in zip(p, (x, y, z)))
    w = np.where(ok, w, 1.0)
    return (w, np.where(ok, x, 0.0), np.where(ok, y, 0.0), np.where(ok, z, 0.0))
