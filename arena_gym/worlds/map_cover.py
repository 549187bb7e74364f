"""An occupancy map's occupied cells as walls: few axis-aligned rectangles whose union is
exactly the occupied cells, one MuJoCo box each.

    >>> occupancy = load_map("worlds/hospital/map/map.yaml")
    >>> walls = walls_from_map(occupancy)            # list[Wall], names map/wall_<k>
    >>> store[0].spawn_walls(walls)

A map's walls cost MuJoCo's collision stage and the lidar's cast by their number, so the cover
is the fewest rectangles found (`_rectangles`); a grid needing more than `max_walls` is
coarsened until it fits.
"""

from __future__ import annotations

import heapq
import warnings
from dataclasses import dataclass

import numpy as np

from arena_gym.scene.requests import Wall
from arena_gym.worlds.occupancy import MapError, OccupancyMap, coarsen

WALL_HEIGHT = 1.0  # m
MAX_WALLS = 2000  # above this, the grid is coarsened (the assets' largest cover: ~1120)


@dataclass(frozen=True, eq=False)
class MapCover:
    """Axis-aligned rectangles (r0, c0, r1, c1; end-exclusive cells) whose union is exactly
    `map.occupied`, where `map` is the input grid coarsened `factor` times per side.
    `counts` holds the number of rectangles at each resolution tried, finest first."""

    map: OccupancyMap
    factor: int
    rects: np.ndarray  # (k, 4) int
    counts: tuple[int, ...]

    def walls(self, height: float = WALL_HEIGHT, prefix: str = "map") -> list[Wall]:
        """One Wall per rectangle, along its longer side, named `<prefix>/wall_<k>`."""
        m, res, rows = self.map, self.map.resolution, self.map.shape[0]
        walls = []
        for k, (r0, c0, r1, c1) in enumerate(self.rects.tolist()):
            u0, u1 = c0 * res, c1 * res
            v0, v1 = (rows - r1) * res, (rows - r0) * res
            if u1 - u0 >= v1 - v0:
                a, b, thickness = (u0, (v0 + v1) / 2), (u1, (v0 + v1) / 2), v1 - v0
            else:
                a, b, thickness = ((u0 + u1) / 2, v0), ((u0 + u1) / 2, v1), u1 - u0
            xs, ys = m.to_world(np.array([a[0], b[0]]), np.array([a[1], b[1]]))
            start, end = (xs[0], ys[0]), (xs[1], ys[1])
            walls.append(Wall(f"{prefix}/wall_{k}", start, end, height, thickness))
        return walls


def cover_map(occupancy: OccupancyMap, max_walls: int = MAX_WALLS) -> MapCover:
    """Rectangles covering the occupied cells, coarsening the grid (2x per step, a coarse cell
    occupied if any of its cells is) until at most `max_walls` rectangles remain."""
    if isinstance(max_walls, bool) or not isinstance(max_walls, int) or max_walls < 1:
        raise MapError(f"max_walls: expected an integer >= 1, got {max_walls!r}")
    factor, current, counts = 1, occupancy, []
    while True:
        rects = _rectangles(current.occupied)
        counts.append(len(rects))
        if len(rects) <= max_walls:
            return MapCover(current, factor, rects, tuple(counts))
        current, factor = coarsen(current, 2), factor * 2


def walls_from_map(
    occupancy: OccupancyMap,
    height: float = WALL_HEIGHT,
    max_walls: int = MAX_WALLS,
    prefix: str = "map",
) -> list[Wall]:
    """The map's occupied cells as at most `max_walls` walls (see `cover_map`); warns when the
    grid had to be coarsened, naming the resolution used.

    >>> store[0].spawn_walls(walls_from_map(load_map("map.yaml"), height=0.5))
    """
    cover = cover_map(occupancy, max_walls)
    if cover.factor > 1:
        warnings.warn(
            f"map {occupancy.image}: {cover.counts[0]} walls at resolution "
            f"{occupancy.resolution:g} m exceed max_walls={max_walls}; coarsened {cover.factor}x "
            f"to {cover.map.resolution:g} m ({len(cover.rects)} walls)",
            stacklevel=2,
        )
    return cover.walls(height, prefix)


