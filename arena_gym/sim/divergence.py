"""Finding diverged envs from their state, whatever MuJoCo's own flags say.

MuJoCo resets an unstable simulation only while its auto-reset is enabled, and zeroes a bad
control with only a warning counter. A value that is NaN, infinite or beyond mjMAXVAL (1e10,
where MuJoCo's own checks give up) in qpos, qvel or qacc is a divergence; so is such a
control, which MuJoCo would silently zero. A batch's step checks twice a step with
any_bad's compiled form (divergence_kernels, numba), pinned to it by a test.
"""

from __future__ import annotations

import numpy as np

MAXVAL = 1e10  # mjMAXVAL
_MIN, _MAX = np.minimum.reduce, np.maximum.reduce


def any_bad(fields: tuple[np.ndarray, ...]) -> bool:
    """Whether any value of the fields is not finite or beyond MAXVAL.

    A field's extremes are NaN when any value is (min and max propagate NaN), and a
    comparison with NaN is False, so two reductions per field clear the common case, with
    no temporaries: it runs twice a step on every env."""
    for f in fields:  # the ufuncs' own reductions: ndarray.min/max add a Python wrapper
        if f.size and not (-MAXVAL <= _MIN(f, axis=None) and _MAX(f, axis=None) <= MAXVAL):
            return True
    return False


def bad_rows(*fields: np.ndarray) -> np.ndarray:
    """Row mask over (n, k) arrays: rows with a value not finite or beyond MAXVAL."""
    n = len(fields[0])
    if not any_bad(fields):
        return np.zeros(n, dtype=bool)
    rows = np.concatenate([f for f in fields if f.shape[1]], axis=1)
    return ~(np.abs(rows).max(axis=1) <= MAXVAL)


def bad_state(data) -> bool:
    """The same test for one MjData."""
    return any_bad((data.qpos, data.qvel, data.qacc))
