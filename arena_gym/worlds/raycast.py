"""Ray casts against a scene's walls at a cost that does not grow with the number of walls.

Walls are box geoms of the world body (scene.builders.add_wall). MuJoCo's ray functions test
every geom of a model for every ray, even a geom they skip, so a large map's walls cost more
than the rest of a lidar fan (docs/performance.md). A map's walls, though, are axis-aligned
boxes of one height: `WallGrid` casts each ray only against the walls near its origin whose
bearing holds it (worlds/wall_fans.py), all rays of all fans at once in numpy, with the slab
test of MuJoCo's box routine, so distances equal a MuJoCo cast of the same scene to round-off
(tests/worlds/test_raycast.py, every shared map, short and unlimited reach, from above the
walls and from inside one).

    >>> grid = WallGrid.from_model(scene.model)            # None: no such walls
    >>> dist, geomid = grid.cast(origins, directions, cutoff=3.5)   # (n, 3), (n, R, 3)

A ray starting inside a wall reads the distance to leave it (what MuJoCo reports for a box
holding the origin).
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from arena_gym.geometry.groups import GROUP_STATIC
from arena_gym.worlds.wall_fans import FanCaster

MIN_WALLS = 8  # fewer walls than this: MuJoCo's own cast is as fast
_ALIGNED = 1e-9  # |sin| or |cos| of a wall's yaw below this: axis-aligned
_SNAP = 1e-9  # m: bottoms and tops this close are one height


class WallGrid:
    """Axis-aligned boxes [x0, x1] x [y0, y1] x [zlo, zhi] (boxes (k, 4) as x0, y0, x1, y1),
    reporting `ids` (k,) for hits; where boxes tie, the first one's id."""

    def __init__(self, boxes: np.ndarray, zlo: float, zhi: float, ids: np.ndarray) -> None:
        self.boxes = np.asarray(boxes, float).reshape(-1, 4)
        self.ids = np.asarray(ids, np.int32)
        self.zlo, self.zhi = float(zlo), float(zhi)
        self._casters: dict[float, FanCaster] = {}

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def from_model(cls, model: mujoco.MjModel, min_walls: int = MIN_WALLS) -> WallGrid | None:
        """The world body's axis-aligned box geoms of GROUP_STATIC that share the most common
        bottom and top (a map's walls); None when fewer than `min_walls` qualify."""
        geoms = np.flatnonzero((model.geom_bodyid == 0) & (model.geom_group == GROUP_STATIC)
                               & (model.geom_type == mujoco.mjtGeom.mjGEOM_BOX))
        if len(geoms) < min_walls:
            return None
        quat, pos, size = model.geom_quat[geoms], model.geom_pos[geoms], model.geom_size[geoms]
        # a yaw-only rotation by a multiple of 90 degrees: swap x and y half sizes or not
        w, z = quat[:, 0], quat[:, 3]
        level = (np.abs(quat[:, 1]) < _ALIGNED) & (np.abs(quat[:, 2]) < _ALIGNED)
        cos, sin = w * w - z * z, 2 * w * z
        straight = level & (np.abs(sin) < _ALIGNED)
        turned = level & (np.abs(cos) < _ALIGNED)
        half = np.where(turned[:, None], size[:, [1, 0]], size[:, :2])
        zlo, zhi = pos[:, 2] - size[:, 2], pos[:, 2] + size[:, 2]
        aligned = straight | turned
        if not aligned.any():
            return None
        keys, counts = np.unique(np.round(np.column_stack([zlo, zhi])[aligned], 9), axis=0,
                                 return_counts=True)
        lo, hi = keys[np.argmax(counts)]
        chosen = aligned & (np.abs(zlo - lo) < _SNAP) & (np.abs(zhi - hi) < _SNAP)
        if chosen.sum() < min_walls:
            return None
        boxes = np.column_stack([pos[:, :2] - half, pos[:, :2] + half])[chosen]
        return cls(boxes, lo, hi, geoms[chosen])

    def cast(self, origins: np.ndarray, directions: np.ndarray, cutoff: float = math.inf,
             ) -> tuple[np.ndarray, np.ndarray]:
        """Rays from one origin per fan (n, 3) along unit directions (n, R, 3): distances
        (-1 for a miss) and the ids of the walls hit (-1), (n, R). Hits beyond `cutoff`
        read as misses."""
        caster = self._casters.get(cutoff)
        if caster is None:
            caster = self._casters[cutoff] = FanCaster(self.boxes, self.zlo, self.zhi, cutoff)
        dist, box = caster.cast(np.asarray(origins, float), np.asarray(directions, float))
        geomid = np.where(box >= 0, self.ids[np.maximum(box, 0)], -1).astype(np.int32)
        return dist, geomid
