"""Finding diverged envs from their state and clock, whatever MuJoCo's own flags say.

MuJoCo resets an unstable simulation only while its auto-reset is enabled, and zeroes a bad
control with only a warning counter. A value that is NaN, infinite or at or beyond mjMAXVAL
(1e10, where MuJoCo's own checks give up) in qpos, qvel or qacc is a divergence; so is
such a control, which MuJoCo would silently zero. Where MuJoCo reset an env itself its
clock fell behind (`behind`), and where that reset came at the first step after the env's
own reset (its clock at 0: no lag to see) its warning counters say so (`auto_reset`).

`bad_rows` and `behind` are compiled and cover any rows: a batch's (n, k) fields, or one
MjData's fields as (1, k) rows.
"""

from __future__ import annotations

import mujoco
import numpy as np

from arena_gym.compiled import kernel, shared

MAXVAL = 1e10  # mjMAXVAL
# MuJoCo's auto-reset raises one of these warnings (and zeroes the clock)
RESET_WARNINGS = (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
                  mujoco.mjtWarning.mjWARN_BADQACC)


@shared
def row_diverges(field, row):  # pragma: no cover - compiled
    """Whether row `row` of a (n, k) field holds a value that is NaN, infinite or at or
    beyond MAXVAL in size (a comparison with NaN is False)."""
    for j in range(field.shape[1]):
        if not abs(field[row, j]) < MAXVAL:
            return True
    return False


@kernel
def bad_rows(first, second, third, out):  # pragma: no cover - compiled
    """out[i]: whether row i of any of the three (n, k) float fields (k may be 0)
    diverges (row_diverges); returns how many rows do."""
    count = 0
    for i in range(out.shape[0]):
        bad = row_diverges(first, i) or row_diverges(second, i) or row_diverges(third, i)
        out[i] = bad
        count += bad
    return count


@kernel
def clock_checks(before, after, dt, nstep, checked, lag, fresh):  # pragma: no cover
    """After `nstep` steps of timestep dt[i] from clocks `before` to `after`, for the rows
    `checked` (the others, reset since, count as neither): lag[i] = after[i] < before[i] +
    (nstep - 0.5) dt[i], the row was reset during the steps (its clock fell behind; NaN
    is not behind); fresh[i] = before[i] < 0.5 dt[i], the row's clock started at zero,
    where a MuJoCo reset in the first step leaves no lag (`auto_reset` tells). Returns how
    many rows lag and how many are fresh."""
    lagging = starting = 0
    for i in range(lag.shape[0]):
        lag[i] = checked[i] and after[i] < before[i] + (nstep - 0.5) * dt[i]
        fresh[i] = checked[i] and before[i] < 0.5 * dt[i]
        lagging += lag[i]
        starting += fresh[i]
    return lagging, starting


@kernel
def before_step(first, second, third, out, time, before):  # pragma: no cover - compiled
    """`bad_rows` of the fields about to step, and each row's clock into `before`."""
    for i in range(time.shape[0]):
        before[i] = time[i]
    return bad_rows(first, second, third, out)


@kernel
def after_step(first, second, third, out, before, after, dt, nstep, lag,
               fresh):  # pragma: no cover - compiled
    """`bad_rows` of the stepped fields and `clock_checks` of every row after `nstep` steps
    from the clocks `before`: (bad rows, lagging rows, fresh rows)."""
    bad = bad_rows(first, second, third, out)
    lagging = starting = 0
    for i in range(lag.shape[0]):
        lag[i] = after[i] < before[i] + (nstep - 0.5) * dt[i]
        fresh[i] = before[i] < 0.5 * dt[i]
        lagging += lag[i]
        starting += fresh[i]
    return bad, lagging, starting


def bad_state(data: mujoco.MjData) -> bool:
    """Whether one MjData's qpos, qvel or qacc diverges."""
    return bool(bad_rows(data.qpos[None], data.qvel[None], data.qacc[None], np.zeros(1, bool)))


def auto_reset(data: mujoco.MjData) -> bool:
    """Whether MuJoCo's auto-reset ran since the MjData was last reset (mj_resetData clears
    the warnings; MuJoCo's own reset counts its warning after clearing them)."""
    return any(data.warning[w].number > 0 for w in RESET_WARNINGS)
