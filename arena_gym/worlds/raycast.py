"""Ray casts against a scene's walls at a cost that does not grow with the number of walls.

Walls are box geoms of the world body (scene.builders.add_wall). MuJoCo's ray functions test
every geom of a model for every ray (~1.5 ns per ray and geom even for a geom they skip: a
hospital map's 1,160 walls cost more than the rest of a 360-beam fan). Axis-aligned walls of
one height, though, tile the plane: their x and y faces cut it into a rectilinear grid whose
cells are each inside some wall or inside none. `WallGrid` walks each ray through that grid
(Amanatides-Woo), all rays of all fans at once in numpy, and stops at the first cell inside a
wall where the ray is between the walls' bottom and top: the cost grows with the cells a ray
crosses before it hits, not with the walls; rays jump through open space on a coarse
clearance raster. Distances come from the same planes MuJoCo's box test uses, so they equal
a MuJoCo cast of the same scene to round-off.

Short casts (cutoff <= LOCAL_REACH) go another way, measured faster there: each ray against
the walls within reach whose bearing holds it (worlds/wall_fans.py). Both are tested against
a MuJoCo cast of the whole scene on every shared map (tests/worlds/test_raycast.py).

    >>> grid = WallGrid.from_model(scene.model)            # None: no such walls
    >>> dist, geomid = grid.cast(origins, directions, cutoff=3.5)   # (n, 3), (n, R, 3)

A ray starting inside a wall reads the distance to leave the wall its cell belongs to (what
MuJoCo reports for a box holding the origin).
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from arena_gym.scene.builders import GROUP_STATIC
from arena_gym.worlds.wall_fans import FanCaster

SKIP_CELL = 0.25  # m: the clearance raster's cell (rays jump through open space by it)
SKIP_RINGS = 24  # clearance counted up to this many cells (6 m)
LOCAL_REACH = 10.0  # m: casts up to this far go ray by ray against nearby walls (wall_fans.py)
MIN_WALLS = 8  # fewer walls than this: MuJoCo's own cast is as fast
_ALIGNED = 1e-9  # |sin| or |cos| of a wall's yaw below this: axis-aligned
_SNAP = 1e-9  # m: faces this close are one grid line
_FAR = 1e6  # m: the grid's outer lines, so that every origin lies in a cell


class WallGrid:
    """Axis-aligned boxes [x0, x1] x [y0, y1] x [zlo, zhi] (boxes (k, 4) as x0, y0, x1, y1),
    reporting `ids` (k,) for hits; where boxes overlap, the first one's id."""

    def __init__(self, boxes: np.ndarray, zlo: float, zhi: float, ids: np.ndarray) -> None:
        boxes = np.asarray(boxes, float).reshape(-1, 4)
        self.ids = np.asarray(ids, np.int32)
        self.zlo, self.zhi = float(zlo), float(zhi)
        self.xs = _lines(boxes[:, [0, 2]])
        self.ys = _lines(boxes[:, [1, 3]])
        ix0, ix1 = _index(self.xs, boxes[:, 0]), _index(self.xs, boxes[:, 2])
        iy0, iy1 = _index(self.ys, boxes[:, 1]), _index(self.ys, boxes[:, 3])
        self.cell = np.full((len(self.xs) - 1, len(self.ys) - 1), -1, np.int32)  # box index
        for k in range(len(boxes) - 1, -1, -1):  # the first box wins where boxes overlap
            self.cell[ix0[k]:ix1[k], iy0[k]:iy1[k]] = k
        self.boxes = boxes
        self._casters: dict[float, FanCaster] = {}
        self._clearance(boxes)

    def _clearance(self, boxes: np.ndarray) -> None:
        """A coarse raster (SKIP_CELL) of how many of its cells lie between each cell and the
        nearest wall (Chebyshev, up to SKIP_RINGS): from a point in a cell with clearance c,
        a ray can jump (c - 1) * SKIP_CELL metres without reaching any wall."""
        q = SKIP_CELL
        self.skip_origin = boxes[:, :2].min(axis=0) - q if len(boxes) else np.zeros(2)
        top = boxes[:, 2:].max(axis=0) + q if len(boxes) else np.ones(2)
        shape = np.ceil((top - self.skip_origin) / q).astype(int) + 1
        wall = np.zeros(shape, bool)
        lo = np.floor((boxes[:, :2] - self.skip_origin) / q).astype(int)
        hi = np.floor((boxes[:, 2:] - self.skip_origin) / q).astype(int) + 1
        for (a, b), (c, e) in zip(lo.tolist(), hi.tolist(), strict=True):
            wall[a:c, b:e] = True
        clear = np.full(shape, SKIP_RINGS, np.int64)
        clear[wall] = 0
        reached = wall
        for ring in range(1, SKIP_RINGS):
            grown = reached.copy()
            grown[1:] |= reached[:-1]
            grown[:-1] |= reached[1:]
            grown[:, 1:] |= grown[:, :-1].copy()
            grown[:, :-1] |= grown[:, 1:].copy()
            clear[grown & ~reached] = ring
            reached = grown
        self.skip = clear

    def __len__(self) -> int:
        return len(self.ids)

    def _fans(self, reach: float) -> FanCaster:
        caster = self._casters.get(reach)
        if caster is None:
            caster = self._casters[reach] = FanCaster(self.boxes, self.zlo, self.zhi, reach)
        return caster

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
        (-1 for a miss) and the ids of the walls hit (-1), (n, R). Hits beyond `cutoff` may
        read as misses. Up to LOCAL_REACH each ray is tested against the walls near its
        origin in its bearing (worlds/wall_fans.py); beyond it, the rays walk the grid."""
        origins = np.asarray(origins, float)
        directions = np.asarray(directions, float)
        n, nray = directions.shape[:2]
        if cutoff <= LOCAL_REACH:  # short reach: each ray against the walls in its bearing
            dist, box = self._fans(cutoff).cast(origins, directions)
        else:
            dist, box = self._walk(np.repeat(origins, nray, axis=0), directions.reshape(-1, 3),
                                   cutoff)
        geomid = np.where(box >= 0, self.ids[np.maximum(box, 0)], -1).astype(np.int32)
        return dist.reshape(n, nray), geomid.reshape(n, nray)

    def _march(self, todo: np.ndarray, o: np.ndarray, d: np.ndarray, ix: np.ndarray,
               iy: np.ndarray, zin: np.ndarray, stop: np.ndarray, dist: np.ndarray,
               box: np.ndarray) -> None:
        """Walk rays `todo` cell by cell until they enter a wall cell between the walls'
        bottom and top (hit) or pass `stop`. Per-ray state lives in packed arrays, repacked
        when a third of them has finished: each step is a dozen whole-array operations."""
        xs, ys = self.xs, self.ys
        width = self.cell.shape[1]
        cell = self.cell.ravel()
        ray = todo
        ox, oy = o[ray, 0], o[ray, 1]
        dx, dy = d[ray, 0], d[ray, 1]
        right, up = dx > 0, dy > 0
        sx, sy = np.where(right, 1, -1), np.where(up, 1, -1)
        with np.errstate(divide="ignore"):
            # a ray along an axis never reaches the other axis's lines: a huge time to them
            inv_x = np.where(dx != 0, 1.0 / np.where(dx != 0, dx, 1.0), _FAR * _FAR)
            inv_y = np.where(dy != 0, 1.0 / np.where(dy != 0, dy, 1.0), _FAR * _FAR)
        inv_x, inv_y = np.abs(inv_x) * np.sign(np.where(right, 1.0, -1.0)), \
            np.abs(inv_y) * np.sign(np.where(up, 1.0, -1.0))
        cx, cy = ix[ray], iy[ray]
        bx, by = right.astype(np.int64), up.astype(np.int64)  # next line: index + 1 or + 0
        t = np.zeros(len(ray))
        lo = zin[ray]
        hi = np.minimum(stop[ray], _FAR / 10)  # a ray never walks past the outer lines
        live = np.ones(len(ray), bool)
        count = len(ray)
        q, (sx0, sy0), skip = SKIP_CELL, self.skip_origin, self.skip
        rows, cols = skip.shape
        while count:
            # jump through open space: (clearance - 1) raster cells never reach a wall
            px, py = ox + t * dx, oy + t * dy
            rx = np.floor((px - sx0) / q).astype(np.int64)
            ry = np.floor((py - sy0) / q).astype(np.int64)
            inside = (rx >= 0) & (rx < rows) & (ry >= 0) & (ry < cols) & live
            clear = np.where(inside, skip[np.clip(rx, 0, rows - 1), np.clip(ry, 0, cols - 1)], 0)
            jump = np.flatnonzero(clear >= 2)
            if jump.size:
                t[jump] += (clear[jump] - 1) * q
                cx[jump] = np.searchsorted(xs, ox[jump] + t[jump] * dx[jump], side="right") - 1
                cy[jump] = np.searchsorted(ys, oy[jump] + t[jump] * dy[jump], side="right") - 1
            tx = (xs[cx + bx] - ox) * inv_x
            ty = (ys[cy + by] - oy) * inv_y
            leave = np.minimum(tx, ty)
            k = cell[cx * width + cy]
            enter = np.maximum(t, lo)
            # a wall the ray only touches at a corner (enter == leave, to round-off) is not
            # hit: MuJoCo's box test misses it too
            hit = (k >= 0) & (enter < leave - _SNAP) & (enter <= hi) & live
            if hit.any():
                dist[ray[hit]] = enter[hit]
                box[ray[hit]] = k[hit]
            live &= ~hit & (leave <= hi)
            step_x = tx < ty
            cx += np.where(step_x & live, sx, 0)  # finished rays stay in their cell
            cy += np.where(step_x | ~live, 0, sy)
            t = leave
            count = int(np.count_nonzero(live))
            if count and count < 0.66 * len(live):  # repack the rays still walking
                keep = np.flatnonzero(live)
                ray, ox, oy, inv_x, inv_y = ray[keep], ox[keep], oy[keep], inv_x[keep], inv_y[keep]
                dx, dy = dx[keep], dy[keep]
                sx, sy, bx, by, cx, cy = sx[keep], sy[keep], bx[keep], by[keep], cx[keep], cy[keep]
                t, lo, hi, live = t[keep], lo[keep], hi[keep], live[keep]

    def _walk(self, o: np.ndarray, d: np.ndarray, cutoff: float) -> tuple[np.ndarray, np.ndarray]:
        xs, ys, cell = self.xs, self.ys, self.cell
        m = len(o)
        dist = np.full(m, -1.0)
        box = np.full(m, -1, np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            # where along each ray it is between the walls' bottom and top
            tz0 = (self.zlo - o[:, 2]) / d[:, 2]
            tz1 = (self.zhi - o[:, 2]) / d[:, 2]
            inside_z = (o[:, 2] >= self.zlo) & (o[:, 2] <= self.zhi)
            flat = d[:, 2] == 0
            zin = np.where(flat, np.where(inside_z, 0.0, np.inf), np.minimum(tz0, tz1))
            zout = np.where(flat, np.where(inside_z, np.inf, -np.inf), np.maximum(tz0, tz1))
            zin = np.maximum(zin, 0.0)
            stop = np.minimum(zout, cutoff)
            ix = np.searchsorted(xs, o[:, 0], side="right") - 1
            iy = np.searchsorted(ys, o[:, 1], side="right") - 1
        # a ray that starts inside a wall: the distance to leave that wall (MuJoCo's answer)
        start = cell[ix, iy]
        inner = (start >= 0) & (zin == 0.0) & (zout > 0)
        if inner.any():
            b = self.boxes[start[inner]]
            oi, di = o[inner], d[inner]
            with np.errstate(divide="ignore", invalid="ignore"):
                tx = np.where(di[:, 0] > 0, (b[:, 2] - oi[:, 0]) / di[:, 0],
                              np.where(di[:, 0] < 0, (b[:, 0] - oi[:, 0]) / di[:, 0], np.inf))
                ty = np.where(di[:, 1] > 0, (b[:, 3] - oi[:, 1]) / di[:, 1],
                              np.where(di[:, 1] < 0, (b[:, 1] - oi[:, 1]) / di[:, 1], np.inf))
            dist[inner] = np.minimum(np.minimum(tx, ty), zout[inner])
            box[inner] = start[inner]
        todo = np.flatnonzero(~inner & (zin <= stop))
        self._march(todo, o, d, ix, iy, zin, stop, dist, box)
        return dist, box


def _lines(bounds: np.ndarray) -> np.ndarray:
    """Sorted grid lines from box faces, faces within _SNAP merged, with far outer lines."""
    values = np.sort(bounds.ravel())
    keep = np.concatenate([[True], np.diff(values) > _SNAP])
    return np.concatenate([[-_FAR], values[keep], [_FAR]])


def _index(lines: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The index of the grid line each face lies on (within _SNAP)."""
    return np.searchsorted(lines, values - _SNAP, side="left")
