"""The controller's per-step common case (arena_gym.sim.control) as compiled loops.

The navigation env stages every env's twist at each control step (`stage`) and the next
tick writes the drive's wheel speeds into ctrl (`write`). Right after MuJoCo's batch step
the caches are cold, and each of the numpy calls these replace (the finite check, the copy
into the staged twists, the matrix product, the scatter into ctrl's columns) costs several
times its warm time; one loop each does not.

`write` gives `twists @ drive.matrix.T` bit for bit where numpy's matmul is a matrix
product (two envs or more, two wheels or more): OpenBLAS's x86-64 kernels fuse the three
terms in order into a running sum from +0, and so does `write`, with exact `fma`s
(arena_gym.jit.dot3; the lidar's kernels sum the same way). tests/sim/test_control_kernels.py
pins both kernels to the numpy formulas they replace.
"""

from __future__ import annotations

import math

import numpy as np

from arena_gym.jit import dot3, numba

STAGED, NOT_FINITE, SIDEWAYS = 0, 1, 2  # stage's outcomes


@numba.njit(cache=True)
def stage(twists: np.ndarray, values: np.ndarray, dirty: np.ndarray) -> int:
    """Copy twists (n, 2) rows (v, omega) or (n, 3) rows (vx, vy, omega) into values (n, 3)
    and mark every env dirty, when every value is finite and no vy is nonzero (STAGED);
    else change nothing and say why (NOT_FINITE before SIDEWAYS)."""
    n, k = twists.shape
    for e in range(n):
        for j in range(k):
            if not math.isfinite(twists[e, j]):
                return NOT_FINITE
    if k == 3:
        for e in range(n):
            if twists[e, 1] != 0.0:
                return SIDEWAYS
    for e in range(n):
        values[e, 0] = twists[e, 0]
        values[e, 1] = twists[e, 1] if k == 3 else 0.0
        values[e, 2] = twists[e, k - 1]
        dirty[e] = True
    return STAGED


@numba.njit(cache=True)
def write(twists: np.ndarray, matrix: np.ndarray, actuators: np.ndarray, bases: np.ndarray,
          ctrl: np.ndarray) -> None:
    """ctrl[:, actuators] = twists @ matrix.T and ctrl[:, bases] = twists, in place: twists
    (n, 3), matrix (nwheel, 3), actuators (nwheel,), bases (0,) or (3,), ctrl (n, nu)."""
    for e in range(twists.shape[0]):
        t0, t1, t2 = twists[e, 0], twists[e, 1], twists[e, 2]
        for w in range(matrix.shape[0]):
            ctrl[e, actuators[w]] = dot3(t0, t1, t2, matrix[w, 0], matrix[w, 1], matrix[w, 2])
        for b in range(bases.shape[0]):
            ctrl[e, bases[b]] = twists[e, b]
