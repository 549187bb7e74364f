"""Env steps/s and physics steps/s of the MJX backend against the CPU env, in one run.

    python benchmarks/mjx.py [--envs 1024 4096 16384] [--steps 20] [--repeats 3] [--cpu-max 64]
                             [--impls jax warp]

For each N, with random actions and the 360-beam lidar (the default config):
  mjx    MjxTask.step (jit-compiled, vmapped over N envs; compile time reported apart), for
         each MJX implementation in --impls (default: the one choose_impl picks; "warp" is
         MuJoCo Warp through MJX, on a GPU or on Warp's CPU device)
  cpu    ArenaVectorEnv(N).step (MuJoCo's batch stepping and ray casts), for N <= --cpu-max
         (the CPU env builds one model per env: beyond a few thousand it is the wrong tool)
Physics steps/s = env steps/s x substeps (control_dt / physics_dt, 20 by default). Repeats
take turns between the two; the table shows medians and the mjx / cpu ratio. JAX runs on
its default device: on a machine without a GPU that is the CPU, where MJX is far slower
than MuJoCo's C batch; give small N there (e.g. --envs 16 64) and say so. Compare ratios
within one run, not absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def time_mjx(task, n: int, steps: int, seed: int) -> tuple[float, float]:
    """(compile seconds, env steps/s) of `steps` batched steps of n envs."""
    import jax
    import jax.numpy as jnp

    keys = jnp.stack([jax.random.PRNGKey(seed + i) for i in range(n)])
    rng = np.random.default_rng(seed)
    low, high = task.layout.low, task.layout.high
    actions = jnp.asarray(rng.uniform(low, high, (steps, n, len(low))), jnp.float32)
    start = time.perf_counter()
    state = task.reset(keys)
    state = task.step(state, actions[0])
    jax.block_until_ready(state.reward)
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    for t in range(steps):
        state = task.step(state, actions[t])
    jax.block_until_ready(state.reward)
    return compile_s, n * steps / (time.perf_counter() - start)


def time_cpu(env, n: int, steps: int, seed: int) -> float:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    space = env.action_space
    actions = rng.uniform(space.low, space.high, (steps, *space.shape))
    start = time.perf_counter()
    for t in range(steps):
        env.step(actions[t])
    return n * steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[1024, 4096, 16384])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu-max", type=int, default=64)
    parser.add_argument("--impls", nargs="+", choices=("jax", "warp"), default=None)
    args = parser.parse_args()

    import jax

    from arena_gym.config import load_config
    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.mjx.task import MjxTask

    cfg = load_config()
    tasks = [MjxTask.make(cfg, impl) for impl in args.impls or [None]]
    substeps = cfg.substeps
    print(f"JAX device: {jax.devices()[0]} ({jax.default_backend()}), "
          f"{tasks[0].num_beams} beams, {substeps} physics steps per env step")
    print(f"{'impl':>5} {'N':>6} {'compile s':>9} {'mjx env/s':>10} {'mjx phys/s':>11} "
          f"{'cpu env/s':>10} {'cpu phys/s':>11} {'mjx/cpu':>8}")
    for n in args.envs:
        cpu = ArenaVectorEnv(n) if n <= args.cpu_max else None
        compiles = {t.impl: [] for t in tasks}
        rates = {t.impl: [] for t in tasks}
        ratios = {t.impl: [] for t in tasks}
        cpu_rates = []
        for r in range(args.repeats):
            for task in tasks:
                compile_s, rate = time_mjx(task, n, args.steps, seed=r)
                compiles[task.impl].append(compile_s)
                rates[task.impl].append(rate)
            if cpu is not None:
                cpu_rates.append(time_cpu(cpu, n, args.steps, seed=r))
                for task in tasks:
                    ratios[task.impl].append(rates[task.impl][-1] / cpu_rates[-1])
        if cpu is not None:
            cpu.close()
        c = statistics.median(cpu_rates) if cpu_rates else float("nan")
        for task in tasks:
            m = statistics.median(rates[task.impl])
            ratio = statistics.median(ratios[task.impl]) if cpu_rates else float("nan")
            print(f"{task.impl:>5} {n:>6} {compiles[task.impl][0]:>9.1f} {m:>10.0f} "
                  f"{m * substeps:>11.0f} {c:>10.0f} {c * substeps:>11.0f} {ratio:>8.3f}")

if __name__ == "__main__":
    main()
