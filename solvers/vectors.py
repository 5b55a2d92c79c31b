# SPDX-License-Identifier: GPL-3.0-or-later
"""Vectors, 3x3 matrices and quaternions, component by component: for many limbs at once, and for one.

A vector is a tuple of three 1-D float64 arrays ``(x, y, z)``, a 3x3 matrix a tuple of nine in
row-major order, a quaternion a tuple of four ``(w, x, y, z)``. Each array holds one component
for every limb, so each operation is a handful of numpy calls that run at memory speed, with no
per-limb Python and no small-matrix routines. The arithmetic (:func:`add`, :func:`sub`, :func:`dot`,
:func:`cross`, :func:`norm`, the ``mat_`` and ``quat_`` functions, :func:`nearest_rotation`, :func:`slerp`)
works on one limb's Python floats as well, which the scalar solvers (:mod:`.scalar_chains`) use: where numpy
and floats need different calls (a square root, a choice, a zero test) a function tells them apart by type,
and a float stays a float.

Callers work through many limbs a block of rows at a time (:func:`blocks`), so that the arrays
of one block stay in the processor's cache. Rare cases (zero vectors, opposite directions)
are tested for once per block and only then patched in with ``np.where``: a choice costs as
much as four multiplications, and a block seldom holds a row that needs one.
"""

import math
from collections.abc import Iterator

import numpy as np

from .constants import IDENTITY
from .errors import SolverError
from .rotation import quat_multiply as quat_mul  # noqa: F401 (the same arithmetic, component-wise on arrays)
from .rotation import quat_rotate  # noqa: F401

Vec = tuple[np.ndarray, np.ndarray, np.ndarray]
Mat = tuple[np.ndarray, ...]  # nine arrays, row-major
Quat = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: Bytes of rows a transposing copy reads at once: it reads each row's components many times over, and
#: is up to twice as fast when the rows it spans stay in the processor's cache.
TRANSPOSE_BYTES = 1 << 20


def blocks(rows: int, size: int) -> Iterator[slice]:
    """Consecutive slices of at most ``size`` rows covering ``rows`` rows."""
    return (slice(start, start + size) for start in range(0, rows, size))


def components(array: np.ndarray) -> np.ndarray:
    """An (N, ...) array as one contiguous float64 (..., N) array, whose entries are component arrays:
    one transposing copy, whatever the strides of ``array``."""
    array = np.asarray(array, dtype=np.float64)
    rows = max(TRANSPOSE_BYTES // max(abs(array.strides[0]), 1), 1) if array.ndim else 1
    if len(array) <= rows:
        return np.ascontiguousarray(np.moveaxis(array, 0, -1))
    out = np.empty((*array.shape[1:], len(array)))
    for part in blocks(len(array), rows):
        np.copyto(out[..., part], np.moveaxis(array[part], 0, -1))
    return out


def finite(array: np.ndarray) -> bool:
    """Whether every entry of ``array`` is finite: by its sum, which is, unless an entry is not or the sum
    overflows (then entry by entry)."""
    return bool(np.isfinite(np.sum(array))) or bool(np.isfinite(array).all())


def split(array: np.ndarray) -> tuple[np.ndarray, ...]:
    """An (N, k) array as k contiguous float64 component arrays."""
    return tuple(components(array))


def join(components, out: np.ndarray | None = None) -> np.ndarray:
    """k component arrays back into one (N, k) array, or into ``out``."""
    return np.stack(components, axis=-1, out=out)


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
    square = a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
    return math.sqrt(square) if isinstance(square, float) else np.sqrt(square)  # a float stays a float


def where(mask: np.ndarray, a, b) -> tuple[np.ndarray, ...]:
    """Component-wise choice between two vectors (or quaternions) of the same kind."""
    return tuple(np.where(mask, x, y) for x, y in zip(a, b))


def unit_or_zero(a: Vec, eps) -> tuple[Vec, np.ndarray]:
    """``a`` normalised where its length exceeds ``eps`` (zero elsewhere), and that mask."""
    n = norm(a)
    ok = n > eps
    # Divided, not multiplied by 1 / n: bit for bit what the scalar solvers do.
    if ok.all():
        return (a[0] / n, a[1] / n, a[2] / n), ok
    safe = np.where(ok, n, 1.0)
    return tuple(np.where(ok, c / safe, 0.0) for c in a), ok


def unit_scaled(a: Vec) -> tuple[Vec, np.ndarray]:
    """``a`` at length 1 where it is not zero (zero elsewhere), and that mask. Divided by its largest
    component first, so that a vector as short as 1e-300, whose squares underflow, keeps its direction."""
    big = np.maximum(np.maximum(np.abs(a[0]), np.abs(a[1])), np.abs(a[2]))
    ok = big > 0.0
    if not ok.all():
        big = np.where(ok, big, 1.0)  # zero stays zero, and unit_or_zero leaves it so
    return unit_or_zero((a[0] / big, a[1] / big, a[2] / big), 0.0)[0], ok


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
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    return (
        a0 * b0 + a1 * b3 + a2 * b6,
        a0 * b1 + a1 * b4 + a2 * b7,
        a0 * b2 + a1 * b5 + a2 * b8,
        a3 * b0 + a4 * b3 + a5 * b6,
        a3 * b1 + a4 * b4 + a5 * b7,
        a3 * b2 + a4 * b5 + a5 * b8,
        a6 * b0 + a7 * b3 + a8 * b6,
        a6 * b1 + a7 * b4 + a8 * b7,
        a6 * b2 + a7 * b5 + a8 * b8,
    )


def mat_transpose(m: Mat) -> Mat:
    return (m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8])


