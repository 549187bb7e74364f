"""Short-range wall casts of whole fans at once: each ray meets only the walls in its bearing.

A lidar fan of a few metres sees a few dozen of a map's walls, and each of its rays only the
few whose bearing interval (seen from the fan's origin) contains the ray's. So per fan: the
walls within reach of the origin, each wall's bearing interval from its corners, the rays
whose bearing falls inside (one `searchsorted` over every fan's sorted bearings), and the
slab test of MuJoCo's box routine on those (ray, wall) pairs only, all fans in one set of
numpy calls. The nearest hit per ray wins; among equal distances the first wall, as MuJoCo's
scan over geoms keeps it. Distances equal a MuJoCo cast of the same scene to round-off
(tests/worlds/test_raycast.py, every shared map). Why this and not MuJoCo on tile models
of the nearby walls, and what it costs: docs/performance.md (`benchmarks/maps.py`).
"""

from __future__ import annotations

import math

import numpy as np

_FULL = (-np.pi - 1.0, np.pi + 1.0)  # rad: every bearing (the origin is over the wall)
_WIDEN = 1e-9  # rad: bearing intervals are widened by this, so round-off never drops a hit
_FAN_GAP = 9.0  # rad between fans in the flattened sorted bearings (more than 2 * (pi + 1))


TILE = 2.0  # m: origins in one tile share one list of candidate walls


