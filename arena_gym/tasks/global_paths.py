"""The navigation task's global paths (config `paths.subgoal`): one planning grid per world,
episodes sampled along a path, each env's subgoal and path distance to go, per episode.

Built only when the config asks for subgoals; the task without them does none of this.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from arena_gym.config import EnvConfig
from arena_gym.tasks.path_sampling import sample_path_episode
from arena_gym.tasks.sampling import Episode, Layout, ObstaclePool
from arena_gym.tasks.subgoals import PathFollower
from arena_gym.worlds.paths import PathGrid

SPACING = 0.1  # m between the points a followed path is kept as


class GlobalPaths:
    """Planning grids of `layouts` (inflated by `radius` + paths.inflation), and a
    PathFollower over `num_envs` envs; `trace` holds each step's subgoal."""

    def __init__(self, num_envs: int, cfg: EnvConfig, layouts: list[Any],
                 radius: float) -> None:
        self.env_cfg, self.cfg, self.radius = cfg, cfg.paths, radius
        clearance = radius + cfg.paths.inflation
        p = cfg.paths
        for layout in layouts:
            if not hasattr(layout, "occupancy"):
                raise ValueError(f"paths.subgoal: expected worlds with an occupancy map (ROS "
                                 f"maps, 'random'), got a {type(layout).__name__}")
        self.grids = {id(layout): PathGrid(layout.occupancy(), clearance, p.resolution,
                                           wall_cost=p.wall_cost, comfort=p.comfort)
                      for layout in {id(x): x for x in layouts}.values()}
        self.follower = PathFollower(num_envs, cfg.paths.lookahead, cfg.paths.replan_distance,
                                     SPACING)
        self.to_go = np.zeros(num_envs)  # m along the path, as of the last step
        self.trace = np.zeros((num_envs, cfg.max_episode_steps + 1, 2))
        self.steps = np.zeros(num_envs, np.int64)
        self.first_path: list[np.ndarray] = [np.zeros((1, 2))] * num_envs

    def grid(self, layout: Layout) -> PathGrid:
        return self.grids[id(layout)]

    def sample(self, env: int, rng: np.random.Generator, obstacles: tuple[int, int],
               layout: Layout, pool: ObstaclePool) -> Episode:
        """Env's next episode along a path (tasks/path_sampling.py); the follower takes it."""
        c = self.env_cfg
        task = getattr(layout, "task", None)
        if task is not None:  # a scenario's own start and goal, the path between them
            start, goal = task
            field = self.grid(layout).field(goal)
            path = field.path(start[:2])
            self.follower.start(env, field, path)
            self.first_path[env] = path
            return Episode(start, goal, np.zeros((0, 4)))
        drawn = sample_path_episode(rng, layout, self.grid(layout), pool, obstacles,
                                    self.radius, c.start_clearance,
                                    c.min_start_goal_distance, self.cfg)
        self.follower.start(env, drawn.field, drawn.path)
        self.first_path[env] = drawn.path
        return drawn.episode

    def time_limit(self, env: int) -> int:
        """Steps for env's episode: time_base + time_per_metre x its path length,
        at most max_episode_steps (which it is when neither is set)."""
        cap = self.env_cfg.max_episode_steps
        if not (self.cfg.time_per_metre or self.cfg.time_base):
            return cap
        seconds = self.cfg.time_base + self.cfg.time_per_metre * self.follower.path_length[env]
        return int(min(cap, max(1, math.ceil(seconds / self.env_cfg.control_dt - 1e-9))))

    def reset(self, mask: np.ndarray, pose: np.ndarray) -> None:
        """Envs in `mask` start their episodes at `pose` (num_envs, 4)."""
        self.to_go[mask] = self.follower.to_go(pose[:, :2])[mask]
        self.trace[mask, 0] = self.follower.subgoal()[mask]
        self.steps[mask] = 0

    def update(self, pose: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One control step: the path distance to go before it and after it (num_envs,),
        both on the path held during the step; strayed active envs re-plan after."""
        before = self.to_go
        after, replanned = self.follower.update(pose[:, :2], active)
        self.to_go = after.copy()
        if len(replanned):  # measured again on their new paths
            self.to_go[replanned] = self.follower.to_go(pose[:, :2])[replanned]
        envs = np.flatnonzero(active)
        k = np.minimum(self.steps[envs] + 1, self.trace.shape[1] - 1)
        self.trace[envs, k] = self.follower.subgoal()[envs]
        self.steps[envs] = k
        return before, after

    def episode(self, env: int) -> dict[str, Any]:
        """What env's ended episode planned: its first path (K, 2), path length (m), the
        subgoal of each step ((steps + 1, 2), start first) and its re-plans."""
        return {"global_path": self.first_path[env].copy(),
                "planned_length": float(self.follower.path_length[env]),
                "subgoals": self.trace[env, : self.steps[env] + 1].copy(),
                "replans": int(self.follower.replans[env])}
