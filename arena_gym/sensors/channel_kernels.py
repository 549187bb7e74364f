"""A reading's bookkeeping when a sample of every env is shown (Channel._publish), as one
compiled loop: numpy's four whole-array writes (valid, stamp, count, fresh), each slow on
the caches MuJoCo's step leaves cold, in one call. tests/sensors/test_channel_kernels.py
pins it to them."""

from __future__ import annotations

import numpy as np

from arena_gym.jit import numba


@numba.njit(cache=True)
def shown(valid: np.ndarray, stamp: np.ndarray, count: np.ndarray, fresh: np.ndarray,
          taken: float) -> None:
    """Every env (n,) shows a sample taken at sim time `taken`, in place: valid True,
    stamp `taken`, count + 1 (int64, wrapping as numpy's add), fresh True."""
    for e in range(valid.shape[0]):
        valid[e] = True
        stamp[e] = taken
        count[e] += 1
        fresh[e] = True
