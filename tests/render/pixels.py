"""Finding a red object in a frame: its mask and centroid (column, row)."""

from __future__ import annotations

import numpy as np


def red(frame: np.ndarray) -> np.ndarray:
    """Pixels clearly red, lit or shaded (red well above green and blue)."""
    f = frame.astype(int)
    return (f[..., 0] > 60) & (f[..., 0] - f[..., 1] > 60) & (f[..., 0] - f[..., 2] > 60)


def centroid(mask: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(mask)
    return np.array([cols.mean(), rows.mean()])
