"""The array namespace of an input, and the few elementwise functions the shared
definitions call (arena_gym.compiled.shared): written once for numpy arrays and JAX arrays
(the MJX backend's jit), with a scalar form for the compiled kernels."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from arena_gym.compiled import shared


def xp(array: Any) -> Any:
    """numpy for numpy arrays and Python or numpy scalars, jax.numpy for JAX arrays and
    tracers (both implement the array API's `__array_namespace__`). Nothing imports JAX
    here: a JAX array brings its own namespace."""
    if type(array) is np.ndarray:
        return np
    space = getattr(array, "__array_namespace__", None)
    return np if space is None else space()


@shared(scalar=lambda condition, a, b: a if condition else b)
def where(condition: Any, a: Any, b: Any) -> Any:
    """`a` where `condition` holds, else `b`, elementwise (the namespace's `where`)."""
    return xp(condition).where(condition, a, b)


@shared(scalar=lambda y, x: math.atan2(y, x))
def arctan2(y: Any, x: Any) -> Any:
    return xp(y).arctan2(y, x)


@shared(scalar=lambda a, b: math.hypot(a, b))
def hypot(a: Any, b: Any) -> Any:
    return xp(a).hypot(a, b)


@shared(scalar=lambda a, b: a if a >= b or a != a else b)
def maximum(a: Any, b: Any) -> Any:
    """The larger of `a` and `b`, elementwise; NaN where either is (the namespace's
    `maximum`)."""
    return xp(a).maximum(a, b)


@shared(scalar=lambda like, value: float(value))
def full(like: Any, value: float) -> Any:
    """`value` in the shape of `like` (the namespace's default float)."""
    return xp(like).full(like.shape, value)
