"""Per-episode metrics, as Arena-Rosnav's evaluation reports them."""

from __future__ import annotations

import numpy as np


class EpisodeMetrics:
    """Accumulates, per env, what each running episode did."""

    def __init__(self, num_envs: int, pedestrians: bool = False,
                 personal_space: float = 1.0) -> None:
        self.pedestrians, self.personal_space = pedestrians, personal_space
        self.in_space = np.zeros(num_envs, dtype=np.int64)  # steps with a person within 1 m
        self.speed_in_space = np.zeros(num_envs)  # sum of the robot's speed over those steps
        self.min_distance = np.full(num_envs, np.inf)  # m, centre to centre
        self.pedestrian_collisions = np.zeros(num_envs, dtype=np.int64)
        self.path_length = np.zeros(num_envs)
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.collisions = np.zeros(num_envs, dtype=np.int64)
        self.heading_change = np.zeros(num_envs)  # sum |delta yaw|: curvature = this / path
        self.jerk = np.zeros(num_envs)  # sum |delta acceleration| of the commanded speed
        self._speed = np.zeros(num_envs)
        self._accel = np.zeros(num_envs)

    def reset(self, mask: np.ndarray) -> None:
        for array in (self.path_length, self.steps, self.collisions, self.heading_change,
                      self.jerk, self._speed, self._accel, self.in_space, self.speed_in_space,
                      self.pedestrian_collisions):
            array[mask] = 0
        self.min_distance[mask] = np.inf

    def update_pedestrians(self, distance: np.ndarray, speed: np.ndarray, hit: np.ndarray,
                           active: np.ndarray) -> None:
        """One control step near people: distance to the nearest (centres), the robot's speed
        (m/s) and whether it hit a person, for the `active` envs."""
        inside = (distance < self.personal_space) & active
        self.in_space += inside
        self.speed_in_space += np.where(inside, np.abs(speed), 0.0)
        self.min_distance = np.where(active, np.minimum(self.min_distance, distance),
                                     self.min_distance)
        self.pedestrian_collisions += hit & active

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
        social = {} if not self.pedestrians else {
            "time_in_personal_space": float(self.in_space[env] * dt),
            "min_pedestrian_distance": float(self.min_distance[env]),
            "pedestrian_collisions": int(self.pedestrian_collisions[env]),
            "speed_in_personal_space": float(self.speed_in_space[env] / self.in_space[env])
            if self.in_space[env] else 0.0,
        }
        return {
            "result": result,
            "collisions": int(self.collisions[env]),
            "path_length": path,
            "time": steps * dt,
            "steps": steps,
            "curvature": float(self.heading_change[env] / path) if path > 1e-6 else 0.0,
            "jerk": float(self.jerk[env] / max(steps, 1)),
            **social,
        }
