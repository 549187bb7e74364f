"""Global paths on an occupancy grid: shortest paths for a robot of a given clearance.

    >>> grid = PathGrid(load_map("hospital/map/map.yaml"), clearance=0.21)
    >>> field = grid.field((3.0, 4.0))        # distances of every free cell to the goal
    >>> field.length([(0.0, 0.0)])            # m along the path, inf where unreachable
    >>> path = field.path((0.0, 0.0))         # (K, 2) world points, start to goal

The grid's free cells are those at least `clearance` from every cell not known free
(`free_cells`: the map inflated by the robot's radius plus a margin). They form an
8-connected graph (a diagonal step needs both side cells free, so no corner is cut) and
scipy's Dijkstra (`scipy.sparse.csgraph`, already a dependency) gives one distance field
per goal: every free cell's path length and next cell toward it. One field serves an
episode: start sampling (length), the path from anywhere (re-planning after the robot
strayed only walks the field) and the path-length measure. The cell path is then pulled
taut (a vertex is skipped while the straight line to a later one stays in free cells), so
in an open room the path is the straight line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from arena_gym.worlds.occupancy import OccupancyMap, coarsen, free_cells

_STEPS = ((0, 1, 1.0), (1, 0, 1.0), (1, 1, math.sqrt(2.0)), (1, -1, math.sqrt(2.0)))


class NoPathError(ValueError):
    """No path joins the two points on the grid (they lie in different free regions, or
    one lies where the robot does not fit)."""


class PathGrid:
    """The free cells of `occupancy` for a robot needing `clearance` metres, as a graph.

    `resolution` (m) coarsens finer maps by a whole factor to cells of at least that size
    (a coarse cell is free only where all its cells are): fewer nodes, faster fields."""

    def __init__(self, occupancy: OccupancyMap, clearance: float,
                 resolution: float = 0.0, wall_cost: float = 0.0, wall_range: float = 0.5,
                 comfort: float = 0.0) -> None:
        from scipy.ndimage import distance_transform_edt
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components

        factor = max(1, int(resolution / occupancy.resolution + 1e-9))
        self.map = coarsen(occupancy, factor) if factor > 1 else occupancy
        self.clearance = clearance
        self.free = free_cells(self.map, clearance)
        self.free.flags.writeable = False
        # pulled taut, a segment keeps `comfort` more from walls, except near its ends
        self.comfort = comfort
        self._taut_ok = free_cells(self.map, clearance + comfort) if comfort else self.free
        rows, cols = self.map.shape
        self.node = np.full(self.map.shape, -1, np.int64)
        self.count = int(self.free.sum())
        self.node[self.free] = np.arange(self.count)
        self.cells = np.argwhere(self.free)  # node -> (row, col), row-major as `node`
        # a step next to the inflated walls costs up to 1 + wall_cost times its length
        near = np.zeros(self.map.shape)
        if wall_cost and self.count:
            gap = distance_transform_edt(self.free) * self.resolution
            near = wall_cost * np.clip(1.0 - gap / wall_range, 0.0, 1.0)
        a, b, w = [], [], []
        for dr, dc, length in _STEPS:
            c0, c1 = max(0, -dc), cols - max(0, dc)
            here = self.node[0 : rows - dr, c0:c1]
            there = self.node[dr:rows, c0 + dc : c1 + dc]
            ok = (here >= 0) & (there >= 0)
            if dr and dc:  # a diagonal step needs both cells beside it free
                ok &= self.free[dr:rows, c0:c1] & self.free[0 : rows - dr, c0 + dc : c1 + dc]
            a.append(here[ok])
            b.append(there[ok])
            extra = np.maximum(near[0 : rows - dr, c0:c1], near[dr:rows, c0 + dc : c1 + dc])
            w.append(length * self.map.resolution * (1.0 + extra[ok]))
        self.graph = csr_matrix((np.concatenate(w), (np.concatenate(a), np.concatenate(b))),
                                shape=(self.count, self.count))
        _, self.region = connected_components(self.graph, directed=False)
        # every cell's nearest free cell: robots stand closer to walls than `clearance`
        if self.count:
            _, (nr, nc) = distance_transform_edt(~self.free, return_indices=True)
            self._nearest = self.node[nr, nc]
        else:
            self._nearest = np.full(self.map.shape, -1, np.int64)

    @property
    def resolution(self) -> float:
        return self.map.resolution

    def _rowcol(self, points: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = np.atleast_2d(np.asarray(points, float))
        u, v = self.map.to_map(p[:, 0], p[:, 1])
        rows = self.map.shape[0] - 1 - np.floor(v / self.resolution).astype(np.int64)
        cols = np.floor(u / self.resolution).astype(np.int64)
        inside = ((rows >= 0) & (rows < self.map.shape[0]) & (cols >= 0)
                  & (cols < self.map.shape[1]))
        return rows, cols, inside

    def nodes(self, points: ArrayLike) -> np.ndarray:
        """(P,) node of each point's cell, -1 where that cell is not free (or off the grid)."""
        rows, cols, inside = self._rowcol(points)
        out = np.full(len(rows), -1, np.int64)
        out[inside] = self.node[rows[inside], cols[inside]]
        return out

    def nearest_nodes(self, points: ArrayLike) -> np.ndarray:
        """(P,) node of the free cell nearest each point's cell; -1 off the grid."""
        rows, cols, inside = self._rowcol(points)
        out = np.full(len(rows), -1, np.int64)
        out[inside] = self._nearest[rows[inside], cols[inside]]
        return out

    def centres(self, nodes: np.ndarray) -> np.ndarray:
        """(P, 2) world centres of the nodes' cells."""
        rc = self.cells[nodes]
        return self.map.cell_centers(rc[:, 0], rc[:, 1])

    def field(self, goal: ArrayLike) -> DistanceField:
        """The distance field toward `goal` (x, y), which must lie in a free cell."""
        from scipy.sparse.csgraph import dijkstra

        node = int(self.nodes([goal])[0])
        if node < 0:
            raise NoPathError(f"goal {_xy(goal)}: expected a point where the robot fits "
                              f"(clearance {self.clearance:g} m), got a blocked cell")
        dist, pred = dijkstra(self.graph, directed=False, indices=node, return_predecessors=True)
        return DistanceField(self, np.asarray(goal, float).reshape(2), node, dist, pred)

    def visible(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether the segment a-b stays in free cells (its end cells may be blocked), and
        `comfort` further from walls than that beyond `clearance + comfort` of its ends."""
        length = float(np.hypot(*(b - a)))
        steps = max(2, math.ceil(length / (0.5 * self.resolution)) + 1)
        t = np.linspace(0.0, 1.0, steps)[1:-1]
        if not len(t):
            return True
        rows, cols, inside = self._rowcol(a + t[:, None] * (b - a))
        if not inside.all():
            return False
        ends = np.minimum(t, 1.0 - t) * length <= self.clearance + self.comfort
        grid = np.where(ends, self.free[rows, cols], self._taut_ok[rows, cols])
        return bool(grid.all())


@dataclass(frozen=True, eq=False)
class DistanceField:
    """Path lengths (m) from every free cell of `grid` to `goal`, and each cell's next node."""

    grid: PathGrid
    goal: np.ndarray  # (2,) world
    goal_node: int
    distance: np.ndarray  # (nodes,) m along the graph (weighted near walls), inf: unreachable
    predecessor: np.ndarray  # (nodes,) next node toward the goal, -9999 at the goal / none

    def length(self, points: ArrayLike) -> np.ndarray:
        """(P,) m along the graph from each point's nearest free cell to the goal (inf where
        unreachable or off the grid); with a wall cost, steps near walls count longer."""
        nodes = self.grid.nearest_nodes(points)
        out = np.full(len(nodes), np.inf)
        out[nodes >= 0] = self.distance[nodes[nodes >= 0]]
        return out

    def path(self, start: ArrayLike) -> np.ndarray:
        """(K, 2) world points from `start` to the goal, pulled taut: the first is `start`,
        the last the goal. NoPathError where the start's region does not hold the goal."""
        start = np.asarray(start, float).reshape(2)
        node = int(self.grid.nearest_nodes([start])[0])
        if node < 0 or not np.isfinite(self.distance[node]):
            raise NoPathError(f"no path from {_xy(start)} to {_xy(self.goal)}: expected both "
                              "in one free region of the map, got separate regions")
        chain = [node]
        while chain[-1] != self.goal_node:
            chain.append(int(self.predecessor[chain[-1]]))
        points = np.vstack([start, self.grid.centres(np.array(chain)), self.goal])
        return taut(self.grid, points)


def taut(grid: PathGrid, points: np.ndarray) -> np.ndarray:
    """The polyline with every vertex dropped whose neighbours see each other (greedy: from
    each kept vertex, the farthest later one in sight, found by bisection)."""
    keep = [0]
    last = len(points) - 1
    while keep[-1] < last:
        i = keep[-1]
        if grid.visible(points[i], points[last]):
            keep.append(last)
            continue
        lo, hi = i + 1, last  # lo in sight (neighbours are), hi not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if grid.visible(points[i], points[mid]) else (lo, mid)
        keep.append(lo)
    return points[keep]


def resample(polyline: np.ndarray, spacing: float) -> np.ndarray:
    """Points every `spacing` metres along the polyline, and its vertices (the same line)."""
    seg = np.hypot(*np.diff(polyline, axis=0).T)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    at = np.union1d(np.arange(0.0, s[-1], spacing), s)
    return np.column_stack([np.interp(at, s, polyline[:, 0]), np.interp(at, s, polyline[:, 1])])


def _xy(p: ArrayLike) -> str:
    x, y = np.asarray(p, float).reshape(2)
    return f"({x:.2f}, {y:.2f})"
