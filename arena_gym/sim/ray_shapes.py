"""MuJoCo's ray tests of its primitive geoms (plane, sphere, capsule, ellipsoid, cylinder,
box), written for compiled casts: the arithmetic of `engine_ray.c` (`ray_map`, `ray_quad`,
`ray_plane`, ..., `ray_box`), so a distance equals `mj_ray`'s to round-off.

Each takes the geom's size and the ray in the geom's frame (`local` of the geom's world
position and row-major rotation, MuJoCo's geom_xpos and geom_xmat): origin (l0, l1, l2),
direction (w0, w1, w2); and returns the distance along the direction to the nearest surface
point ahead, or -1. A sphere is tested in its frame too (MuJoCo tests it in the world's: the
same distance to round-off).
"""

from __future__ import annotations

import math

from arena_gym.compiled import shared

PLANE, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX = 0, 2, 3, 4, 5, 6  # mjtGeom
PRIMITIVES = (PLANE, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX)
MINVAL = 1e-15  # mjMINVAL


@shared
def quad(a, b, c):
    """Both real roots of a x^2 + 2 b x + c = 0 (x0 <= x1) and the smallest non-negative
    one, or (-1, -1, -1): MuJoCo's ray_quad."""
    det = b * b - a * c
    if det < 0 or a < MINVAL:
        return -1.0, -1.0, -1.0
    det = math.sqrt(det)
    x0 = (-b - det) / a
    x1 = (-b + det) / a
    if x0 >= 0:
        return x0, x1, x0
    if x1 >= 0:
        return x0, x1, x1
    return x0, x1, -1.0


@shared
def sphere(r2, l0, l1, l2, w0, w1, w2):
    """The sphere of squared radius r2 about the frame's origin (MuJoCo's ray_sphere, also
    its bounding test; the distance is the same in any frame)."""
    a = w0 * w0 + w1 * w1 + w2 * w2
    b = w0 * l0 + w1 * l1 + w2 * l2
    c = l0 * l0 + l1 * l1 + l2 * l2 - r2
    return quad(a, b, c)[2]


@shared
def local(p0, p1, p2, m0, m1, m2, m3, m4, m5, m6, m7, m8, o0, o1, o2, v0, v1, v2):
    """The ray in the frame at (p0, p1, p2) turned by the row-major matrix m: MuJoCo's
    ray_map."""
    d0, d1, d2 = o0 - p0, o1 - p1, o2 - p2
    return (m0 * d0 + m3 * d1 + m6 * d2, m1 * d0 + m4 * d1 + m7 * d2,
            m2 * d0 + m5 * d1 + m8 * d2, m0 * v0 + m3 * v1 + m6 * v2,
            m1 * v0 + m4 * v1 + m7 * v2, m2 * v0 + m5 * v1 + m8 * v2)


@shared
def plane(s0, s1, l0, l1, l2, w0, w1, w2):
    """MuJoCo's ray_plane: the front face only, within the rendered rectangle."""
    if w2 > -MINVAL:
        return -1.0
    x = -l2 / w2
    if x < 0:
        return -1.0
    q0, q1 = l0 + x * w0, l1 + x * w1
    if (s0 <= 0 or abs(q0) <= s0) and (s1 <= 0 or abs(q1) <= s1):
        return x
    return -1.0


@shared
def capsule(s0, s1, l0, l1, l2, w0, w1, w2):
    """MuJoCo's ray_capsule."""
    ssz = s0 + s1
    if sphere(ssz * ssz, l0, l1, l2, w0, w1, w2) < 0:
        return -1.0
    x = -1.0
    r2 = s0 * s0
    a = w0 * w0 + w1 * w1
    b = w0 * l0 + w1 * l1
    c = l0 * l0 + l1 * l1 - r2
    sol = quad(a, b, c)[2]
    if sol >= 0 and abs(l2 + sol * w2) <= s1:
        x = sol
    a = w0 * w0 + w1 * w1 + w2 * w2
    for side in (1.0, -1.0):  # the top cap's upper half, the bottom cap's lower half
        e2 = l2 - side * s1
        b = w0 * l0 + w1 * l1 + w2 * e2
        c = l0 * l0 + l1 * l1 + e2 * e2 - r2
        x0, x1, _ = quad(a, b, c)
        for xx in (x0, x1):
            if xx >= 0 and side * (l2 + xx * w2) >= s1 and (x < 0 or xx < x):
                x = xx
    return x


