"""What compiling the kernels costs a process: the first reset and first step of
ArenaVectorEnv(16) with an empty kernel cache (cold), with the cache of an earlier process
(warm), and after an edit of a module no kernel compiles from (config.py: nothing compiles
again), each in fresh processes over a copy of the package.

    python benchmarks/compile.py [--repeats 3]

The ratio warm / cold is the reference in the same run: how much of a first reset and step
is compiling. Per kernel: NUMBA_DEBUG_CACHE=1, or notes in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROCESS = '''
import json, time
import numpy as np
t0 = time.perf_counter()
from arena_gym.envs.vector_env import ArenaVectorEnv
env = ArenaVectorEnv(16)
t1 = time.perf_counter()
env.reset(seed=0)
env.step(np.zeros(env.action_space.shape))
t2 = time.perf_counter()
print(json.dumps({"import_and_build": t1 - t0, "first_reset_and_step": t2 - t1}))
'''


def run(package: Path, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(ARENA_GYM_CACHE=str(cache), PYTHONPATH=str(package.parent))
    out = subprocess.run([sys.executable, "-c", PROCESS], capture_output=True, text=True,
                         check=True, env=env, cwd=package.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows: dict[str, list[dict]] = {"cold": [], "warm": [], "edited": []}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            package = Path(tmp) / "src" / "arena_gym"
            shutil.copytree(ROOT / "arena_gym", package,
                            ignore=shutil.ignore_patterns("__pycache__"))
            cache = Path(tmp) / "cache"
            rows["cold"].append(run(package, cache))
            rows["warm"].append(run(package, cache))
            config = package / "config.py"
            config.write_text(config.read_text() + "\n# an edit no kernel compiles from\n")
            rows["edited"].append(run(package, cache))
    print(f"{'case':8s} {'import+build':>13s} {'reset+step':>11s}")
    for case, runs in rows.items():
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"{case:8s} {med['import_and_build']:12.2f}s {med['first_reset_and_step']:10.2f}s")
    cold = statistics.median(r["first_reset_and_step"] for r in rows["cold"])
    warm = statistics.median(r["first_reset_and_step"] for r in rows["warm"])
    print(f"warm / cold first reset and step: {warm / cold:.2f}")


if __name__ == "__main__":
    main()
