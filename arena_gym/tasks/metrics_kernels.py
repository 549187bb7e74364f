"""The episode metrics' per-step record (arena_gym.tasks.metrics) as one compiled loop: a
dozen numpy calls otherwise, each slow on the caches MuJoCo's step leaves cold."""

from __future__ import annotations

import numpy as np

from arena_gym.jit import numba


@numba.njit(cache=True)
def record(pose: np.ndarray, collided: np.ndarray, active: np.ndarray, counted: np.ndarray,
           steps: np.ndarray, history: np.ndarray, hits: np.ndarray) -> None:  # pragma: no cover
    """One control step of the `active` envs, in place: each one's next trajectory slot
    (steps + 1, the last slot once full) gets its pose's x, y and yaw (pose (n, 4): x, y, z,
    yaw), or, when not `counted`, its previous slot's; its collision flag goes to `hits`,
    and `steps` moves to that slot. history (n, capacity, 3), hits (n, capacity)."""
    last = history.shape[1] - 1
    for e in range(steps.shape[0]):
        if not active[e]:
            continue
        k = min(steps[e] + 1, last)
        for j, column in enumerate((0, 1, 3)):  # x, y, yaw
            history[e, k, j] = pose[e, column] if counted[e] else history[e, k - 1, j]
        hits[e, k] = collided[e]
        steps[e] = k
