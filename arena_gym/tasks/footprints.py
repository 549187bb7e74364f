"""Points against box footprints (x, y, yaw, sx, sy): the one point-to-box geometry, for
collision-free sampling and the crowd's obstacle forces (vectorised)."""

from __future__ import annotations

import numpy as np


def distance_to_boxes(points: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Distance from each point (P, 2) to the nearest box footprint (B, 5: x, y, yaw, sx, sy);
    0 inside a box, +inf with no boxes."""
    points = np.atleast_2d(points)
    if len(boxes) == 0:
        return np.full(len(points), np.inf)
    gap = BoxFrames(points[:, 0:1], points[:, 1:2], boxes[None], None).gap  # (P, B)
    return np.maximum(gap, 0.0).min(axis=1)


class BoxFrames:
    """Points in the frames of boxes: `gap` from each point to each box (negative inside,
    +inf where `mask` is False), and the boxes' outward normals where asked (`normals`),
    which most steps need for few pairs only. `px`, `py` (point coordinates) and `boxes`'
    columns (x, y, yaw, sx, sy along the last axis) broadcast against each other: (E, 1, P)
    points with (E, B, 1, 5) boxes give (E, B, P) (points along the last axis, where numpy
    broadcasts fastest), (n, 1) points with (n, B, 5) boxes give (n, B)."""

    def __init__(self, px: np.ndarray, py: np.ndarray, boxes: np.ndarray,
                 mask: np.ndarray | None) -> None:
        dx, dy = px - boxes[..., 0], py - boxes[..., 1]
        self.c, self.s = np.cos(boxes[..., 2]), np.sin(boxes[..., 2])
        self.lx = self.c * dx + self.s * dy
        self.ly = self.c * dy - self.s * dx
        self.ax = np.abs(self.lx) - 0.5 * boxes[..., 3]  # > 0: outside along x
        self.ay = np.abs(self.ly) - 0.5 * boxes[..., 4]
        ox, oy = np.maximum(self.ax, 0.0), np.maximum(self.ay, 0.0)
        gap = np.hypot(ox, oy)
        inside = gap == 0.0  # both axes within the box
        gap[inside] = np.maximum(self.ax, self.ay)[inside]
        if mask is not None:
            gap[~np.broadcast_to(mask, gap.shape)] = np.inf
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
