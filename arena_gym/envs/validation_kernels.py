"""check_actions' usual case compiled (arena_gym/jit.py): float actions cast to float64,
checked finite and clipped to the space in one pass, instead of four numpy calls on the
caches the last physics step left cold. tests/envs/test_validation.py pins it to numpy."""

from __future__ import annotations

import math

import numpy as np

from arena_gym.jit import numba


@numba.njit(cache=True)
def clip_into(values, low, high, out):  # pragma: no cover - compiled
    """out = values (2-d) as float64 clipped into [low, high] (np.maximum, then np.minimum:
    a value equal to a bound stays as it is); False at the first value that is not finite
    (out then partly written)."""
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            v = np.float64(values[i, j])
            if not math.isfinite(v):
                return False
            lo, hi = np.float64(low[i, j]), np.float64(high[i, j])
            v = lo if v < lo else v
            out[i, j] = hi if v > hi else v
    return True