def mat_scale_columns(m: Mat, s: Vec) -> Mat:
    """``m @ diag(s)``."""
    return (
        m[0] * s[0],
        m[1] * s[1],
        m[2] * s[2],
        m[3] * s[0],
        m[4] * s[1],
        m[5] * s[2],
        m[6] * s[0],
        m[7] * s[1],
        m[8] * s[2],
    )


def mat_det(m: Mat) -> np.ndarray:
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6])


def mat_inv(m: Mat) -> tuple[Mat, np.ndarray]:
    """Inverse by cofactors, and the determinant (the inverse is meaningless where it is zero, and zero in floats)."""
    c0 = m[4] * m[8] - m[5] * m[7]
    c1 = m[5] * m[6] - m[3] * m[8]
    c2 = m[3] * m[7] - m[4] * m[6]
    det = m[0] * c0 + m[1] * c1 + m[2] * c2
    if isinstance(det, float):  # one matrix in floats
        inv_det = 1.0 / det if det != 0.0 else 0.0
    else:
        invertible = det != 0.0
        inv_det = 1.0 / det if invertible.all() else np.divide(1.0, det, out=np.zeros_like(det), where=invertible)
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


def mat_columns(m: Mat) -> tuple[Vec, Vec, Vec]:
    """The three columns of ``m`` as vectors."""
    return (m[0], m[3], m[6]), (m[1], m[4], m[7]), (m[2], m[5], m[8])


def nearest_rotation(m: Mat) -> Mat:
    """Nearest rotation to each matrix (polar decomposition), one in floats or many in arrays. A rotation times a
    uniform or axis-aligned scale (nearly every object and bone) needs only its columns normalised, then two
    Newton steps ``X <- (X + X^-T) / 2`` to take out rounding (Blender's single-precision pose matrices are
    orthogonal to about 1e-5); a sheared, mirrored or flat matrix goes through an SVD."""
    one = isinstance(m[0], float)
    a, b, c = map(norm, mat_columns(m))
    if one:
        if not (a > 0.0 and b > 0.0 and c > 0.0):  # a zero column stays zero
            a, b, c = (length if length > 0.0 else 1.0 for length in (a, b, c))
    elif not ((a > 0.0) & (b > 0.0) & (c > 0.0)).all():
        a, b, c = (np.where(length > 0.0, length, 1.0) for length in (a, b, c))
    x = (m[0] / a, m[1] / b, m[2] / c, m[3] / a, m[4] / b, m[5] / c, m[6] / a, m[7] / b, m[8] / c)
    a, b, c = mat_columns(x)
    # Unit columns at right angles (to 1e-3) with a positive determinant; a zero column has none.
    skew = [abs(dot(a, b)), abs(dot(a, c)), abs(dot(b, c))]
    skew = max(skew) if one else np.maximum(np.maximum(skew[0], skew[1]), skew[2])
    irregular = (skew > 1e-3) | (mat_det(x) <= 0.0)
    if one and irregular:
        return tuple(_polar(np.array(m).reshape(1, 3, 3))[0].tolist())
    for _ in range(2):  # X + X^-T, halved; quadratic convergence: 1e-3 -> 1e-6 -> 1e-12
        i = mat_inv(x)[0]
        x = (
            0.5 * (x[0] + i[0]),
            0.5 * (x[1] + i[3]),
            0.5 * (x[2] + i[6]),
            0.5 * (x[3] + i[1]),
            0.5 * (x[4] + i[4]),
            0.5 * (x[5] + i[7]),
            0.5 * (x[6] + i[2]),
            0.5 * (x[7] + i[5]),
            0.5 * (x[8] + i[8]),
        )
    if not one and irregular.any():
        rows = np.flatnonzero(irregular)
        polar = _polar(np.stack([e[rows] for e in m], axis=-1).reshape(-1, 3, 3))
        for i, e in enumerate(x):  # fresh arrays of the Newton steps
            e[rows] = polar[:, i]
    return x


