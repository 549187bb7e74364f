"""Finding diverged envs from their state, whatever MuJoCo's own flags say.

MuJoCo resets an unstable simulation only while its auto-reset is enabled, and zeroes a bad
control with only a warning counter. A value that is NaN, infinite or beyond mjMAXVAL (1e10,
where MuJoCo's own checks give up) in qpos, qvel or qacc is a divergence; so is such a
control, which MuJoCo would silently zero.
"""

from __future__ import annotations

import numpy as np

MAXVAL = 1e10  # mjMAXVAL


def bad_rows(*fields: np.ndarray) -> np.ndarray:
    """Row mask over (n, k) arrays: rows with a value not finite or beyond MAXVAL.

    A row's largest magnitude is NaN when any value is (max propagates NaN), and
    `x <= MAXVAL` is False for NaN, so one comparison per row covers both; it runs twice a
    step, on every env: the fields side by side, one reduction and n comparisons, since
    numpy's per-call cost outweighs these small arrays."""
    wide = [field for field in fields if field.shape[1]]
    if not wide:
        return np.zeros(len(fields[0]), dtype=bool)
    rows = np.concatenate(wide, axis=1) if len(wide) > 1 else wide[0]  # a few numpy calls
    return ~(np.abs(rows).max(axis=1) <= MAXVAL)


def bad_state(data) -> bool:
    """The same test for one MjData."""
    return bool(bad_rows(data.qpos[None], data.qvel[None], data.qacc[None]).any())
