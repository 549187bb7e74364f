"""The observation's scan from the lidar reading, compiled (arena_gym/jit.py): one pass
instead of numpy's clip, divide and min on cold caches right after the physics."""

from __future__ import annotations

import numpy as np

from arena_gym.jit import numba


@numba.njit(cache=True)
def scan_into(reading, max_range, scale, ranges, scan, nearest):  # pragma: no cover - compiled
    """Per env and beam: the REP 117 reading (float32, +-inf) clipped into [0, max_range]
    as float64 `ranges` (np.clip's values, NaN kept; not written when `ranges` has no rows),
    `scan` = float32(ranges / scale), and per env the smallest of its ranges (NaN when any
    is, as np.min)."""
    n, beams = reading.shape
    keep = ranges.shape[0] > 0
    for i in range(n):
        low = np.inf
        for j in range(beams):
            r = np.float64(reading[i, j])
            if r < 0.0:
                r = 0.0
            elif r > max_range:
                r = max_range
            if keep:
                ranges[i, j] = r
            scan[i, j] = np.float32(r / scale)
            if r < low or r != r:
                if low == low:  # a NaN already seen stays the minimum
                    low = r
        nearest[i] = low
