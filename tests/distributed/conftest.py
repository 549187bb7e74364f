"""One local Ray cluster per test process (per xdist worker), two CPUs, started on first use.

Its actors are real processes: they import this worktree's arena_gym through PYTHONPATH,
which Ray's workers inherit. `.ci/run` groups these tests on one xdist worker
(`--dist loadgroup`, mark `xdist_group("ray")`) so only one cluster starts.
"""

from __future__ import annotations

import pytest

from tests.conftest import require


@pytest.fixture(scope="session")
def ray_cluster():
    ray = require("ray", "pip install 'arena_gym[distributed]'")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    yield ray
    ray.shutdown()
