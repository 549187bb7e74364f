"""Checking actions once, at the boundary, before anything steps."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


def check_actions(actions: Any, space: spaces.Space, num_envs: int) -> np.ndarray:
    """A (num_envs, dim) float array clipped to `space`, or (num_envs,) discrete indices.

    Wrong shapes and NaN/inf raise ValueError naming what was expected and what came.
    """
    array = np.asarray(actions)
    if array.dtype.kind not in "biuf":  # complex parts would be dropped, objects guessed at
        raise ValueError(f"actions: expected real numbers, got dtype {array.dtype}")
    if isinstance(space, spaces.MultiDiscrete):
        expected = (num_envs,)
        if array.shape != expected:
            raise ValueError(f"actions: expected shape {expected}, got {array.shape}")
        if (not np.issubdtype(array.dtype, np.integer)
                or not space.contains(array.astype(space.dtype))):
            raise ValueError(
                f"actions: expected integers in [0, {space.nvec[0]}), got {array.tolist()}")
        return array.astype(np.int64)
    expected = space.shape
    if array.shape != expected:
        raise ValueError(f"actions: expected shape {expected}, got {array.shape}")
    try:
        array = array.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"actions: expected numbers, got dtype {array.dtype}") from None
    if not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[0].tolist()
        raise ValueError(f"actions: expected finite numbers, got {array[tuple(bad)]} at {bad}")
    return np.clip(array, space.low, space.high)