def _rectangles(grid: np.ndarray) -> np.ndarray:
    """Few rectangles whose union is `grid`'s occupied cells, sorted.

    Any cover's rectangles can grow into maximal ones (occupied rectangles that no side can
    extend), so the cover is picked among those: first every one that alone covers some
    cell (any cover needs it), then greedily the one covering the most cells still
    uncovered; greedy picks whose cells the others cover too are dropped at the end."""
    rows, cols = np.flatnonzero(grid.any(axis=1)), np.flatnonzero(grid.any(axis=0))
    if rows.size == 0:
        return np.zeros((0, 4), np.int64)
    top, left = rows[0], cols[0]  # the work below scales with the grid: keep to the walls' box
    grid = grid[top : rows[-1] + 1, left : cols[-1] + 1]
    candidates = _maximal_rectangles(grid)
    alone = _integral(_coverage(grid.shape, candidates) == 1)
    essential = _sums(alone, candidates) > 0
    needed = candidates[essential]
    coverage = _coverage(grid.shape, needed)
    uncovered = grid & (coverage == 0)
    gains = _sums(_integral(uncovered), candidates)
    useful = ~essential & (gains > 0)
    picks = _greedy(uncovered, candidates[useful], gains[useful])
    rects = np.concatenate([needed, _without_redundant(coverage, picks)])
    return rects[np.lexsort(rects.T[::-1])] + [top, left, top, left]


def _maximal_rectangles(grid: np.ndarray) -> np.ndarray:
    """Every maximal rectangle of occupied cells, (r0, c0, r1, c1) sorted.

    Each occupied cell (r, c) gives the rectangle with bottom row r, as tall as the column
    of occupied cells ending at (r, c), widened left and right while the columns stay that
    tall: maximal except perhaps downwards. Every maximal rectangle arises so, from the
    cells of its bottom row whose columns are shortest; cells side by side with equally
    tall columns give the same one, and are taken together as a segment."""
    rows, cols = grid.shape
    c_by_col, r_by_col = np.nonzero(grid.T)
    top = _runs(c_by_col, r_by_col)[2]
    up = np.zeros(grid.shape, np.int32)  # occupied cells from (r, c) upwards, itself included
    up[r_by_col, c_by_col] = r_by_col + 1 - top
    r, c = np.nonzero(grid)  # row-major: each row's runs of occupied cells in order
    height = up[r, c]
    run_start, run_end, run_first, run_after = _runs(r, c)
    seg_start, seg_end, seg_first, seg_after = _runs(r * (rows + 1) + height, c)
    first, last = np.flatnonzero(seg_start), np.flatnonzero(seg_end)  # each segment's cells
    n = len(first)
    lower_left = _nearest_lower(height[first], np.where(run_start[first], n, np.arange(n) - 1))
    lower_right = _nearest_lower(height[first], np.where(run_end[last], n, np.arange(n) + 1))
    c0 = np.where(lower_left < n, np.append(seg_after[first], 0)[lower_left], run_first[first])
    c1 = np.where(lower_right < n, np.append(seg_first[first], 0)[lower_right], run_after[first])
    r0, r1 = r[first] + 1 - height[first], r[first] + 1
    # it extends downwards when the row below has a run from c0 to c1 or further
    after_below = np.zeros((rows + 1, cols), np.int32)
    after_below[r, c] = run_after
    maximal = after_below[r1, c0] < c1
    # segments of a bottom row as tall as its shortest give one rectangle: keep it once
    _, once = np.unique(((r1 * cols + c0) * (cols + 1) + c1)[maximal], return_index=True)
    rects = np.stack([r0, c0, r1, c1], axis=1)[maximal][once]
    return rects[np.lexsort(rects.T[::-1])]


