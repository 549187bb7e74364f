"""Distances between points and box footprints, for collision-free sampling (vectorised)."""

from __future__ import annotations

import numpy as np


def distance_to_boxes(points: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Distance from each point (P, 2) to the nearest box footprint (B, 5: x, y, yaw, sx, sy);
    0 inside a box, +inf with no boxes."""
    points = np.atleast_2d(points)
    if len(boxes) == 0:
        return np.full(len(points), np.inf)
    d = points[:, None, :] - boxes[None, :, :2]
    c, s = np.cos(boxes[:, 2]), np.sin(boxes[:, 2])
    local_x = c * d[..., 0] + s * d[..., 1]
    local_y = -s * d[..., 0] + c * d[..., 1]
    out_x = np.maximum(np.abs(local_x) - boxes[:, 3] / 2, 0.0)
    out_y = np.maximum(np.abs(local_y) - boxes[:, 4] / 2, 0.0)
    return np.hypot(out_x, out_y).min(axis=1)
