"""Episodes along a global path: goal, then a start in the goal's free region at a path
length in [min_length, max_length], then pool obstacles off the path.

The goal is a free cell of the planning grid (the map inflated by the robot radius plus a
margin); its distance field gives every cell's graph length, so the start is drawn among
the cells whose length can hold the wanted path length (by construction in the goal's
region), and its path, drawn, must measure it. Obstacles
keep `obstacle_clearance` beyond the robot radius from the path, the start and the goal,
so the path stays passable; half are drawn beside the path (where they matter), half
anywhere free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from arena_gym.config import PathConfig
from arena_gym.geometry.footprints import BoxFrames
from arena_gym.tasks.sampling import (
    ATTEMPTS,
    CANDIDATES,
    Episode,
    Layout,
    ObstaclePool,
    no_room,
)
from arena_gym.worlds.paths import DistanceField, PathGrid, resample


@dataclass(frozen=True)
class PathEpisode:
    """An episode, its goal's distance field and the global path from its start."""

    episode: Episode
    field: DistanceField
    path: np.ndarray  # (K, 2), start to goal

    @property
    def length(self) -> float:
        return _length(self.path)


OCTILE = 1.09  # an 8-connected grid path is at most ~8% longer than the straight line
PATHS_TRIED = 8  # start candidates per goal whose path is drawn to check its length


def _length(path: np.ndarray) -> float:
    return float(np.hypot(*np.diff(path, axis=0).T).sum())


def _jitter(rng: np.random.Generator, grid: PathGrid, nodes: np.ndarray) -> np.ndarray:
    """Uniform points inside the nodes' cells (free space is sampled uniformly)."""
    offset = rng.uniform(-0.5, 0.5, size=(len(nodes), 2)) * grid.resolution
    return grid.centres(nodes) + offset


def sample_path_episode(rng: np.random.Generator, layout: Layout, grid: PathGrid,
                        pool: ObstaclePool, count: tuple[int, int], radius: float,
                        start_clearance: float, min_distance: float,
                        cfg: PathConfig) -> PathEpisode:
    """Goal, start and obstacles as the module says; NoRoomError naming the wanted path
    length when ATTEMPTS goals found no start (e.g. every free region is too small)."""
    if grid.count == 0:
        raise no_room(layout, f"no free cell where the robot fits (clearance "
                      f"{grid.clearance:g} m); expected a world with room for the robot")
    k = int(rng.integers(count[0], count[1] + 1))
    keep, fit = radius + start_clearance, radius + 0.05
    hi = cfg.max_length or math.inf
    for _ in range(ATTEMPTS):
        goal = _jitter(rng, grid, rng.integers(0, grid.count, size=CANDIDATES))
        goal = goal[layout.free(goal, fit) & (grid.nodes(goal) >= 0)]
        if not len(goal):
            continue
        field = grid.field(goal[0])
        # graph lengths bound the path's: >= it, and <= (1 + wall_cost) x 8-connected's
        d, stretch = field.distance, (1.0 + cfg.wall_cost) * OCTILE
        nodes = np.flatnonzero((d >= cfg.min_length) & (d <= hi * stretch) & np.isfinite(d))
        if not len(nodes):
            continue
        starts = _jitter(rng, grid, rng.choice(nodes, size=min(CANDIDATES, len(nodes))))
        ok = (layout.free(starts, keep) & np.isfinite(field.length(starts))
              & (np.hypot(*(starts - goal[0]).T) >= min_distance))
        start, path = None, None
        for i in np.flatnonzero(ok)[:PATHS_TRIED]:
            path = field.path(starts[i])
            if cfg.min_length <= _length(path) <= hi:
                start = starts[i]
                break
        if start is None:
            continue
        boxes = _boxes(rng, layout, grid, pool, k, path, radius + cfg.obstacle_clearance,
                       start, keep, goal[0], fit)
        yaw = float(rng.uniform(-math.pi, math.pi))
        episode = Episode((float(start[0]), float(start[1]), yaw),
                          (float(goal[0][0]), float(goal[0][1])), boxes)
        return PathEpisode(episode, field, path)
    length = f"[{cfg.min_length:g}, {hi:g}] m" if cfg.max_length else f">= {cfg.min_length:g} m"
    raise no_room(layout, f"no start at a path length of {length} from a goal (and >= "
                  f"{min_distance:g} m straight) after {ATTEMPTS} goals; expected a free "
                  "region that long")


def _boxes(rng: np.random.Generator, layout: Layout, grid: PathGrid, pool: ObstaclePool,
           k: int, path: np.ndarray, clear: float, start: np.ndarray, keep: float,
           goal: np.ndarray, fit: float) -> np.ndarray:
    """(k', 4) pool index, x, y, yaw of up to k boxes, each `clear` from the path, `keep`
    from the start and `fit` from the goal (fewer where not all of them fit)."""
    if k == 0:
        return np.zeros((0, 4))
    idx = rng.choice(len(pool.sizes), size=k, replace=False)
    dense = resample(path, 0.5 * grid.resolution)
    tries = 4 * k
    # beside the path: a path point, pushed sideways out of the corridor
    along = dense[rng.integers(0, len(dense), size=tries)]
    angle = rng.uniform(-math.pi, math.pi, size=tries)
    reach = clear + rng.uniform(0.0, 1.5, size=tries) + pool.sizes[:, :2].max() / 2
    beside = along + reach[:, None] * np.column_stack([np.cos(angle), np.sin(angle)])
    anywhere = _jitter(rng, grid, rng.integers(0, grid.count, size=tries))
    xy = np.where((rng.random(tries) < 0.5)[:, None], beside, anywhere)
    yaw = rng.uniform(0.0, math.pi, size=tries)
    sizes = pool.sizes[np.resize(idx, tries), :2]
    foot = np.column_stack([xy, yaw, sizes])
    gap_path = BoxFrames(dense[:, 0:1], dense[:, 1:2], foot[None], None).gap.min(axis=0)
    ends = BoxFrames(np.array([[start[0]], [goal[0]]]), np.array([[start[1]], [goal[1]]]),
                     foot[None], None).gap
    ok = (layout.free(xy, 0.0) & (gap_path >= clear) & (ends[0] >= keep) & (ends[1] >= fit))
    chosen, used = [], set()
    for t in np.flatnonzero(ok):
        j = int(idx[t % k])
        if j not in used:
            used.add(j)
            chosen.append((j, xy[t, 0], xy[t, 1], yaw[t]))
    return np.array(chosen, dtype=float).reshape(-1, 4)