class FanCaster:
    """Casts against boxes (k, 4: x0, y0, x1, y1) standing from `zlo` to `zhi`, up to
    `reach`; keeps, per TILE square of origins, the walls that may lie within reach."""

    def __init__(self, boxes: np.ndarray, zlo: float, zhi: float, reach: float) -> None:
        self.boxes, self.zlo, self.zhi, self.reach = boxes, zlo, zhi, float(reach)
        self._tiles: dict[tuple[int, int], np.ndarray] = {}

    def cast(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distances (-1 for a miss) and box indices (-1), (n, R), of rays from one origin
        per fan (n, 3) along unit directions (n, R, 3). Hits beyond `reach` read as misses
        (the walls farther than that from an origin are not tried)."""
        n, nray = directions.shape[:2]
        best = np.full(n * nray, np.inf)
        first = np.full(n * nray, np.iinfo(np.int64).max)
        fan, wall, start, end, full = self._near_walls(origins)
        if fan.size:
            ray, wall = _rays_in_bearing(fan, wall, start, end, full, directions)
            t = _slab(self.boxes[wall], self.zlo, self.zhi, origins[ray // nray],
                      directions.reshape(-1, 3)[ray])
            hit = (t >= 0) & (t <= self.reach)  # beyond reach a nearer wall may be untried
            ray, wall, t = ray[hit], wall[hit], t[hit]
            np.minimum.at(best, ray, t)
            nearest = t == best[ray]
            np.minimum.at(first, ray[nearest], wall[nearest])
        missed = np.isinf(best)
        dist = np.where(missed, -1.0, best).reshape(n, nray)
        box = np.where(missed, -1, first).reshape(n, nray)
        return dist, box

    def _candidates(self, x: float, y: float) -> np.ndarray:
        """Walls whose footprint comes within reach of some point of the origin's tile."""
        key = (math.floor(x / TILE), math.floor(y / TILE))
        walls = self._tiles.get(key)
        if walls is None:
            x0, y0, b = key[0] * TILE, key[1] * TILE, self.boxes
            gap_x = np.maximum(np.maximum(b[:, 0] - (x0 + TILE), x0 - b[:, 2]), 0.0)
            gap_y = np.maximum(np.maximum(b[:, 1] - (y0 + TILE), y0 - b[:, 3]), 0.0)
            walls = self._tiles[key] = np.flatnonzero(np.hypot(gap_x, gap_y) <= self.reach)
        return walls

    def _near_walls(self, origins: np.ndarray):
        """(fan, wall) pairs with the wall's footprint within reach of the fan's origin, and
        the wall's bearing interval from the origin (_bearings)."""
        lists = [self._candidates(x, y) for x, y in origins[:, :2].tolist()]
        fan = np.repeat(np.arange(len(lists)), [len(w) for w in lists])
        wall = np.concatenate(lists) if lists else np.zeros(0, np.int64)
        b = self.boxes[wall]
        px, py = origins[fan, 0], origins[fan, 1]
        gap_x = np.maximum(np.maximum(b[:, 0] - px, px - b[:, 2]), 0.0)
        gap_y = np.maximum(np.maximum(b[:, 1] - py, py - b[:, 3]), 0.0)
        near = gap_x * gap_x + gap_y * gap_y <= self.reach * self.reach
        fan, wall, b, px, py = fan[near], wall[near], b[near], px[near], py[near]
        return (fan, wall, *_bearings(b, px, py, (gap_x[near] == 0) & (gap_y[near] == 0)))


def _bearings(b: np.ndarray, px: np.ndarray, py: np.ndarray, over: np.ndarray):
    """Bearing intervals of boxes b seen from points (px, py): start in [-pi, pi) and end
    (end - start < pi: a box is convex; an end past pi wraps), and every bearing (`over`)
    where the point is over the box's footprint."""
    toward = np.arctan2((b[:, 1] + b[:, 3]) / 2 - py, (b[:, 0] + b[:, 2]) / 2 - px)
    corner = np.arctan2(b[:, [1, 1, 3, 3]] - py[:, None], b[:, [0, 2, 2, 0]] - px[:, None])
    spread = (corner - toward[:, None] + np.pi) % (2 * np.pi) - np.pi
    lo = toward + spread.min(axis=1) - _WIDEN
    width = spread.max(axis=1) - spread.min(axis=1) + 2 * _WIDEN
    start = (lo + np.pi) % (2 * np.pi) - np.pi
    end = start + width
    start[over], end[over] = _FULL
    return start, end, over


def _rays_in_bearing(fan: np.ndarray, wall: np.ndarray, start: np.ndarray, end: np.ndarray,
                     full: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ray, wall) pairs, ray as fan * R + beam, of every ray whose bearing lies in its fan's
    interval [start, end] for the wall (any bearing where `full`). An interval ending past pi
    goes on from -pi."""
    n, nray = directions.shape[:2]
    bearing = np.arctan2(directions[..., 1], directions[..., 0])  # a vertical ray reads 0
    order = np.argsort(bearing, axis=1)
    offset = _FAN_GAP * np.arange(n)[:, None]
    keys = (np.take_along_axis(bearing, order, axis=1) + offset).ravel()
    rays = (order + nray * np.arange(n)[:, None]).ravel()
    wrap = (end > np.pi) & ~full
    fan = np.concatenate([fan, fan[wrap]])
    wall = np.concatenate([wall, wall[wrap]])
    start = np.concatenate([start, np.full(wrap.sum(), -np.pi)])  # each piece within its
    end = np.concatenate([np.where(wrap, np.pi, end), end[wrap] - 2 * np.pi])  # fan's keys
    base = _FAN_GAP * fan
    first = np.searchsorted(keys, start + base, side="left")
    count = np.searchsorted(keys, end + base, side="right") - first
    piece = np.repeat(np.arange(len(first)), count)
    slot = first[piece] + np.arange(piece.size) - (np.cumsum(count) - count)[piece]
    return rays[slot], wall[piece]


def _slab(b: np.ndarray, zlo: float, zhi: float, o: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Per pair, the distance along d from o to the box b (x0, y0, x1, y1) x [zlo, zhi]: to
    where the ray enters it, or leaves it when o is inside; -1 for a miss. A direction
    component of zero meets that axis's faces never: the ray is within them or misses."""
    lows = (b[:, 0], b[:, 1], np.full(len(b), zlo))
    highs = (b[:, 2], b[:, 3], np.full(len(b), zhi))
    near = np.full(len(b), -np.inf)
    far = np.full(len(b), np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        # level rays from between the walls' bottom and top never leave that slab in reach
        level = (np.abs(d[:, 2]) < 1e-9).all() and ((zlo < o[:, 2]) & (o[:, 2] < zhi)).all()
        for axis in range(2 if level else 3):
            p, v = o[:, axis], d[:, axis]
            t0, t1 = (lows[axis] - p) / v, (highs[axis] - p) / v
            flat = v == 0
            if flat.any():  # parallel to these faces: inside their slab for good, or never
                within = (lows[axis] <= p) & (p <= highs[axis])
                t0 = np.where(flat, np.where(within, -np.inf, np.inf), t0)
                t1 = np.where(flat, np.where(within, np.inf, -np.inf), t1)
            near = np.maximum(near, np.minimum(t0, t1))
            far = np.minimum(far, np.maximum(t0, t1))
    entered = near >= 0
    t = np.where(entered, near, far)
    return np.where((near <= far) & (far >= 0), t, -1.0)
