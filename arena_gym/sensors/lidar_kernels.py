"""The lidar's per-step common case (arena_gym.sensors.lidar) as compiled loops.

`rays`: every env's lidar frame from its carrier's free joint, when the frame sits at the
same fixed offset on it in every env (one robot model everywhere), and the world
directions of the pattern's beams. `ranges`: REP 117 ranges from the raw casts of
every env. Right after MuJoCo's batch step the caches are cold, and each of the dozen numpy
calls these replace costs several times its warm time; one loop each does not.

Both give LidarUnit's numpy formulas bit for bit, and tests/sensors/test_lidar_kernels.py
pins them: the quaternion's matrix is `quat_mats` (normalised, a zero quaternion reads as
the identity), its sums in the order the matrix product in quat_mats forms them; the 3-term
products are the sums OpenBLAS's x86-64 kernels form for numpy's matmul: a matrix product
fuses the terms in order into the running sum from +0, a matrix times a vector likewise
but the second term first, a row vector times a matrix (a one-beam pattern) sums them
unfused. The fused ones here are exact `fma`s (arena_gym.jit.dot3): the same bits on any
machine. A BLAS that sums otherwise gives numpy's own path other last bits (the rare
paths in LidarUnit.rays); these stay what they are.
"""

from __future__ import annotations

import numpy as np

from arena_gym.jit import dot3, numba


@numba.njit(cache=True)
def rays(q: np.ndarray, offset: np.ndarray, rotation: np.ndarray, local: np.ndarray,
         origins: np.ndarray, directions: np.ndarray) -> None:
    """World origins (n, 3) and beam directions (n, R, 3), in place, of lidar frames at
    `offset` (3,) and `rotation` (3, 3) in the frame of free joints at qpos rows `q`
    (n, 7: position, then quaternion w, x, y, z), for beams `local` (R, 3) in the
    lidar's frame."""
    for e in range(q.shape[0]):
        w, x, y, z = q[e, 3], q[e, 4], q[e, 5], q[e, 6]
        ww, xx, yy, zz = w * w, x * x, y * y, z * z
        wx, wy, wz = w * x, w * y, w * z
        xy, xz, yz = x * y, x * z, y * z
        norm2 = ((ww + xx) + yy) + zz
        if norm2 < 1e-30:  # quat_mats: a zero quaternion (mjMINVAL squared) is the identity
            ww, xx, yy, zz, wx, wy, wz, xy, xz, yz, norm2 = (
                1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        # quat_mats' sums, from +0 as its matrix product starts them
        b00 = (((0.0 + ww) + xx) - yy) - zz
        b01 = (0.0 - 2.0 * wz) + 2.0 * xy
        b02 = (0.0 + 2.0 * wy) + 2.0 * xz
        b10 = (0.0 + 2.0 * wz) + 2.0 * xy
        b11 = (((0.0 + ww) - xx) + yy) - zz
        b12 = (0.0 - 2.0 * wx) + 2.0 * yz
        b20 = (0.0 - 2.0 * wy) + 2.0 * xz
        b21 = (0.0 + 2.0 * wx) + 2.0 * yz
        b22 = (((0.0 + ww) - xx) - yy) + zz
        b00, b01, b02 = b00 / norm2, b01 / norm2, b02 / norm2
        b10, b11, b12 = b10 / norm2, b11 / norm2, b12 / norm2
        b20, b21, b22 = b20 / norm2, b21 / norm2, b22 / norm2
        # base @ offset: BLAS's matrix-vector product sums the second term first
        o0, o1, o2 = offset[0], offset[1], offset[2]
        origins[e, 0] = q[e, 0] + dot3(b01, b00, b02, o1, o0, o2)
        origins[e, 1] = q[e, 1] + dot3(b11, b10, b12, o1, o0, o2)
        origins[e, 2] = q[e, 2] + dot3(b21, b20, b22, o1, o0, o2)
        # rot = base @ rotation
        r00 = dot3(b00, b01, b02, rotation[0, 0], rotation[1, 0], rotation[2, 0])
        r01 = dot3(b00, b01, b02, rotation[0, 1], rotation[1, 1], rotation[2, 1])
        r02 = dot3(b00, b01, b02, rotation[0, 2], rotation[1, 2], rotation[2, 2])
        r10 = dot3(b10, b11, b12, rotation[0, 0], rotation[1, 0], rotation[2, 0])
        r11 = dot3(b10, b11, b12, rotation[0, 1], rotation[1, 1], rotation[2, 1])
        r12 = dot3(b10, b11, b12, rotation[0, 2], rotation[1, 2], rotation[2, 2])
        r20 = dot3(b20, b21, b22, rotation[0, 0], rotation[1, 0], rotation[2, 0])
        r21 = dot3(b20, b21, b22, rotation[0, 1], rotation[1, 1], rotation[2, 1])
        r22 = dot3(b20, b21, b22, rotation[0, 2], rotation[1, 2], rotation[2, 2])
        # world[r] = rot @ local[r] (numpy: local @ rot^T)
        if local.shape[0] == 1:  # one beam: BLAS sums a vector-matrix product unfused, from +0
            d0, d1, d2 = local[0, 0], local[0, 1], local[0, 2]
            directions[e, 0, 0] = ((0.0 + d0 * r00) + d1 * r01) + d2 * r02
            directions[e, 0, 1] = ((0.0 + d0 * r10) + d1 * r11) + d2 * r12
            directions[e, 0, 2] = ((0.0 + d0 * r20) + d1 * r21) + d2 * r22
            continue
        for r in range(local.shape[0]):
            d0, d1, d2 = local[r, 0], local[r, 1], local[r, 2]
            directions[e, r, 0] = dot3(d0, d1, d2, r00, r01, r02)
            directions[e, r, 1] = dot3(d0, d1, d2, r10, r11, r12)
            directions[e, r, 2] = dot3(d0, d1, d2, r20, r21, r22)


@numba.njit(cache=True)
def ranges(dist: np.ndarray, geomid: np.ndarray, range_min: float, range_max: float,
           out: np.ndarray) -> None:
    """REP 117 ranges (n, R) float32, in place, from casts' distances and geom ids (n, R):
    +inf for a miss (geom id < 0) or beyond range_max, -inf below range_min, else the
    distance rounded to float32."""
    for e in range(dist.shape[0]):
        for r in range(dist.shape[1]):
            d = dist[e, r]
            if geomid[e, r] < 0 or d > range_max:
                out[e, r] = np.inf
            elif d < range_min:
                out[e, r] = -np.inf
            else:
                out[e, r] = np.float32(d)