@shared
def ellipsoid(s0, s1, s2, l0, l1, l2, w0, w1, w2):
    """MuJoCo's ray_ellipsoid."""
    i0, i1, i2 = 1 / (s0 * s0), 1 / (s1 * s1), 1 / (s2 * s2)
    a = i0 * w0 * w0 + i1 * w1 * w1 + i2 * w2 * w2
    b = i0 * w0 * l0 + i1 * w1 * l1 + i2 * w2 * l2
    c = i0 * l0 * l0 + i1 * l1 * l1 + i2 * l2 * l2 - 1
    return quad(a, b, c)[2]


@shared
def cylinder(s0, s1, l0, l1, l2, w0, w1, w2):
    """MuJoCo's ray_cylinder."""
    if sphere(s0 * s0 + s1 * s1, l0, l1, l2, w0, w1, w2) < 0:
        return -1.0
    x = -1.0
    r2 = s0 * s0
    if abs(w2) > MINVAL:
        for side in (-1.0, 1.0):
            sol = (side * s1 - l2) / w2
            if sol >= 0:
                q0, q1 = l0 + sol * w0, l1 + sol * w1
                if q0 * q0 + q1 * q1 <= r2 and (x < 0 or sol < x):
                    x = sol
    a = w0 * w0 + w1 * w1
    b = w0 * l0 + w1 * l1
    c = l0 * l0 + l1 * l1 - r2
    sol = quad(a, b, c)[2]
    if sol >= 0 and abs(l2 + sol * w2) <= s1 and (x < 0 or sol < x):
        x = sol
    return x


@shared
def face(lo, la, lb, wo, wa, wb, ho, ha, hb, x):
    """The nearest of a box's two faces across one axis (half size ho) that the ray meets
    within the face (half sizes ha, hb of the other axes), or x if that is nearer."""
    if abs(wo) > MINVAL:
        for side in (-1.0, 1.0):
            sol = (side * ho - lo) / wo
            if sol >= 0 and abs(la + sol * wa) <= ha and abs(lb + sol * wb) <= hb and (
                    x < 0 or sol < x):
                x = sol
    return x


@shared
def box(s0, s1, s2, l0, l1, l2, w0, w1, w2):
    """MuJoCo's ray_box."""
    if sphere(s0 * s0 + s1 * s1 + s2 * s2, l0, l1, l2, w0, w1, w2) < 0:
        return -1.0
    x = face(l0, l1, l2, w0, w1, w2, s0, s1, s2, -1.0)
    x = face(l1, l0, l2, w1, w0, w2, s1, s0, s2, x)
    return face(l2, l0, l1, w2, w0, w1, s2, s0, s1, x)


@shared
def primitive(kind, s0, s1, s2, l0, l1, l2, w0, w1, w2):
    """The ray test of a primitive geom of mjtGeom `kind` and size (s0, s1, s2), the ray in
    the geom's frame (`local`): MuJoCo's mju_rayGeom."""
    if kind == BOX:
        return box(s0, s1, s2, l0, l1, l2, w0, w1, w2)
    if kind == CAPSULE:
        return capsule(s0, s1, l0, l1, l2, w0, w1, w2)
    if kind == CYLINDER:
        return cylinder(s0, s1, l0, l1, l2, w0, w1, w2)
    if kind == SPHERE:
        return sphere(s0 * s0, l0, l1, l2, w0, w1, w2)
    if kind == PLANE:
        return plane(s0, s1, l0, l1, l2, w0, w1, w2)
    return ellipsoid(s0, s1, s2, l0, l1, l2, w0, w1, w2)
