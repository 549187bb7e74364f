"""The simulator's part of a compiled env step: one robot's twists in every env, straight
into the batch, checked as the simulator checks, by the simulator's own functions.

    step = sim.fused("robot", nstep)   # None unless the usual case holds (below)
    # compiled (arena_gym/envs/step.py), on step.arrays: stage the twists (write them into
    # ctrl: control.write) and check the state about to step (divergence.bad_rows)
    step.physics(bad)                  # the batch's step (one C call), the clock
    # compiled: check the stepped state and the clocks (bad_rows, clock_checks)
    step.settle(bad, fresh)            # resets what diverged: sim.diverged

`Simulator.step` does the same work through the same functions, whatever the case. The
usual case: every env in one batch group, in order; no tick hooks or pre-step callbacks;
the robot's drive open loop and the same in every env, every env's twist staged before, and
no other command waiting to be written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from arena_gym.sim.groups import BatchGroup


class StepArrays(NamedTuple):
    """What a compiled step reads and writes (the batch's and controller's own arrays, live):
    `write`'s twists, matrix, actuators, bases, ctrl and envs (as rows); `bad_rows`' fields
    before and after the step and its `bad`; `clock_checks`' clocks, dt, lag and fresh. It
    keeps the controller's books: `twists` are the staged ones, `dirty` cleared once written."""

    twists: np.ndarray  # (n, 3) the controller's staged twists (vx, vy, omega)
    dirty: np.ndarray  # (n,) bool: the controller's "to write at the next tick"
    ctrl: np.ndarray  # (n, nu)
    matrix: np.ndarray  # (nwheel, 3) the drive's
    actuators: np.ndarray  # (nwheel,)
    bases: np.ndarray  # (0,) or (3,) planar-drive actuators
    envs: np.ndarray  # (n,) 0 .. n - 1
    before_a: np.ndarray  # the batch group's checks before stepping (bad_rows' three)
    before_b: np.ndarray
    before_c: np.ndarray
    after_a: np.ndarray  # and after
    after_b: np.ndarray
    after_c: np.ndarray
    time: np.ndarray  # (n,) each env's clock
    time_before: np.ndarray  # (n,) the clocks before the step
    dt: np.ndarray  # (n,) timesteps
    bad: np.ndarray  # (n,) bool: rows the last state check found bad (to reset)
    lag: np.ndarray  # (n,) bool: rows whose clock fell behind (reset during the step)
    fresh: np.ndarray  # (n,) bool: rows whose clock started the step at 0


class FusedStep:
    """One robot's usual step of a simulator (see the module docstring); `arrays` stay valid
    until the simulator regroups (a recompile) or the robot's drive plan changes. The
    simulator's books are its own: `advanced(nstep)` after the physics (clock, step count,
    snapshots), `diverged(envs)` after the checks."""

    def __init__(self, group: BatchGroup, robot: str, nstep: int, staged: Any, part: Any,
                 advanced: Callable[[int], None], diverged: Callable[[list[int]], None]
                 ) -> None:
        self.group, self.robot, self.nstep, self.part = group, robot, nstep, part
        self._advanced, self._diverged = advanced, diverged
        drive = part.drive
        n = len(group.env_ids)
        self.arrays = StepArrays(
            staged.values, staged.dirty, group.ctrl, drive.matrix, drive.actuator_ids,
            drive.base_ids, np.arange(n, dtype=np.int64), *group.checks_before, *group.checks_after,
            group.bound("time"), np.zeros(n), group.dt, group.bad, group.lag, group.fresh)

    def physics(self, bad: int) -> None:
        """Reset the rows found bad before the step, then step every env `nstep` times."""
        group = self.group
        if bad:
            group.reset_bad()
        group.physics(self.nstep)
        self._advanced(self.nstep)

    def settle(self, bad: int, lagging: int, fresh: int) -> None:
        """Reset the rows found bad after the step; `sim.diverged` names them and those
        reset during it (MuJoCo's auto-reset, or the check before it: a clock behind, or at
        0 before with MuJoCo's warnings counted)."""
        group = self.group
        if bad:
            group.reset_bad()
        if fresh:
            lagging += group.check_fresh()
        self._diverged(group.take_diverged(lagging))
