"""Per-episode metrics, as Arena-Rosnav's evaluation reports them."""

from __future__ import annotations

import numpy as np


class EpisodeMetrics:
    """Accumulates, per env, what each running episode did."""

    def __init__(self, num_envs: int) -> None:
        self.path_length = np.zeros(num_envs)
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.collisions = np.zeros(num_envs, dtype=np.int64)
        self.heading_change = np.zeros(num_envs)  # sum |delta yaw|: curvature = this / path
        self.jerk = np.zeros(num_envs)  # sum |delta acceleration| of the commanded speed
        self._speed = np.zeros(num_envs)
        self._accel = np.zeros(num_envs)

    def reset(self, mask: np.ndarray) -> None:
        for array in (self.path_length, self.steps, self.collisions, self.heading_change,
                      self.jerk, self._speed, self._accel):
            array[mask] = 0

    def update(self, moved: np.ndarray, turned: np.ndarray, speed: np.ndarray,
               collided: np.ndarray, dt: float, active: np.ndarray) -> None:
        """One control step of the `active` envs (the others keep their sums)."""
        self.path_length += moved * active
        self.heading_change += np.abs(turned) * active
        self.steps += active
        self.collisions += collided & active
        accel = (speed - self._speed) / dt
        self.jerk += np.abs(accel - self._accel) / dt * active
        self._speed = np.where(active, speed, self._speed)
        self._accel = np.where(active, accel, self._accel)

    def episode(self, env: int, result: str, dt: float) -> dict[str, float | str | int]:
        path = float(self.path_length[env])
        steps = int(self.steps[env])
        return {
            "result": result,
            "collisions": int(self.collisions[env]),
            "path_length": path,
            "time": steps * dt,
            "steps": steps,
            "curvature": float(self.heading_change[env] / path) if path > 1e-6 else 0.0,
            "jerk": float(self.jerk[env] / max(steps, 1)),
        }
