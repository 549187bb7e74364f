"""Where the package keeps what it derives and reuses across runs (mesh decompositions,
compiled kernels): ARENA_GYM_CACHE, else the user's cache folder (XDG_CACHE_HOME or
~/.cache) under `arena_gym`."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    root = os.environ.get("ARENA_GYM_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "arena_gym"
    )
    return Path(root)
