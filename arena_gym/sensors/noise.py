"""Noise models, applied by the sensors layer (MuJoCo applies no sensor noise since 3.1.4).

Every draw comes from the env's own `np.random.Generator`, env by env in a fixed order, so
the same seeds give bit-identical readings. Infinite values (no return, too close) stay.
"""

from __future__ import annotations

import numpy as np


def gaussian(values: np.ndarray, std: float, rng: np.random.Generator) -> None:
    """Add N(0, std) to the finite entries of one env's `values`, in place."""
    if std <= 0:
        return
    draw = rng.standard_normal(values.shape)
    finite = np.isfinite(values)
    values[finite] += (std * draw[finite]).astype(values.dtype)


def ranges(values: np.ndarray, std: float, dropout: float, low: float, high: float,
           rng: np.random.Generator) -> None:
    """Lidar ranges of one env: Gaussian noise on hits, clamped to [low, high] so that
    noise never turns a hit into "nothing there"; dropped beams read +inf."""
    if std > 0:
        hit = np.isfinite(values)
        gaussian(values, std, rng)
        np.clip(values, low, high, out=values, where=hit)
    if dropout > 0:
        values[rng.random(values.shape) < dropout] = np.inf


def image(rgb: np.ndarray, std: float, rng: np.random.Generator) -> None:
    """Gaussian noise on uint8 pixels, std in intensity units of [0, 1] (Gazebo's)."""
    if std <= 0:
        return
    noisy = rgb + rng.standard_normal(rgb.shape) * (std * 255.0)
    np.clip(np.rint(noisy), 0, 255, out=noisy)
    rgb[...] = noisy.astype(np.uint8)
