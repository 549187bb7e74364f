"""When readings are taken and shown, on the shared sim clock (never wall time).

A sensor of period T is due at the sim times k * T (k = 0, 1, ...): it takes a sample at
the first tick at or after each due time and holds it until the next (sample-and-hold).
Due times advance by whole periods, so the average rate is exact whatever the tick or the
real-time factor: a 30 Hz camera at a 50 Hz tick alternates 20 and 40 ms gaps. A period of
0 samples every tick. Readings cannot come faster than ticks (the sensors run in the
simulator's tick hook).

`delay` follows MuJoCo's sensor `delay` (rounded up to whole physics steps: the first
sample showing a step input arrives ceil(delay / dt) steps after an undelayed one would).
A delayed sample shows at the first tick at or after (its time + delay); with ticks longer
than a step this quantises to ticks (exact at `Simulator(tick_steps=1)` or with delays
that are whole ticks). `nsample` > 1 averages the last nsample per-tick samples (unlike
MuJoCo's nsample, which only sizes its history buffer).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

EPS = 1e-9  # s: clock sums of steps carry rounding; due times within this count as reached


def delay_steps(delay: float, dt: float) -> int:
    """Whole physics steps of a delay: ceil(delay / dt), 0 for no delay."""
    if delay <= 0:
        return 0
    return max(1, math.ceil(delay / dt - 1e-6))


class Schedule:
    """Due times k * period on the sim clock."""

    def __init__(self, period: float) -> None:
        self.period = float(period)
        self.next_due = 0.0

    def is_due(self, clock: float) -> bool:
        """Whether a sample is due at `clock` (nothing moves on: `due` does)."""
        return self.period <= 0 or clock + EPS >= self.next_due

    def due(self, clock: float) -> bool:
        """Whether a sample is due at `clock`; if so, move on to the next due time."""
        if self.period <= 0:
            return True
        if clock + EPS < self.next_due:
            return False
        missed = math.floor((clock + EPS - self.next_due) / self.period)
        self.next_due += (missed + 1) * self.period
        return True


class DelayLine:
    """Samples waiting until they are `delay` old; per-env rows can be dropped (a reset)."""

    def __init__(self) -> None:
        self._queue: deque[tuple[float, np.ndarray, dict[str, np.ndarray]]] = deque()

    def push(self, stamp: float, envs: np.ndarray, rows: dict[str, np.ndarray]) -> None:
        """Queue the sample of `envs` taken at `stamp` (rows[name][i] belongs to envs[i])."""
        self._queue.append((stamp, envs.copy(), rows))

    def pop_ready(self, clock: float, delay: float) -> list[tuple[float, np.ndarray, dict]]:
        """Samples whose time + delay has come, oldest first (each shows in turn)."""
        ready = []
        while self._queue and self._queue[0][0] + delay <= clock + EPS:
            ready.append(self._queue.popleft())
        return ready

    def drop(self, envs: np.ndarray) -> None:
        """Forget the waiting samples of these envs (their state jumped)."""
        kept: deque = deque()
        for stamp, rows_envs, rows in self._queue:
            keep = ~np.isin(rows_envs, envs)
            if keep.any():
                kept.append((stamp, rows_envs[keep], {k: v[keep] for k, v in rows.items()}))
        self._queue = kept

    def __len__(self) -> int:
        return len(self._queue)


class Window:
    """The last `n` per-tick samples of each env, for averaging (nsample > 1)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._samples: dict[str, np.ndarray] = {}
        self._filled: np.ndarray | None = None
        self._head = 0

    def add(self, values: dict[str, np.ndarray], envs: np.ndarray, num_envs: int) -> None:
        if self._filled is None:
            self._filled = np.zeros((self.n, num_envs), dtype=bool)
            self._samples = {k: np.zeros((self.n, *v.shape), v.dtype) for k, v in values.items()}
        slot = self._head
        for name, array in values.items():
            self._samples[name][slot, envs] = array[envs]
        self._filled[slot] = False
        self._filled[slot, envs] = True
        self._head = (slot + 1) % self.n

    def mean(self, name: str, envs: np.ndarray) -> np.ndarray:
        """Mean over the filled slots of each env in `envs`: (len(envs), ...)."""
        assert self._filled is not None
        filled = self._filled[:, envs]  # (n, k)
        samples = self._samples[name][:, envs]  # (n, k, ...)
        weights = filled.reshape(filled.shape + (1,) * (samples.ndim - 2))
        count = np.maximum(filled.sum(axis=0), 1).reshape((-1,) + (1,) * (samples.ndim - 2))
        return (samples * weights).sum(axis=0) / count

    def drop(self, envs: np.ndarray) -> None:
        if self._filled is not None:
            self._filled[:, envs] = False
