"""The simulator's per-step clock check (arena_gym.sim.groups._diverged) as a compiled loop.

MuJoCo's auto-reset sets an unstable env's time back to 0; after every step call the
clock of each env is compared with where it stood before. Right after MuJoCo's batch step
the caches are cold, and each numpy call of that comparison (a sum, a comparison, a
search) costs several times its warm time; one loop does not. tests/sim/test_clock_kernels.py
pins it to the numpy formula.
"""

from __future__ import annotations

import numpy as np

from arena_gym.jit import numba


@numba.njit(cache=True)
def behind(before: np.ndarray, after: np.ndarray, margin: np.ndarray) -> int:
    """How many envs have after < before + margin (numpy's comparison: NaN is not behind);
    (n,) each, any strides."""
    count = 0
    for i in range(before.shape[0]):
        if after[i] < before[i] + margin[i]:
            count += 1
    return count
