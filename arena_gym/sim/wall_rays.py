"""Rays for a stepping group whose scenes hold map walls: the walls by `WallGrid`, the rest
by MuJoCo on copies of the scenes without those walls, the nearer hit per ray.

MuJoCo's ray functions spend time per ray and geom even on geoms they skip
(docs/performance.md), so a map's thousand walls dominate a lidar fan however they are masked.
Here MuJoCo casts on a model that lacks them (compiled once per layout from the scene's spec,
same bodies and joints, so the group's states load as they are), and the walls are cast by
`WallGrid`. The result is what a MuJoCo cast of the whole scene reports: distances to
round-off, the scene's geom ids."""

from __future__ import annotations

import numpy as np

from arena_gym.geometry.groups import GROUP_STATIC
from arena_gym.scene.builders import WALLS_FRAME
from arena_gym.scene.scene import Scene
from arena_gym.sim.ray_copy import RayCopies
from arena_gym.worlds.raycast import WallGrid


class WallRays:
    """Use `for_scenes`; None there means a plain MuJoCo cast is as good."""

    def __init__(self, scenes: list[Scene], grids: list[WallGrid], copies: RayCopies) -> None:
        self.scenes = scenes
        self.grids = grids
        self.copies = copies  # the scenes without their walls

    @classmethod
    def for_scenes(cls, scenes: list[Scene], nthread: int) -> WallRays | None:
        grids: list[WallGrid] = []
        for scene in scenes:
            grid = WallGrid.from_model(scene.compiled)
            if grid is None:
                return None
            same = grids[-1] if grids and _same(grids[-1], grid) else None
            grids.append(same or grid)  # envs of one map share one grid
            walls = [g for g in scene.spec.worldbody.geoms if g.frame is not None
                     and g.frame.name == WALLS_FRAME]
            if len(walls) != len(grid):  # some walls are not on the grid (turned, or taller)
                return None
        copies = RayCopies.build(scenes, [g.ids for g in grids], nthread, frame=WALLS_FRAME)
        return None if copies is None else cls(scenes, grids, copies)

    def rays(self, states: np.ndarray, origins: np.ndarray, vecs: np.ndarray,
             geomgroup: np.ndarray | None, bodyexclude: np.ndarray, cutoff: float,
             rows: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """As `Batch.ray` on the scenes themselves, given every scene's integration state
        (n_scenes, nstate), for the scenes `rows` (None: all, in order; origins and vecs have
        one row each); hits beyond `cutoff` may read as misses."""
        rows = list(range(len(self.scenes))) if rows is None else list(rows)
        nray = vecs.shape[1]
        self.copies.sync(rows, states)
        dist, geomid = self.copies.batch.ray(
            origins[:, None, :], vecs, geomgroup=geomgroup, flg_static=True, ids=rows,
            bodyexclude=np.repeat(bodyexclude[:, None], nray, axis=1))
        geomid = self.copies.to_scene(rows, geomid)
        if geomgroup is not None and not geomgroup[GROUP_STATIC]:
            return dist, geomid
        grids = [self.grids[r] for r in rows]
        for grid in {id(g): g for g in grids}.values():
            envs = np.flatnonzero([(g is grid) and bodyexclude[i] != 0
                                   for i, g in enumerate(grids)])
            if not envs.size:
                continue
            wall, wall_id = grid.cast(origins[envs], vecs[envs], cutoff)
            near = (wall >= 0) & ((dist[envs] < 0) | (wall <= dist[envs]))
            dist[envs] = np.where(near, wall, dist[envs])
            geomid[envs] = np.where(near, wall_id, geomid[envs])
        return dist, geomid


def _same(a: WallGrid, b: WallGrid) -> bool:
    return (a.zlo, a.zhi) == (b.zlo, b.zhi) and np.array_equal(a.ids, b.ids) \
        and np.array_equal(a.boxes, b.boxes)
