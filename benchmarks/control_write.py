"""The env's control write through the Controller against a direct write of the same
controls, same run: NavigationCore(N).advance's work, both ways, taking turns.

    python benchmarks/control_write.py [--envs 16] [--steps 400] [--repeats 5]

  direct      controls = twists @ drive.matrix.T written with Simulator.scatter, then
              Simulator.step(substeps) (what NavigationCore.advance did before issue 8)
  controller  Controller.set_twists(robot, twists), then Simulator.step(substeps), which
              writes them (what advance does now)
  write only  the same two without the physics: scatter vs set_twists + Controller.apply

Prints medians of steps/s and the ratio controller / direct (>= 1.0: no speed lost).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from arena_gym.config import EnvConfig
from arena_gym.envs.core import ROBOT, NavigationCore

CHUNK = 25  # steps per turn, so machine noise hits both alike


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    core = NavigationCore(args.envs, EnvConfig())
    core.reset_envs(list(range(args.envs)))
    sim, n, substeps = core.sim, args.envs, core.cfg.substeps
    drive = sim.controller.drive(0, ROBOT)
    rng = np.random.default_rng(0)
    twists = np.zeros((args.steps, n, 3))
    twists[..., 0] = rng.uniform(-0.5, 0.5, (args.steps, n))
    twists[..., 2] = rng.uniform(-1.0, 1.0, (args.steps, n))

    def direct(t: np.ndarray, physics: bool) -> None:
        sim.scatter("ctrl", drive.actuator_ids, t @ drive.matrix.T)
        if physics:
            sim.step(substeps)

    def controller(t: np.ndarray, physics: bool) -> None:
        sim.controller.set_twists(ROBOT, t)
        if physics:
            sim.step(substeps)
        else:
            sim.controller.apply(sim.stepping_groups(), 0.0)

    for physics in (True, False):
        times: dict[str, list[float]] = {"direct": [], "controller": []}
        for _ in range(args.repeats):
            spent = {"direct": 0.0, "controller": 0.0}
            for start in range(0, args.steps, CHUNK):
                for name, write in (("direct", direct), ("controller", controller)):
                    t0 = time.perf_counter()
                    for t in twists[start : start + CHUNK]:
                        write(t, physics)
                    spent[name] += time.perf_counter() - t0
            for name, seconds in spent.items():
                times[name].append(args.steps / seconds)
        d, c = statistics.median(times["direct"]), statistics.median(times["controller"])
        label = "write + physics" if physics else "write only"
        print(f"{label:>16}: direct {d:>10,.0f} steps/s  controller {c:>10,.0f} steps/s  "
              f"controller/direct {c / d:.3f}", flush=True)
    core.close()


if __name__ == "__main__":
    main()