def _runs(line: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, ...]:
    """For cells listed by (line, at) in np.nonzero's order, their runs (consecutive `at` in
    one line): whether each cell starts its run, whether it ends it, the run's first `at`
    and the `at` just after its last."""
    start = np.ones(len(at), bool)
    start[1:] = (line[1:] != line[:-1]) | (at[1:] != at[:-1] + 1)
    end = np.ones(len(at), bool)
    end[:-1] = start[1:]
    run = np.cumsum(start) - 1
    return start, end, at[start][run], at[end][run] + 1


def _nearest_lower(height: np.ndarray, step: np.ndarray) -> np.ndarray:
    """For each i, the nearest j with height[j] < height[i] going along `step` (step[i]: the
    next one that way, or len(height) at the end of i's run); len(height) where none is."""
    n = len(height)
    heights = np.append(height, 0)
    nearest = np.append(step, n)
    # every cell strictly between i and nearest[i] is at least as tall as i: where
    # nearest[i] is too, jumping to its own nearest keeps that true
    todo = np.flatnonzero(heights[nearest[:n]] >= height)
    while todo.size:
        nearest[todo] = nearest[nearest[todo]]
        todo = todo[heights[nearest[todo]] >= height[todo]]
    return nearest[:n]


def _greedy(uncovered: np.ndarray, candidates: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """Candidates covering the `uncovered` cells, each pick the one covering the most of
    those still uncovered (the first in `candidates` on a tie); `gains` holds how many
    each covers at first."""
    uncovered = uncovered.copy()
    boxes = candidates.tolist()
    n = len(boxes)
    queue = (np.arange(n) - gains.astype(np.int64) * n).tolist()  # best gain, then lowest i
    heapq.heapify(queue)
    picks = []
    while queue:
        key = heapq.heappop(queue)
        i = key % n
        r0, c0, r1, c1 = boxes[i]
        gain = int(np.count_nonzero(uncovered[r0:r1, c0:c1]))
        if gain < (i - key) // n:  # counted before later picks covered some of its cells
            if gain:
                heapq.heappush(queue, -gain * n + i)
            continue
        picks.append(i)
        uncovered[r0:r1, c0:c1] = False
    return candidates[picks].reshape(-1, 4)


def _without_redundant(coverage: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """`picks` less those whose every cell another rectangle covers, the later picks (which
    covered fewer new cells) dropped first; `coverage` counts the other rectangles over
    each cell, and is changed."""
    boxes = picks.tolist()
    for r0, c0, r1, c1 in boxes:
        coverage[r0:r1, c0:c1] += 1
    keep = np.ones(len(boxes), bool)
    for i in range(len(boxes) - 1, -1, -1):
        r0, c0, r1, c1 = boxes[i]
        if coverage[r0:r1, c0:c1].min() >= 2:
            coverage[r0:r1, c0:c1] -= 1
            keep[i] = False
    return picks[keep]


def _coverage(shape: tuple[int, int], rects: np.ndarray) -> np.ndarray:
    """(H, W) int: how many of the rectangles cover each cell."""
    corners = np.zeros((shape[0] + 1, shape[1] + 1), np.int32)
    r0, c0, r1, c1 = rects.T
    for rows, cols, sign in ((r0, c0, 1), (r0, c1, -1), (r1, c0, -1), (r1, c1, 1)):
        np.add.at(corners, (rows, cols), sign)
    return _integral(corners)[1:-1, 1:-1]


def _integral(grid: np.ndarray) -> np.ndarray:
    """Summed-area table: [r, c] holds the sum of grid[:r, :c]."""
    table = np.zeros((grid.shape[0] + 1, grid.shape[1] + 1), np.int32)
    np.cumsum(grid, axis=1, out=table[1:, 1:])
    for r in range(1, len(table)):  # numpy's cumsum down the columns takes several times longer
        table[r] += table[r - 1]
    return table


def _sums(integral: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """Each rectangle's sum, from the grid's summed-area table."""
    r0, c0, r1, c1 = rects.T
    return integral[r1, c1] - integral[r0, c1] - integral[r1, c0] + integral[r0, c0]
