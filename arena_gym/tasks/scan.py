"""The navigation task's 2-D laser scan: one horizontal fan per env, cast in batch.

The fan starts at the lidar link, placed from the robot's planar pose (x, y, yaw) and the
link's offset in the base frame (the robot stays level on the ground). It sees the world's
static group only (obstacles, walls), never the robot that carries it.
"""

from __future__ import annotations

import numpy as np

from arena_gym.scene.builders import GROUP_STATIC
from arena_gym.sim.simulator import Simulator

WORLD_ONLY = np.zeros(6, dtype=np.uint8)
WORLD_ONLY[GROUP_STATIC] = 1


class PlanarScan:
    """`num_beams` beams from angle_min to angle_max (both included when the fan is not a
    full circle), up to max_range; misses read max_range."""

    def __init__(self, num_envs: int, num_beams: int, angle_min: float, angle_max: float,
                 max_range: float, offset: np.ndarray) -> None:
        full = abs((angle_max - angle_min) - 2 * np.pi) < 1e-3
        self.angles = np.linspace(angle_min, angle_max, num_beams, endpoint=not full)
        self.max_range = max_range
        self.offset = np.asarray(offset, dtype=float)  # lidar link in the base frame
        self._cos, self._sin = np.cos(self.angles), np.sin(self.angles)
        self._dirs = np.zeros((num_envs, num_beams, 3))
        self._tmp = np.empty((num_envs, num_beams))
        self._origins = np.zeros((num_envs, 3))

    def cast(self, sim: Simulator, pose: np.ndarray, exclude: np.ndarray) -> np.ndarray:
        """Ranges (num_envs, num_beams) for planar poses (num_envs, 4): x, y, z, yaw."""
        yaw = pose[:, 3]
        c, s = np.cos(yaw), np.sin(yaw)
        ox, oy, oz = self.offset
        self._origins[:, 0] = pose[:, 0] + c * ox - s * oy
        self._origins[:, 1] = pose[:, 1] + s * ox + c * oy
        self._origins[:, 2] = pose[:, 2] + oz
        # the fan rotated by yaw: cos(a + yaw), sin(a + yaw) from the fan's own cos and sin
        c, s = c[:, None], s[:, None]
        dx, dy, tmp = self._dirs[..., 0], self._dirs[..., 1], self._tmp
        np.multiply(c, self._cos, out=dx)
        np.multiply(s, self._sin, out=tmp)
        dx -= tmp
        np.multiply(s, self._cos, out=dy)
        np.multiply(c, self._sin, out=tmp)
        dy += tmp
        dist, _ = sim.cast_rays(self._origins, self._dirs, WORLD_ONLY, exclude)
        return np.where((dist < 0) | (dist > self.max_range), self.max_range, dist)
