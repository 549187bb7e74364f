"""The divergence check of a batch's step (arena_gym.sim.divergence.any_bad) compiled: one
call over two fields instead of two numpy reductions per field, which run twice a step on
the caches MuJoCo's step leaves cold. A test pins it to any_bad."""

from __future__ import annotations

import numpy as np

from arena_gym.jit import numba
from arena_gym.sim.divergence import MAXVAL


@numba.njit(cache=True)
def _bad(field: np.ndarray) -> bool:
    """Whether any value of a 2-d field is NaN, infinite or beyond MAXVAL: any_bad's test
    (-MAXVAL <= v <= MAXVAL is False for NaN) value by value."""
    for i in range(field.shape[0]):
        for j in range(field.shape[1]):
            v = field[i, j]
            if not (-MAXVAL <= v and v <= MAXVAL):
                return True
    return False


@numba.njit(cache=True)
def any_bad2(first: np.ndarray, second: np.ndarray) -> bool:
    """any_bad((first, second)) for two 2-d float fields."""
    return _bad(first) or _bad(second)
