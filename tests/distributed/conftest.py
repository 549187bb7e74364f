"""One local Ray cluster per test process (on 127.0.0.1, as the package starts them), two CPUs,
started on first use and shut down at the session's end: under `pytest -n 2` each xdist worker
that runs these tests has its own (side by side, ~10-20 s start each). Grouping them on one
worker (`--dist loadgroup`) does not work with pytest 9.2 and pytest-xdist 3.8 (xdist renames
`item._nodeid`, which pytest 9 no longer reads).

Its actors are real processes: they import this worktree's arena_gym through PYTHONPATH, which
Ray's workers inherit.
"""

from __future__ import annotations

import pytest

from tests.conftest import require

# starts of the local cluster before a test errors: on a loaded 2-core machine (the other
# xdist worker, other jobs) a raylet has missed Ray's fixed 30 s registration window
STARTS = 3


@pytest.fixture(scope="session")
def ray_cluster():
    from arena_gym.distributed.settings import init_ray

    ray = require("ray", "pip install 'arena_gym[distributed]'")
    for attempt in range(STARTS):
        if ray.is_initialized():
            break
        try:
            init_ray(ray, num_cpus=2, include_dashboard=False, configure_logging=False)
        except Exception:  # Ray gives its raylet 30 s (fixed) to register, then raises
            ray.shutdown()
            if attempt == STARTS - 1:
                raise
    yield ray
    ray.shutdown()
