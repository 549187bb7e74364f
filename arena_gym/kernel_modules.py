"""The compiled kernel modules (`*_kernels.py`, see arena_gym/jit.py), imported on first use
and kept. Numba comes with the first one, never at package import; and an import statement
run every step costs ~15 us on the cold caches right after the physics, a cached lookup
none.

    kernels("sim.ray_kernels").fill_origins(pnt, origins)
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType


@functools.cache
def kernels(name: str) -> ModuleType:
    """The kernel module arena_gym.`name` ("sim.ray_kernels"), imported once."""
    return importlib.import_module(f"arena_gym.{name}")
