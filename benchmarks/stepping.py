"""Aggregate physics steps/s of Simulator.step against a bare mujoco.batch.Batch.

    python benchmarks/stepping.py [--envs 1 4 16 64] [--repeats 5] [--budget 40000]

For each N, N envs of the default world (arena_gym.worlds.build_default_world, env i seeded
with i) are driven with one constant cmd_vel and stepped two ways, from the same start state:

  ours   Simulator.step(50) calls
  bare   mujoco.batch.Batch(models[0], N, nthread=os.cpu_count(), persistent=True) over the
         same compiled models (set_models), batch.step(nstep=10) calls

Both run the same number of steps per env (about `budget` steps over all envs) and take
turns every 50 steps, each timing only its own calls, so that a change in machine speed
hits both alike; a repeat restarts both from the start state. The table shows the median
steps/s of each and the median of the per-repeat ratios. Both end in the same state, which
the script checks. At N = 1 the simulator steps the single env on its own MjData (a pool
group), not in a Batch. Machines are noisy: compare ratios measured in one run, not
absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import mujoco
import mujoco.batch
import numpy as np

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator
from arena_gym.worlds import build_default_world
from arena_gym.worlds.default import ROBOT_NAME

STATE = mujoco.mjtState.mjSTATE_INTEGRATION  # qpos, qvel, act, ctrl, time, ...
SIM_CHUNK = 50  # steps per Simulator.step call
BARE_CHUNK = 10  # steps per Batch.step call (the simulator's tick)
CMD_VEL = (0.2, 0.3)  # m/s, rad/s: circles of 0.67 m radius


class Bench:
    """N envs of the default world, a Simulator over them and a bare Batch of their models."""

    def __init__(self, n: int, steps: int) -> None:
        self.n, self.steps = n, steps
        self.store = SceneStore(num_envs=n)
        for env in range(n):
            build_default_world(self.store, env, np.random.default_rng(env))
        self.sim = Simulator(self.store)
        for env in range(n):
            self.sim.set_cmd_vel(env, ROBOT_NAME, *CMD_VEL)
        self.sim.step(SIM_CHUNK)  # compile, group, apply the commands, settle a little
        self.models = [self.store[env].model for env in range(n)]
        self.start = np.stack([self._state(env) for env in range(n)])
        self.groups = self.sim.groups()
        self.bare = mujoco.batch.Batch(
            self.models[0], n, nthread=os.cpu_count() or 1, persistent=True
        )
        self.bare.set_models(self.models)

    def _state(self, env: int) -> np.ndarray:
        state = np.empty(mujoco.mj_stateSize(self.models[env], STATE))
        mujoco.mj_getState(self.models[env], self.store[env].data, state, STATE)
        return state

    def restart(self) -> None:
        """Put both back to the start state."""
        for env in range(self.n):
            mujoco.mj_setState(self.models[env], self.store[env].data, self.start[env], STATE)
        self.sim.step(0)  # hands the restored states to the stepping groups
        self.bare.state[:] = self.start

    def measure(self) -> tuple[float, float]:
        """Steps/s of (ours, bare) over `steps` steps per env from the start state.

        The two alternate every 50 steps (one Simulator.step(50) against five
        batch.step(nstep=10)), taking turns to go first, and each sums its own time: both do
        the same physics, and a change in machine speed hits both alike.
        """
        self.restart()
        ours = bare = 0.0
        for block in range(self.steps // SIM_CHUNK):
            for which in ((0, 1) if block % 2 == 0 else (1, 0)):
                t0 = time.perf_counter()
                if which == 0:
                    self.sim.step(SIM_CHUNK)
                    ours += time.perf_counter() - t0
                else:
                    for _ in range(SIM_CHUNK // BARE_CHUNK):
                        self.bare.step(nstep=BARE_CHUNK)
                    bare += time.perf_counter() - t0
        total = self.n * self.steps
        return total / ours, total / bare

    def max_qpos_difference(self) -> float:
        """After a run of each from the same start: how far apart their end states are."""
        ours = np.stack([self.store[env].data.qpos for env in range(self.n)])
        return float(np.abs(ours - self.bare.bind("qpos")).max())

    def close(self) -> None:
        self.sim.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=int, default=40_000,
                        help="physics steps over all envs per repeat and method (default: 40000)")
    args = parser.parse_args()

    print(f"{os.cpu_count()} CPUs, mujoco {mujoco.__version__}, cmd_vel {CMD_VEL}, "
          f"medians of {args.repeats} repeats")
    rows = []
    t_total = time.perf_counter()
    for n in args.envs:
        steps = max(SIM_CHUNK, args.budget // n // SIM_CHUNK * SIM_CHUNK)
        bench = Bench(n, steps)
        ours, bare = zip(*(bench.measure() for _ in range(args.repeats)), strict=True)
        diff = bench.max_qpos_difference()
        groups = ", ".join(f"{kind} x{len(ids)}" for kind, ids in bench.groups)
        bench.close()
        o, b = statistics.median(ours), statistics.median(bare)
        ratio = statistics.median(x / y for x, y in zip(ours, bare, strict=True))
        rows.append((n, steps, o, b, ratio, groups, diff))
        print(f"  N={n}: {steps} steps per env, groups: {groups}, "
              f"end-state qpos difference ours vs bare: {diff:.1e}", flush=True)

    print()
    print(f"{'N':>4} {'ours steps/s':>13} {'bare steps/s':>13} {'ratio':>6}")
    for n, _, o, b, ratio, _, _ in rows:
        print(f"{n:>4} {o:>13,.0f} {b:>13,.0f} {ratio:>6.2f}")
    print(f"(total {time.perf_counter() - t_total:.0f} s)")


if __name__ == "__main__":
    main()
