"""Env steps/s of the distributed env (2 Ray actors) against the local env, same run; and a
paper estimate of 8 nodes from the measured per-step gather cost.

    python benchmarks/distributed.py [--envs 8 16 32] [--steps 200] [--repeats 3]

For each N, with random actions, in turns of CHUNK steps (machine noise hits both):
  local   ArenaVectorEnv(N).step
  2 actors DistributedVectorEnv(N, shards=2).step on a local Ray cluster (2 CPUs)
Then the actor boundary alone: the per-step `ray.get` of K echo actors (K = 1, 2, 4, 8, all
on this machine) that return a real shard's step result (obs, reward, flags, infos) without
stepping: the gather cost g(K) = a + b K (least squares), beside an empty round trip. The K
actors share this machine's cores (a cluster's run on their own nodes), so b is an upper
bound. The paper estimate for 8 nodes,
each running N envs at this machine's local rate r(N) (weak scaling, one shard per node):
  step time  = N / r(N) + g(8) + 8 x (payload / bandwidth) + latency
with the bandwidth and latency given (defaults 10 Gbit/s, 0.2 ms: a plain data-centre LAN).
Compare ratios within one run; absolute numbers move with the machine's load.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import time

import numpy as np
import ray

from arena_gym.distributed import DistributedVectorEnv
from arena_gym.envs.vector_env import ArenaVectorEnv

CHUNK = 25
ECHO_SHARDS = (1, 2, 4, 8)


@ray.remote(num_cpus=0)
class Echo:
    """Returns a recorded shard step result: the gather without the physics."""

    def __init__(self, result) -> None:
        self.result = result

    def step(self, actions, stage):
        return self.result


def time_local_and_distributed(n: int, steps: int, repeats: int,
                               rng: np.random.Generator) -> tuple[float, float]:
    local = ArenaVectorEnv(n)
    remote = DistributedVectorEnv(n, distributed={"shards": 2})
    local.reset(seed=0)
    remote.reset(seed=0)
    t_local = t_remote = 0.0
    for _ in range(repeats):
        actions = rng.uniform(local.action_space.low, local.action_space.high,
                              (steps, *local.action_space.shape)).astype(np.float32)
        for start in range(0, steps, CHUNK):
            t0 = time.perf_counter()
            for a in actions[start:start + CHUNK]:
                local.step(a)
            t1 = time.perf_counter()
            for a in actions[start:start + CHUNK]:
                remote.step(a)
            t_local, t_remote = t_local + t1 - t0, t_remote + time.perf_counter() - t1
    local.close()
    remote.close()
    total = n * steps * repeats
    return total / t_local, total / t_remote


def shard_result(n: int):
    """One real step result of a shard of n envs (as an actor returns it), and its bytes."""
    env = ArenaVectorEnv(n)
    env.reset(seed=0)
    result = env.step(np.zeros((n, 2), np.float32))
    env.close()
    return result, len(pickle.dumps(result, protocol=5))


def gather_cost(result, shards: int, steps: int) -> float:
    """Seconds per lockstep `ray.get` over `shards` echo actors (result None: empty)."""
    actors = [Echo.remote(result) for _ in range(shards)]
    action = np.zeros((1 if result is None else len(result[1]), 2), np.float32)
    ray.get([a.step.remote(action, 0) for a in actors])  # started and warm
    samples = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(steps):
            ray.get([a.step.remote(action, 0) for a in actors])
        samples.append((time.perf_counter() - t0) / steps)
    for a in actors:
        ray.kill(a)
    return statistics.median(samples)


def estimate(n: int, rate: float, a: float, b: float, size: int,
             args: argparse.Namespace) -> None:
    """Print the paper estimate for args.nodes nodes of n envs each at `rate` env steps/s."""
    k = args.nodes
    compute, gather = n / rate, a + b * k
    wire = k * size * 8 / (args.gbit * 1e9) + args.latency_ms / 1e3
    step = compute + gather + wire
    print(f"  g(K) = {a * 1e3:.2f} + {b * 1e3:.3f} K ms; {k} nodes x {n} envs: step "
          f"{step * 1e3:.2f} ms = compute {compute * 1e3:.2f} + gather {gather * 1e3:.2f} + "
          f"network {wire * 1e3:.2f}; {k * n / step:,.0f} env steps/s = "
          f"{k * n / step / rate:.1f}x one node ({compute / step:.0%} of the ideal {k}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--gbit", type=float, default=10.0, help="network, Gbit/s")
    parser.add_argument("--latency-ms", type=float, default=0.2, help="one round trip")
    args = parser.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False,
             log_to_driver=False)
    rng = np.random.default_rng(0)
    print(f"{'N':>3} {'local steps/s':>14} {'2 actors':>10} {'2 actors/local':>15}")
    rates = {}
    for n in args.envs:
        local, remote = time_local_and_distributed(n, args.steps, args.repeats, rng)
        rates[n] = local
        print(f"{n:>3} {local:>14,.0f} {remote:>10,.0f} {remote / local:>15.2f}")

    empty = gather_cost(None, 1, args.steps)
    print(f"\ngather cost per lockstep step (echo actors on this machine, {args.steps} steps); "
          f"an empty round trip to one actor: {empty * 1e3:.2f} ms")
    print(f"{'N/shard':>7} {'payload':>9} " + " ".join(f"{f'K={k}':>9}" for k in ECHO_SHARDS))
    for n in args.envs:
        result, size = shard_result(n)
        costs = [gather_cost(result, k, args.steps) for k in ECHO_SHARDS]
        print(f"{n:>7} {size / 1024:>7.1f}kB " + " ".join(f"{c * 1e3:>7.2f}ms" for c in costs))
        # K actors share this machine's cores here, while a cluster runs them on their
        # own nodes: the slope also counts actor-side work, so the estimate is pessimistic
        b, a = np.polyfit(ECHO_SHARDS, costs, 1)
        estimate(n, rates[n], a, b, size, args)
    ray.shutdown()


if __name__ == "__main__":
    main()