def _polar(matrices: np.ndarray) -> np.ndarray:
    """(n, 9) the rotations nearest to (n, 3, 3) ``matrices``, row-major: the polar factors of their SVDs."""
    u, _, vt = np.linalg.svd(matrices)
    u[np.linalg.det(u @ vt) < 0.0, :, 2] *= -1.0
    return (u @ vt).reshape(-1, 9)


def quat_unit(q: Quat) -> Quat:
    """``q`` at unit length, one quaternion in floats or many in arrays; raises :class:`.SolverError` where it
    is zero."""
    square = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    if isinstance(square, float):  # math.sqrt keeps a float a float: np.sqrt would slow every step after it
        n = math.sqrt(square)
        if not n > 0.0:
            raise SolverError("rotation quaternions must not be zero")
    else:
        n = np.sqrt(square)
        if not (n > 0.0).all():
            raise SolverError("rotation quaternions must not be zero")
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


def quat_conjugate(q: Quat) -> Quat:
    """The inverse rotation of the unit quaternion ``q``."""
    return (q[0], -q[1], -q[2], -q[3])


def quat_to_mat(q: Quat) -> Mat:
    """Rotation matrix of the unit quaternion ``q``."""
    w, x, y, z = q
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    return (
        1.0 - 2.0 * (yy + zz),
        2.0 * (xy - wz),
        2.0 * (xz + wy),
        2.0 * (xy + wz),
        1.0 - 2.0 * (xx + zz),
        2.0 * (yz - wx),
        2.0 * (xz - wy),
        2.0 * (yz + wx),
        1.0 - 2.0 * (xx + yy),
    )


def mat_to_quat(m: Mat) -> Quat:
    """Unit quaternion of the rotation matrix ``m``, by the largest-diagonal branch (Shepperd); one matrix in
    floats, or many in arrays."""
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = m
    trace = m00 + m11 + m22
    # Each branch gives the quaternion times four times its largest component, which keeps it
    # accurate; that factor is normalised away at the end.
    a, b, c = m21 - m12, m02 - m20, m10 - m01
    diagonal = (trace, m00, m11, m22)
    one = isinstance(trace, float)
    if one:
        largest = max(diagonal)
        w_largest = trace == largest
    else:
        w_largest = ((trace >= m00) & (trace >= m11) & (trace >= m22)).all()
    if w_largest:  # turns up to 120 degrees
        return quat_unit((1.0 + trace, a, b, c))
    d, e, f = m01 + m10, m02 + m20, m12 + m21
    # Row i: the branch of diagonal entry i and, the table being symmetric, component i of each branch.
    table = (
        (1.0 + trace, a, b, c),
        (a, 1.0 + m00 - m11 - m22, d, e),
        (b, d, 1.0 - m00 + m11 - m22, f),
        (c, e, f, 1.0 - m00 - m11 + m22),
    )
    if one:
        return quat_unit(table[diagonal.index(largest)])  # the first of equals, as np.argmax takes it
    pick = np.argmax(np.stack(diagonal), axis=0)
    return quat_unit(tuple(np.choose(pick, row) for row in table))


HALF_TURN = 1e-9  #: a cosine this close to 0 between two quaternions: half a turn apart, either way as short


def _largest_component(q: Quat):
    """Each quaternion's component of largest magnitude, with its sign (floats or arrays)."""
    if isinstance(q[0], float):
        return max(q, key=abs)
    stacked = np.stack(np.broadcast_arrays(*q))
    return np.take_along_axis(stacked, np.abs(stacked).argmax(axis=0)[None], axis=0)[0]


