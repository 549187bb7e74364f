"""Where a world has room for robots, goals and obstacles: the task samples from these.

A layout builds its static part into an env once (walls) and answers which points are free
with a given clearance. Episodes then place the obstacle pool and the robot inside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena_gym.scene.records import WALL_THICKNESS
from arena_gym.scene.store import SceneStore
from arena_gym.worlds.default import room_walls


@dataclass(frozen=True)
class RoomLayout:
    """A square room of side `size` (between wall centre lines), centred on the origin."""

    size: float = 6.0
    wall_height: float = 0.5

    @property
    def half_inner(self) -> float:
        return self.size / 2 - WALL_THICKNESS / 2

    def build(self, store: SceneStore, env_id: int) -> None:
        store.spawn_walls(env_id, room_walls(self.size, self.wall_height))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        h = self.half_inner
        return np.array([-h, -h]), np.array([h, h])

    def free(self, points: np.ndarray, clearance: float) -> np.ndarray:
        """Whether each point (P, 2) is at least `clearance` from every wall."""
        return np.all(np.abs(np.atleast_2d(points)) <= self.half_inner - clearance, axis=1)
