"""The array namespace of an input: task definitions written once for numpy and JAX."""

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
