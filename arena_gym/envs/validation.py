"""Checking what a vector env is given (actions, masks, call order), once, at the boundary."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from arena_gym.kernel_modules import kernels


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
    if array.ndim == 2 and array.dtype.char in "fd":  # the usual: (num_envs, dim) floats
        out = np.empty(expected)  # one compiled pass: the numpy below, value by value
        if kernels("envs.validation_kernels").clip_into(array, space.low, space.high, out):
            return out
    try:
        array = array.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"actions: expected numbers, got dtype {array.dtype}") from None
    if not np.isfinite(array).all():
        bad = np.argwhere(~np.isfinite(array))[0].tolist()
        raise ValueError(f"actions: expected finite numbers, got {array[tuple(bad)]} at {bad}")
    # np.clip's values, in place on the fresh copy (finite values: no NaN to order)
    np.maximum(array, space.low, out=array)
    return np.minimum(array, space.high, out=array)


def check_num_envs(num_envs: Any) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs: expected an integer >= 1, got {num_envs!r}")
    return num_envs


def reset_mask(options: dict | None, num_envs: int) -> np.ndarray | None:
    """`options["reset_mask"]` as a (num_envs,) bool array; None when not given."""
    if not options or "reset_mask" not in options:
        return None
    mask = np.asarray(options["reset_mask"], dtype=bool)
    if mask.shape != (num_envs,):
        raise ValueError(
            f"options['reset_mask'] must have shape ({num_envs},), got {mask.shape}")
    return mask


def check_reset_first(reset_once: bool) -> None:
    if not reset_once:
        raise RuntimeError("step() called before reset(): expected env.reset() first")


def check_open(closed: bool, what: str) -> None:
    if closed:
        raise RuntimeError(f"{what}() called after close(): expected an open env (make a new one)")
