"""Checking what a vector env is given (actions, masks, call order), once, at the boundary.

The values of actions are checked by two compiled functions, `clip_into` (finite, clipped
into the space) and `check_indices` (discrete actions in range); the errors they lead to
are made here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_gym.compiled import kernel

_COMPILED = (np.dtype(np.float32), np.dtype(np.float64))  # float types the kernels take


def check_actions(actions: Any, space: spaces.Space, num_envs: int) -> np.ndarray:
    """A (num_envs, dim) float array clipped to `space`, or (num_envs,) discrete indices.

    Wrong shapes and NaN/inf raise ValueError naming what was expected and what came.
    """
    array = checked_shape(actions, space, num_envs)
    if isinstance(space, spaces.MultiDiscrete):
        array = array.astype(np.int64)
        if check_indices(array, int(space.nvec[0])) >= 0:
            raise index_error(array, int(space.nvec[0]))
        return array
    out = np.empty(array.shape)
    if array.ndim == 2:  # (num_envs, dim): the env's boxes, as they are
        bad = clip_into(array, space.low, space.high, out)
    else:
        bad = clip_into(array.reshape(len(array), -1), space.low.reshape(len(array), -1),
                        space.high.reshape(len(array), -1), out.reshape(len(array), -1))
    if bad >= 0:
        raise finite_error(array, bad)
    return out


def checked_shape(actions: Any, space: spaces.Space, num_envs: int) -> np.ndarray:
    """`actions` as an array of the space's shape (MultiDiscrete: (num_envs,) integers);
    a wrong shape or kind of number raises, naming what was expected and what came."""
    array = np.asarray(actions)
    if array.dtype.kind not in "biuf":  # complex parts would be dropped, objects guessed at
        raise ValueError(f"actions: expected real numbers, got dtype {array.dtype}")
    expected = (num_envs,) if isinstance(space, spaces.MultiDiscrete) else space.shape
    if array.shape != expected:
        raise ValueError(f"actions: expected shape {expected}, got {array.shape}")
    if isinstance(space, spaces.MultiDiscrete) and array.dtype.kind not in "iu":
        raise index_error(array, int(space.nvec[0]))
    if array.dtype.kind == "b" or (array.dtype.kind == "f" and array.dtype not in _COMPILED):
        array = array.astype(np.float64)  # numbers, as numpy casts them (float16 too)
    return array


def finite_error(array: np.ndarray, flat: int) -> ValueError:
    """The error for the first value (flat index) that is not a finite number."""
    bad = list(np.unravel_index(flat, array.shape))
    value = np.float64(array[tuple(bad)])
    return ValueError(f"actions: expected finite numbers, got {value} at {[int(i) for i in bad]}")


def index_error(array: np.ndarray, count: int) -> ValueError:
    return ValueError(f"actions: expected integers in [0, {count}), got {array.tolist()}")


@kernel
def clip_into(values, low, high, out):  # pragma: no cover - compiled
    """out = values (2-d) as float64 clipped into [low, high] (the larger of value and low,
    then the smaller of that and high: a value equal to a bound stays as it is); returns
    the flat index of the first value that is not finite (out then partly written), else
    -1."""
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            v = np.float64(values[i, j])
            if not np.isfinite(v):
                return i * values.shape[1] + j
            lo, hi = np.float64(low[i, j]), np.float64(high[i, j])
            v = lo if v < lo else v
            out[i, j] = hi if v > hi else v
    return -1


@kernel
def check_indices(values, count):  # pragma: no cover - compiled
    """The index of the first value outside [0, count), else -1."""
    for i in range(values.shape[0]):
        if not 0 <= values[i] < count:
            return i
    return -1


def check_num_envs(num_envs: Any) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs: expected an integer >= 1, got {num_envs!r}")
    return num_envs


def check_options(options: Any, allowed: tuple[str, ...]) -> None:
    """ValueError unless `options` (reset's) is None or a mapping of `allowed` keys only: an
    option this env does not take is never silently ignored."""
    if options is None:
        return
    if not isinstance(options, Mapping):
        raise ValueError(f"options: expected a dict, got {type(options).__name__}")
    unknown = sorted(repr(k) for k in options if k not in allowed)
    if unknown:
        takes = f"only {', '.join(map(repr, allowed))}" if allowed else \
            "none (this env takes no reset options)"
        raise ValueError(f"options: expected {takes}, got {', '.join(unknown)}")


def reset_mask(options: dict | None, num_envs: int) -> np.ndarray | None:
    """`options["reset_mask"]` as a (num_envs,) bool array; None when not given (an
    option other than reset_mask: ValueError)."""
    check_options(options, ("reset_mask",))
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
