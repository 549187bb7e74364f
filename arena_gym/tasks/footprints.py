"""Points against box footprints (x, y, yaw, sx, sy): the one point-to-box geometry, for
collision-free sampling and the crowd's obstacle forces (vectorised)."""

from __future__ import annotations

import numpy as np

from arena_gym.tasks.arrays import xp


def distance_to_boxes(points: np.ndarray, boxes: np.ndarray,
                      mask: np.ndarray | None = None) -> np.ndarray:
    """Distance from each point (P, 2) to the nearest box footprint (B, 5: x, y, yaw, sx, sy)
    of those `mask` (B,) keeps; 0 inside a box, +inf with no boxes. numpy or JAX arrays (the
    MJX backend samples its episodes with it)."""
    space = xp(boxes)
    points = space.atleast_2d(points)
    if boxes.shape[0] == 0:
        return space.full(points.shape[0], space.inf)
    gap = BoxFrames(points[:, 0:1], points[:, 1:2], boxes[None], mask).gap  # (P, B)
    return space.maximum(gap, 0.0).min(axis=1)


class BoxFrames:
    """Points in the frames of boxes: `gap` from each point to each box (negative inside,
    +inf where `mask` is False), and the boxes' outward normals where asked (`normals`),
    which most steps need for few pairs only. `px`, `py` (point coordinates) and `boxes`'
    columns (x, y, yaw, sx, sy along the last axis) broadcast against each other: (E, 1, P)
    points with (E, B, 1, 5) boxes give (E, B, P) (points along the last axis, where numpy
    broadcasts fastest), (n, 1) points with (n, B, 5) boxes give (n, B)."""

    def __init__(self, px: np.ndarray, py: np.ndarray, boxes: np.ndarray,
                 mask: np.ndarray | None) -> None:
        space = xp(boxes)  # numpy, or jax.numpy (the gap only, for the MJX backend)
        dx, dy = px - boxes[..., 0], py - boxes[..., 1]
        self.c, self.s = space.cos(boxes[..., 2]), space.sin(boxes[..., 2])
        self.lx = self.c * dx + self.s * dy
        self.ly = self.c * dy - self.s * dx
        self.ax = space.abs(self.lx) - 0.5 * boxes[..., 3]  # > 0: outside along x
        self.ay = space.abs(self.ly) - 0.5 * boxes[..., 4]
        ox, oy = space.maximum(self.ax, 0.0), space.maximum(self.ay, 0.0)
        gap = space.hypot(ox, oy)
        inside = gap == 0.0  # both axes within the box
        if space is np:
            gap[inside] = np.maximum(self.ax, self.ay)[inside]
        else:  # JAX arrays are immutable
            gap = space.where(inside, space.maximum(self.ax, self.ay), gap)
        if mask is not None:
            gap = space.where(mask, gap, space.inf)
        self.gap = gap

    def normals(self, pick) -> np.ndarray:
        """Unit normals (..., 2), in the world frame, from the box toward the point (inside:
        out through the nearer face) for the entries `pick(array)` selects of `gap`."""
        lx, ly, ax, ay = pick(self.lx), pick(self.ly), pick(self.ax), pick(self.ay)
        c = pick(np.broadcast_to(self.c, self.lx.shape))
        s = pick(np.broadcast_to(self.s, self.lx.shape))
        inside = (ax < 0) & (ay < 0)
        nx = np.where(inside, (ax >= ay).astype(float), np.maximum(ax, 0.0))
        ny = np.where(inside, (ax < ay).astype(float), np.maximum(ay, 0.0))
        nx, ny = np.where(lx < 0, -nx, nx), np.where(ly < 0, -ny, ny)
        norm = np.maximum(np.hypot(nx, ny), 1e-12)
        nx, ny = nx / norm, ny / norm
        return np.stack([c * nx - s * ny, s * nx + c * ny], -1)
