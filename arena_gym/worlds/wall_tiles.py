"""Short-range wall casts by MuJoCo itself, on small models of the walls near the origin.

For a lidar of a few metres, MuJoCo's box test on the few dozen walls within reach beats
walking the wall grid in numpy (measured, benchmarks/maps.py: 16 fans of 360 beams, 3.5 m,
on the hospital map: ~10 ms against ~30 ms, one core); for long reaches the grid wins
(720 beams, 30 m: ~130 ms against ~60 ms), as every tile then holds the whole map. The
plane is cut into square tiles; a tile's model holds the walls within `reach` of it, and a
fan cast from inside the tile runs `mj_multiRay` on that model only. The boxes and the
routine are MuJoCo's own, so hits within reach equal a cast of the whole scene.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mujoco
import numpy as np

TILE = 2.0  # m: side of a tile


class WallTiles:
    """Boxes (k, 4) as x0, y0, x1, y1 from `zlo` to `zhi`; hits beyond `reach` are misses,
    and report the box's index. Tile models are compiled on first use and kept."""

    def __init__(self, boxes: np.ndarray, zlo: float, zhi: float, reach: float,
                 tile: float = TILE) -> None:
        self.boxes, self.zlo, self.zhi = boxes, zlo, zhi
        self.reach, self.tile = float(reach), float(tile)
        self._tiles: dict[tuple[int, int], tuple[mujoco.MjModel, mujoco.MjData, np.ndarray]
                          | None] = {}

    def calls(self, origins: np.ndarray, directions: np.ndarray, dist: np.ndarray,
              box: np.ndarray) -> list[Callable[[], None]]:
        """One call per fan, filling dist (-1: miss) and box (-1) rows; each may run on its
        own thread (mj_multiRay releases the GIL)."""
        return [self._call(origins[i], directions[i], dist[i], box[i])
                for i in range(len(origins))]

    def _call(self, origin: np.ndarray, vec: np.ndarray, dist: np.ndarray,
              box: np.ndarray) -> Callable[[], None]:
        key = (math.floor(origin[0] / self.tile), math.floor(origin[1] / self.tile))
        if key not in self._tiles:
            self._tiles[key] = self._build(key)
        tile = self._tiles[key]
        nray = len(vec)
        flat = np.ascontiguousarray(vec).reshape(-1)

        def call() -> None:
            dist[:] = -1.0
            box[:] = -1
            if tile is None:
                return  # no wall within reach of this tile
            model, data, index = tile
            local = np.empty(nray, dtype=np.int32)
            found = np.empty(nray)
            mujoco.mj_multiRay(model, data, origin, flat, None, 1, -1, local, found, None, nray,
                               self.reach)
            hit = (local >= 0) & (found <= self.reach)
            dist[hit] = found[hit]
            box[hit] = index[local[hit]]

        return call

    def _build(self, key: tuple[int, int]):
        x0, y0 = key[0] * self.tile, key[1] * self.tile
        b, r = self.boxes, self.reach
        # walls whose footprint comes within reach of the tile's square (Euclidean gap)
        gap_x = np.maximum(np.maximum(b[:, 0] - (x0 + self.tile), x0 - b[:, 2]), 0.0)
        gap_y = np.maximum(np.maximum(b[:, 1] - (y0 + self.tile), y0 - b[:, 3]), 0.0)
        near = np.flatnonzero(np.hypot(gap_x, gap_y) <= r)
        if near.size == 0:
            return None
        spec = mujoco.MjSpec()
        half_z, mid_z = (self.zhi - self.zlo) / 2, (self.zhi + self.zlo) / 2
        for x_lo, y_lo, x_hi, y_hi in b[near].tolist():
            spec.worldbody.add_geom(
                type=mujoco.mjtGeom.mjGEOM_BOX, pos=[(x_lo + x_hi) / 2, (y_lo + y_hi) / 2, mid_z],
                size=[(x_hi - x_lo) / 2, (y_hi - y_lo) / 2, half_z])
        model = spec.compile()
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        return model, data, near
