"""The clock check's compiled count (arena_gym.sim.clock_kernels) is numpy's comparison
`after < before + margin`: NaN is not behind, any strides."""

from __future__ import annotations

import numpy as np

from arena_gym.sim import clock_kernels


def test_behind_counts_numpys_comparison():
    rng = np.random.default_rng(0)
    before = rng.uniform(0, 10, 16)
    margin = np.full(16, 0.019)
    after = before + 0.02
    after[[1, 5]] = 0.0  # reset by MuJoCo
    after[7] = before[7] + 0.019 - 1e-12  # just short
    after[9] = np.nan
    for view in (after, np.repeat(after, 3)[::3]):
        count = clock_kernels.behind(before, view, margin)
        assert count == np.count_nonzero(view < before + margin) == 3
    assert clock_kernels.behind(before, before + 0.02, margin) == 0
