"""Points against box footprints (x, y, yaw, sx, sy): the one point-to-box geometry, for
collision-free sampling and the crowd's obstacle forces (vectorised)."""

from __future__ import annotations

from typing import Any

import numpy as np

from arena_gym.compiled import shared
from arena_gym.geometry.arrays import hypot, maximum, where, xp


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
    broadcasts fastest), (n, 1) points with (n, B, 5) boxes give (n, B). The geometry is
    box_frame, box_gap and box_normal's: the crowd's compiled step calls them per pair."""

    def __init__(self, px: np.ndarray, py: np.ndarray, boxes: np.ndarray,
                 mask: np.ndarray | None) -> None:
        space = xp(boxes)  # numpy, or jax.numpy (the gap only, for the MJX backend)
        self.c, self.s = space.cos(boxes[..., 2]), space.sin(boxes[..., 2])
        self.lx, self.ly, self.ax, self.ay = box_frame(
            px, py, boxes[..., 0], boxes[..., 1], self.c, self.s, boxes[..., 3], boxes[..., 4])
        self._gap = box_gap(self.ax, self.ay)
        self.gap = self._gap if mask is None else space.where(mask, self._gap, space.inf)

    def normals(self, pick) -> np.ndarray:
        """Unit normals (..., 2), in the world frame, from the box toward the point (inside:
        out through the nearer face) for the entries `pick(array)` selects of `gap`."""
        shape = self.lx.shape
        nx, ny = box_normal(pick(self.lx), pick(self.ly), pick(self.ax), pick(self.ay),
                            pick(self._gap), pick(np.broadcast_to(self.c, shape)),
                            pick(np.broadcast_to(self.s, shape)))
        return np.stack([nx, ny], -1)


@shared
def box_frame(px: Any, py: Any, bx: Any, by: Any, c: Any, s: Any, sx: Any, sy: Any
              ) -> tuple[Any, Any, Any, Any]:
    """The point (px, py) in the frame of the box centred at (bx, by) with cos/sin (c, s) of
    its yaw and full extents (sx, sy): its coordinates (lx, ly) and their excess (ax, ay)
    over the half extents (> 0: outside along that axis). max(ax, ay) <= box_gap."""
    dx, dy = px - bx, py - by
    lx = c * dx + s * dy
    ly = c * dy - s * dx
    return lx, ly, abs(lx) - 0.5 * sx, abs(ly) - 0.5 * sy


@shared
def box_gap(ax: Any, ay: Any) -> Any:
    """Signed gap from a point to a box (negative inside), from box_frame's ax, ay."""
    gap = hypot(maximum(ax, 0.0), maximum(ay, 0.0))
    return where(gap == 0.0, maximum(ax, ay), gap)  # 0: both axes within the box


@shared
def box_normal(lx: Any, ly: Any, ax: Any, ay: Any, gap: Any, c: Any, s: Any
               ) -> tuple[Any, Any]:
    """The unit normal (world frame) from a box toward a point (inside: out through the
    nearer face), from box_frame's lx, ly, ax, ay, box_gap's gap and the box's cos/sin
    (c, s). Outside, the normal before scaling is (max(ax, 0), max(ay, 0)) with signs,
    whose length is the gap."""
    inside = (ax < 0) & (ay < 0)
    nx = where(inside, where(ax >= ay, 1.0, 0.0), maximum(ax, 0.0))
    ny = where(inside, where(ax < ay, 1.0, 0.0), maximum(ay, 0.0))
    norm = where(inside, 1.0, maximum(gap, 1e-12))
    nx = where(lx < 0, -nx, nx) / norm
    ny = where(ly < 0, -ny, ny) / norm
    return c * nx - s * ny, s * nx + c * ny
