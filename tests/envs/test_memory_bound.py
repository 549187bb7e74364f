"""A number of envs that cannot fit in memory is refused before they are built, with the
estimate and the largest count that fits."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

# a process whose address space is bounded: without the estimate it would fail (MemoryError)
# after building a few hundred envs, instead of answering at once
DRIVER = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (16 << 30, 16 << 30))
from arena_gym.cli import main
from arena_gym.envs.memory import resident_bytes
code = main(["eval", "random", "--num-envs", "10000000", "--episodes", "1"])
print(code, resident_bytes())
"""


def test_ten_million_envs_are_refused_with_an_estimate_before_any_is_built():
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True,
                         env=env, cwd=root, timeout=600)
    code, resident = (int(v) for v in out.stdout.split())
    assert code == 2, out.stderr[-2000:]
    found = re.fullmatch(
        re.escape("arena-gym: error: num_envs: expected at most ") + r"(\d+)"
        + re.escape(" envs of this world in the ") + r"([\d.]+)"
        + re.escape(" GB of memory available (80% of it, about ") + r"([\d.]+)"
        + re.escape(" MB an env), got 10000000") + "\n", out.stderr)
    assert found, out.stderr[-2000:]
    fits, available, per_env = int(found[1]), float(found[2]) * 1e9, float(found[3]) * 1e6
    assert 0.5e6 < per_env < 20e6  # the default room: ~1.7 MB an env
    assert fits * per_env <= 0.8 * available * 1.05 and fits < 10_000_000
    assert resident < 1.5e9  # nothing but the probe was built
