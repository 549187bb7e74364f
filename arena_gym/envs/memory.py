"""A bound on the envs one process builds: their memory, estimated before they are built.

Every env holds its own MjSpec, MjModel and MjData (about 1.7 MB for the default room,
7.5 MB on the hospital map), so a mistyped `num_envs` could fill the machine. Above
PROBE_ABOVE envs the env builds PROBE_ENVS envs of its world first (after one, which takes
the one-time costs: imports, parsed robots and meshes), measures how much the process grew,
and refuses a count whose estimate passes SHARE of the memory available (the machine's, or
its cgroup's where that is less), naming the estimate and the largest count that fits.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROBE_ABOVE = 256  # envs: fewer always fit (256 hospital envs: ~2 GB)
PROBE_ENVS = 8
SHARE = 0.8  # of the available memory: the rest for buffers, the policy, the OS


def available_bytes() -> int | None:
    """Memory this process may still take: MemAvailable, or its cgroup's room where less
    (None where neither can be read)."""
    out = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                out = int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text())
            room = int(limit) - used
            out = room if out is None else min(out, room)
    except (OSError, ValueError):
        pass
    return out


def resident_bytes() -> int:
    """This process's resident memory."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def check_memory(num_envs: int, build: Callable[[int], Any]) -> None:
    """ValueError when `num_envs` envs made by `build(n)` (an object with `close()`) would
    not fit in memory; builds and closes 1 + PROBE_ENVS envs to estimate it."""
    if num_envs <= PROBE_ABOVE:
        return
    available = available_bytes()
    if available is None:
        return
    warm = build(1)
    try:
        before = resident_bytes()
        probe = build(PROBE_ENVS)
        per_env = max(resident_bytes() - before, 1) / PROBE_ENVS
        probe.close()
    finally:
        warm.close()
    fits = int(available * SHARE / per_env)
    if num_envs > fits:
        raise ValueError(
            f"num_envs: expected at most {fits} envs of this world in the "
            f"{available / 1e9:.1f} GB of memory available ({SHARE:.0%} of it, about "
            f"{per_env / 1e6:.1f} MB an env), got {num_envs}")
