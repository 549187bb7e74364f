"""Soak: the 16-env vector env under random actions, spawn/delete bursts and forced divergences.

    python benchmarks/soak.py [--steps 1000000] [--envs 16] [--seed 0]

`--steps` counts env steps (16 per vector step). Every 20 vector steps a burst spawns 1-3 boxes
into a random env (or deletes an earlier burst's boxes); every 25 vector steps a random env gets
NaN velocities before its physics, which the simulator must report in `sim.diverged` and reset.
Reports RSS growth after warm-up (target: flat within 5 %), divergences found vs forced (target:
all), and env steps/s against a reference measured in the same run: the same env with random
actions only, in turns with the soak (the machine is noisy; compare the ratio).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import time

import numpy as np

from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.scene import Prim

BURST_EVERY = 20  # vector steps
DIVERGE_EVERY = 25
TURN = 200  # vector steps per turn of soak vs reference


def rss_mib(trim: bool = False) -> float:
    """Resident memory; with `trim`, after handing glibc's free arena pages back to the OS
    (recompiles and regroups free many blocks from worker threads, which glibc keeps cached:
    that is the allocator's high-water mark, not live memory)."""
    if trim:
        gc.collect()
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc: report untrimmed
            pass
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Soak:
    def __init__(self, envs: int, seed: int) -> None:
        self.env = ArenaVectorEnv(envs)
        self.rng = np.random.default_rng(seed)
        self.env.reset(seed=seed)
        self.sim = self.env.core.sim
        self.store = self.env.core.store
        self.spawned: dict[int, list[str]] = {}
        self.bursts = self.forced = self.found = self.extra = 0
        self.count = 0

    def step(self, chaos: bool) -> None:
        env, rng = self.env, self.rng
        if chaos and self.count % BURST_EVERY == 0:
            self.burst()
        forced = None
        if chaos and self.count % DIVERGE_EVERY == DIVERGE_EVERY // 2:
            forced = int(rng.integers(env.num_envs))
            self.sim.state(forced, "qvel")[:] = np.nan
            self.forced += 1
        env.step(rng.uniform(env.action_space.low, env.action_space.high))
        diverged = set(self.sim.diverged)
        if forced is not None:
            self.found += forced in diverged
            diverged.discard(forced)
        self.extra += len(diverged)
        self.count += 1

    def burst(self) -> None:
        rng = self.rng
        e = int(rng.integers(self.env.num_envs))
        if self.spawned.get(e) and rng.random() < 0.5:
            self.store[e].delete(self.spawned.pop(e))
        else:
            names = [f"soak{self.bursts}_{i}" for i in range(int(rng.integers(1, 4)))]
            self.store[e].spawn_prims([Prim(n, pose=(*rng.uniform(-2.5, 2.5, 2), 0.2, 0.0),
                                            scale=(0.2, 0.2, 0.4)) for n in names])
            self.spawned.setdefault(e, []).extend(names)
        self.bursts += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="env steps (default 1M)")
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    soak, reference = Soak(args.envs, args.seed), Soak(args.envs, args.seed + 1)
    vector_steps = max(1, args.steps // args.envs)
    warm = max(TURN, vector_steps // 10)
    rss_warm = None
    t_soak = t_ref = 0.0
    n_ref = 0
    samples = []
    while soak.count < vector_steps:
        n = min(TURN, vector_steps - soak.count)
        t0 = time.perf_counter()
        for _ in range(n):
            soak.step(chaos=True)
        t_soak += time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(max(1, n // 4)):  # the reference: a quarter of the soak's steps
            reference.step(chaos=False)
            n_ref += 1
        t_ref += time.perf_counter() - t0
        if rss_warm is None and soak.count >= warm:
            rss_warm = (rss_mib(), rss_mib(trim=True))
        samples.append((soak.count * args.envs, rss_mib(), rss_mib(trim=True)))
    rss_end = (rss_mib(), rss_mib(trim=True))
    rss_warm = rss_warm or samples[0][1:]
    env_steps = soak.count * args.envs
    ours, ref = env_steps / t_soak, n_ref * args.envs / t_ref
    print(f"soak: {env_steps:,} env steps ({args.envs} envs), {soak.bursts} spawn/delete bursts, "
          f"{soak.forced} forced divergences")
    print(f"  divergences found vs forced: {soak.found}/{soak.forced}; "
          f"unforced reports: {soak.extra}")
    for i, label in enumerate(("raw", "after malloc_trim")):
        print(f"  RSS ({label}) after warm-up {rss_warm[i]:.1f} MiB, at end {rss_end[i]:.1f} MiB: "
              f"{100 * (rss_end[i] - rss_warm[i]) / rss_warm[i]:+.2f} % (target within 5 %)")
    print(f"  env steps/s: soak {ours:,.0f}, reference (random actions only, same run) "
          f"{ref:,.0f}: ratio {ours / ref:.2f}")
    step = max(1, len(samples) // 8)
    print("  RSS samples (env steps: raw / trimmed MiB): " + ", ".join(
        f"{s:,}: {r:.1f}/{t:.1f}" for s, r, t in samples[::step]))
    soak.env.close()
    reference.env.close()


if __name__ == "__main__":
    main()
