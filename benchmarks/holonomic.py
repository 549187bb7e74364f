"""Physics steps/s of the three drives, same run: roller (mecanum) Ridgeback, force-based
(planar) Ridgeback, and a differential drive (the Jackal, also 4 wheels; and the burger).

    python benchmarks/holonomic.py [--envs 16] [--seconds 4] [--repeats 3]

Each robot stands alone in N envs on the ground plane, driven with a constant command, and
is stepped by Simulator.step(50) calls. Repeats take turns among the robots so that machine
noise hits all alike; the table shows the median and each robot's ratio to the planar one.
Needs ../shared/assets (or ARENA_GYM_ASSETS).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.fixtures is imported in _robot, after this

ASSETS = Path(os.environ.get("ARENA_GYM_ASSETS", ROOT.parent / "shared" / "assets"))
CHUNK = 50


def _robot(name: str) -> tuple[str | Path, list[Path], tuple[float, ...]]:
    from tests.fixtures.mecanum import mecanum_ridgeback

    robot = "ridgeback" if name.startswith("ridgeback") else name
    urdf = ASSETS / "robots" / robot / f"{robot}.urdf"
    packages = [ASSETS / "robots" / robot / "packages"]
    if name == "ridgeback_rollers":
        return mecanum_ridgeback(urdf), packages, (0.2, 0.1, 0.2)
    if name == "ridgeback_planar":
        return urdf, packages, (0.2, 0.1, 0.2)
    return urdf, packages, (0.2, 0.2)


def build(name: str, n: int) -> Simulator:
    urdf, packages, command = _robot(name)
    store = SceneStore(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for env in range(n):
            store[env].spawn_urdf("robot", urdf, package_paths=packages)
    sim = Simulator(store)
    for env in range(n):
        sim.set_cmd_vel(env, "robot", *command)
    sim.step(CHUNK)
    return sim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=4.0, help="sim seconds per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    names = ["ridgeback_rollers", "ridgeback_planar", "jackal", "burger"]
    sims = {name: build(name, args.envs) for name in names}
    steps = round(args.seconds / 0.002)
    rates: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(args.repeats):
        for name, sim in sims.items():
            t0 = time.perf_counter()
            for _ in range(steps // CHUNK):
                sim.step(CHUNK)
            rates[name].append(args.envs * (steps // CHUNK) * CHUNK / (time.perf_counter() - t0))
    base = statistics.median(rates["ridgeback_planar"])
    print(f"{args.envs} envs, {args.seconds:g} sim s per repeat, median of {args.repeats}")
    print(f"{'robot':>18} {'bodies':>7} {'steps/s':>10} {'vs planar':>10}")
    for name, sim in sims.items():
        rate = statistics.median(rates[name])
        nbody = sim.store[0].model.nbody - 1
        print(f"{name:>18} {nbody:>7} {rate:>10,.0f} {rate / base:>10.2f}")


if __name__ == "__main__":
    main()
