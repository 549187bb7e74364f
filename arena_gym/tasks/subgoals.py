"""Each env's global path as the robot follows it: the subgoal and the path distance to go.

The path is kept as points every `spacing` metres (start to goal) with the arc length
left from each. Per step, the robot's place on the path is the point nearest it, searched
in a window ahead of the last one (the place never moves back). The path distance to go is
the distance to the robot's projection on the path next to its place plus the arc left
from there (continuous as the robot moves, exactly the arc left while on the path: the
measure of path progress). The subgoal is the
point `lookahead` metres further on (the goal near the end). A robot further than
`replan_distance` from every point in the window gets a new path from where it stands, out
of its episode's distance field (no new search).
"""

from __future__ import annotations

import math

import numpy as np

from arena_gym.worlds.paths import DistanceField, NoPathError, resample

WINDOW = 3.0  # m of path searched ahead of the robot's last place, beyond the re-plan distance


class PathFollower:
    """Paths of `num_envs` envs, padded to one array: `points` (E, K, 2), `left` (E, K)."""

    def __init__(self, num_envs: int, lookahead: float, replan_distance: float,
                 spacing: float) -> None:
        self.spacing = spacing
        self.ahead = max(1, round(lookahead / spacing))
        self.window = math.ceil((replan_distance + WINDOW) / spacing) + 1
        self.replan_distance = replan_distance
        self.points = np.zeros((num_envs, 1, 2))
        self.left = np.zeros((num_envs, 1))
        self.size = np.ones(num_envs, np.int64)
        self.index = np.zeros(num_envs, np.int64)
        self.fields: list[DistanceField | None] = [None] * num_envs
        self.replans = np.zeros(num_envs, np.int64)  # this episode's re-plans
        self.path_length = np.zeros(num_envs)  # m, the episode's first path
        self._rows = np.arange(num_envs)[:, None]

    def start(self, env: int, field: DistanceField, path: np.ndarray) -> None:
        """A new episode of `env`: its goal's field and the path from its start."""
        self.fields[env] = field
        self.replans[env] = 0
        self._set(env, path)
        self.path_length[env] = self.left[env, 0]

    def _set(self, env: int, path: np.ndarray) -> None:
        points = resample(path, self.spacing)
        k = len(points)
        if k > self.points.shape[1]:  # grow the padding for every env
            pad = k - self.points.shape[1]
            self.points = np.concatenate([self.points, np.repeat(
                self.points[:, -1:], pad, axis=1)], axis=1)
            self.left = np.concatenate([self.left, np.zeros((len(self.left), pad))], axis=1)
        seg = np.hypot(*np.diff(points, axis=0).T)
        left = np.concatenate([np.cumsum(seg[::-1])[::-1], [0.0]])
        self.points[env, :k], self.points[env, k:] = points, points[-1]
        self.left[env, :k], self.left[env, k:] = left, 0.0
        self.size[env], self.index[env] = k, 0

    def update(self, xy: np.ndarray, active: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Move each env's place on its path to the point nearest the robot at `xy` (E, 2),
        in a window ahead of the last place; re-plan from the robot for those further than
        replan_distance (only where `active`, a bool mask, when given). Returns the path
        distance to go (E,), measured before any re-plan, and the envs re-planned."""
        win = np.minimum(self.index[:, None] + np.arange(self.window), self.size[:, None] - 1)
        pts = self.points[self._rows, win]  # (E, W, 2)
        gap = np.hypot(pts[..., 0] - xy[:, None, 0], pts[..., 1] - xy[:, None, 1])
        best = np.argmin(gap, axis=1)  # the first of equals: the place moves on only if nearer
        self.index = win[np.arange(len(win)), best]
        to_go = self.to_go(xy)
        strayed = gap[np.arange(len(win)), best] > self.replan_distance
        if active is not None:
            strayed &= active
        replanned = []
        for e in np.flatnonzero(strayed):
            field = self.fields[e]
            if field is None:
                continue
            try:
                self._set(int(e), field.path(xy[e]))
            except NoPathError:  # the robot stands nearest another region: keep the path
                continue
            self.replans[e] += 1
            replanned.append(int(e))
        return to_go, np.array(replanned, np.int64)

    def to_go(self, xy: np.ndarray) -> np.ndarray:
        """(E,) path distance to go from `xy`: to its projection on the path segment before
        or after the current place (the nearer), then along the path."""
        rows, i = np.arange(len(self.index)), self.index
        best, nearest = np.full(len(i), np.inf), np.full(len(i), np.inf)
        for a in (np.maximum(i - 1, 0), i):
            b = np.minimum(a + 1, self.size - 1)
            pa, pb = self.points[rows, a], self.points[rows, b]
            seg = pb - pa
            length = np.hypot(seg[:, 0], seg[:, 1])
            t = np.einsum("ij,ij->i", xy - pa, seg) / np.maximum(length, 1e-12) ** 2
            t = np.clip(t, 0.0, 1.0)
            foot = pa + t[:, None] * seg
            gap = np.hypot(*(xy - foot).T)
            left = self.left[rows, a] - t * length
            closer = gap < nearest  # the nearer segment's measure (ties: the one behind)
            best = np.where(closer, gap + left, best)
            nearest = np.where(closer, gap, nearest)
        return best

    def subgoal(self) -> np.ndarray:
        """(E, 2) world points `lookahead` along each path from the robot's place."""
        i = np.minimum(self.index + self.ahead, self.size - 1)
        return self.points[np.arange(len(i)), i]

    def path(self, env: int) -> np.ndarray:
        """(K, 2) env's current path points (from where it was last planned)."""
        return self.points[env, : self.size[env]].copy()
