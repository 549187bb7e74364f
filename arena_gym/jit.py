"""Compiled kernels: numba, imported by the first kernel module that needs it.

The hot paths' loops (the lidar's rays, the crowd's forces) are numba functions in modules
of their own (`*_kernels.py`), imported on first use, never at package import. Compiled
machine code is cached on disk under the project's cache (ARENA_GYM_CACHE, else the user's
cache dir, `numba/`), never beside the package's sources: a new process loads it in
milliseconds instead of compiling again (seconds). `NUMBA_CACHE_DIR` set by the user wins.

    from arena_gym.jit import numba   # in a kernel module
    @numba.njit(cache=True)
    def kernel(...): ...
"""

from __future__ import annotations

import os

from arena_gym.scene.meshes import cache_dir

os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_dir() / "numba"))

try:
    import numba
except ImportError as exc:  # pragma: no cover - a dependency of the package
    raise ImportError("arena_gym's compiled kernels need numba: pip install 'numba>=0.61'"
                      ) from exc

if numba.config.CACHE_DIR != os.environ["NUMBA_CACHE_DIR"]:  # numba imported earlier
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]

__all__ = ["numba"]
