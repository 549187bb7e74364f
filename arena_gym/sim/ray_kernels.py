"""The ray casts' per-step preparation (arena_gym.sim.groups) as a compiled loop.

`fill_origins` lays each env's ray origin out per ray, as Batch.ray takes them: one pass
over the buffer, where numpy's broadcast assignment takes one per axis (a lidar casts
every control step, right after MuJoCo's step, on cold caches).
"""

from __future__ import annotations

import numpy as np

from arena_gym.jit import numba


@numba.njit(cache=True)
def fill_origins(pnt: np.ndarray, origins: np.ndarray) -> None:
    """pnt[n, r] = origins[n] for every env n and ray r, in place: pnt (n, R, 3),
    origins (n, 3)."""
    for e in range(pnt.shape[0]):
        x, y, z = origins[e, 0], origins[e, 1], origins[e, 2]
        for r in range(pnt.shape[1]):
            pnt[e, r, 0] = x
            pnt[e, r, 1] = y
            pnt[e, r, 2] = z
