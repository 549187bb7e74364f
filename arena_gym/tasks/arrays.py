"""The array namespace of an input, and the few elementwise functions the task's shared
definitions call: written once for numpy arrays, JAX arrays (the MJX backend's jit) and
numba's scalars (the compiled per-step kernels: tasks/array_kernels.py compiles them)."""

from __future__ import annotations

from typing import Any

import numpy as np


def xp(array: Any) -> Any:
    """numpy for numpy arrays and Python or numpy scalars, jax.numpy for JAX arrays and
    tracers (both implement the array API's `__array_namespace__`). Nothing imports JAX
    here: a JAX array brings its own namespace."""
    if type(array) is np.ndarray:  # the numpy env asks this a dozen times a step
        return np
    space = getattr(array, "__array_namespace__", None)
    return np if space is None else space()


def where(condition: Any, a: Any, b: Any) -> Any:
    """`a` where `condition` holds, else `b`, elementwise (the namespace's `where`)."""
    return xp(condition).where(condition, a, b)


def arctan2(y: Any, x: Any) -> Any:
    return xp(y).arctan2(y, x)


def hypot(a: Any, b: Any) -> Any:
    return xp(a).hypot(a, b)


def full(like: Any, value: float) -> Any:
    """`value` in the shape of `like` (the namespace's default float)."""
    return xp(like).full(like.shape, value)