def slerp(a: Quat, b: Quat, t) -> Quat:
    """Spherical interpolation from each unit ``a`` to each unit ``b`` by ``t`` (array or scalar), along the
    shorter arc, at unit length; one pair in floats, or many in arrays. ``t`` = 1 (nearly every limb's
    influence) gives ``b`` on ``a``'s side, and needs ``a`` only for that side: any length will do there."""
    cos_angle = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
    one = isinstance(cos_angle, float)
    flip = cos_angle < 0.0
    # At a half turn both arcs are as short, and the sign of a cosine of rounding size (``b`` or ``-b`` from
    # the same solve) would choose between them: choose by ``b`` itself instead (its largest component
    # positive), so that either sign of the same rotation blends the same way.
    tie = (abs(cos_angle) < HALF_TURN) if one else (np.abs(cos_angle) < HALF_TURN)
    if tie if one else tie.any():
        largest = _largest_component(b)
        flip = largest < 0.0 if one else np.where(tie, largest < 0.0, flip)
    if flip if one else flip.any():  # the same rotation on a's side: negation is exact, so the cosine only changes sign
        b = (-b[0], -b[1], -b[2], -b[3]) if one else tuple(np.where(flip, -c, c) for c in b)
        cos_angle = abs(cos_angle)
    if t == 1.0 if one else np.all(t == 1.0):
        return b
    if one:  # math's acos, not np.arccos: it keeps a float a float, and the scalar kernel's results as they were
        angle = math.acos(min(cos_angle, 1.0))
        sin_angle = math.sin(angle)
        if sin_angle < 1e-9:
            wa, wb = 1.0 - t, t
        else:
            wa, wb = math.sin((1.0 - t) * angle) / sin_angle, math.sin(t * angle) / sin_angle
    else:
        angle = np.arccos(np.minimum(cos_angle, 1.0))
        sin_angle = np.sin(angle)
        small = sin_angle < 1e-9
        safe = np.where(small, 1.0, sin_angle)
        wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * angle) / safe)
        wb = np.where(small, t, np.sin(t * angle) / safe)
    return quat_unit((wa * a[0] + wb * b[0], wa * a[1] + wb * b[1], wa * a[2] + wb * b[2], wa * a[3] + wb * b[3]))


def rotation_between(u: Vec, v: Vec) -> Quat:
    """Smallest rotation taking each ``u`` to each ``v`` (see :func:`..rotation.rotation_between`).

    The same angle, ``atan2(|u x v|, u . v)``, but by half-angle identities: in numpy an ``arctan2``,
    a ``sin`` or a ``cos`` costs as much as thirty multiplications. Each identity is used where it
    keeps its digits: ``cos(h) = sqrt((1 + cos) / 2)`` for an acute angle, ``sin(h) = sqrt((1 - cos) / 2)``
    for an obtuse one, and the other from ``|u x v| = 2 sin(h) cos(h)``. Parallel gives the identity,
    anti-parallel a half turn about an axis perpendicular to ``u``, a zero vector the identity.
    """
    u, v, ok = _unit_pair(u, v)  # normalised first: no product of two lengths to underflow or overflow
    axis = cross(u, v)
    cos_angle = dot(u, v)
    root = np.sqrt(0.5 * (1.0 + np.abs(cos_angle)))  # cos(h) where acute, sin(h) where obtuse
    acute = cos_angle >= 0.0
    if acute.all():  # sin(h) / |u x v| is 1 / (2 cos(h)): no length needed, parallel gives the identity
        k = 0.5 / root
        q = (root, axis[0] * k, axis[1] * k, axis[2] * k)
    else:
        q = _acute_or_obtuse(u, axis, root, acute)
    if not ok.all():
        q = where(ok, q, IDENTITY)
    return q


def _unit_pair(u: Vec, v: Vec) -> tuple[Vec, Vec, np.ndarray]:
    """``u`` and ``v`` normalised, and where neither is zero. Lengths whose squares neither underflow
    nor overflow (nearly always) are divided out directly, others by :func:`unit_scaled`."""
    uu, vv = dot(u, u), dot(v, v)
    smallest, largest = min(uu.min(initial=1.0), vv.min(initial=1.0)), max(uu.max(initial=1.0), vv.max(initial=1.0))
    if smallest > 1e-200 and largest < 1e200:  # false for NaN too
        nu, nv = np.sqrt(uu), np.sqrt(vv)
        return (u[0] / nu, u[1] / nu, u[2] / nu), (v[0] / nv, v[1] / nv, v[2] / nv), np.ones(len(uu), bool)
    u, u_ok = unit_scaled(u)
    v, v_ok = unit_scaled(v)
    return u, v, u_ok & v_ok


def _acute_or_obtuse(u: Vec, axis: Vec, root: np.ndarray, acute: np.ndarray) -> Quat:
    """:func:`rotation_between` for a block that holds obtuse angles, given the unit ``u``, ``u x v``,
    ``sqrt((1 + |u . v|) / 2)`` and where ``u . v >= 0``."""
    # Nearly opposite: take out the part of the axis along u that rounding leaves (see the scalar
    # version); elsewhere that part is rounding noise too, and taking it out costs less than a choice.
    axis = sub(axis, scale(u, dot(axis, u)))
    length = norm(axis)  # |u x v| = 2 sin(h) cos(h)
    w = np.where(acute, root, length / (2.0 * root))
    k = np.where(acute, 0.5 / root, root / np.maximum(length, 1e-300))  # sin(h) / length
    q = (w, axis[0] * k, axis[1] * k, axis[2] * k)
    opposite = ~acute & (length < 1e-15)
    if opposite.any():  # the axis is rounding noise: any axis across u (a unit stand-in elsewhere)
        q = where(opposite, (0.0, *any_perpendicular(where(opposite, u, (1.0, 0.0, 0.0)))), q)
    return q
