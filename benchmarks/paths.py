"""Reset cost of global paths: env steps/s on a map with planning on vs off, in one run.

    python benchmarks/paths.py [--map arena_rooms1] [--envs 16] [--steps 600]
                               [--policy reactive|random]

Two vector envs on the same map (`paths.subgoal` on, as configs/maps.yaml plans: a distance
field per episode with wall cost, the subgoal and path progress every step; off: the task
as it was), driven by the same policy,
take turns in chunks of CHUNK steps, so machine noise hits them alike. Prints each one's
env steps/s, episodes ended, and the ratio on/off. "reactive" drives episodes to their
natural end (it follows the subgoal where there is one); "random" ends them early in
collisions, the worst case for reset cost.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.train.policies import make_policy

ASSETS = Path(os.environ.get("ARENA_GYM_ASSETS", Path(__file__).resolve().parents[1] / ".." /
                             "shared" / "assets")).resolve()
CHUNK = 20


class Run:
    def __init__(self, label: str, envs: int, policy: str, seed: int, **config) -> None:
        self.label = label
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the large maps' walls warn about coarsening
            self.env = ArenaVectorEnv(envs, **config)
        self.build_s = time.perf_counter() - t0
        self.policy = make_policy(policy, self.env, seed=seed)
        self.obs, _ = self.env.reset(seed=seed)
        self.seconds, self.steps, self.episodes = 0.0, 0, 0

    def chunk(self) -> None:
        t0 = time.perf_counter()
        for _ in range(CHUNK):
            self.obs, _, terminated, truncated, _ = self.env.step(self.policy(self.obs))
            self.episodes += int((terminated | truncated).sum())
        self.seconds += time.perf_counter() - t0
        self.steps += CHUNK * self.env.num_envs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--map", default="arena_rooms1")
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=600, help="steps per env and run")
    parser.add_argument("--policy", default="reactive", choices=("reactive", "random"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    world = str(ASSETS / "worlds" / args.map / "map" / "map.yaml")
    common = {"world": world, "max_episode_steps": 600}
    on = Run("planning on", args.envs, args.policy, args.seed, **common,
             paths={"subgoal": True, "progress": "path", "wall_cost": 3.0, "comfort": 0.15})
    off = Run("planning off", args.envs, args.policy, args.seed, **common)
    for _ in range(max(1, args.steps // CHUNK)):
        for run in (on, off):
            run.chunk()
    print(f"{args.map}, {args.envs} envs, {args.steps} steps each, policy {args.policy}")
    for run in (on, off):
        print(f"  {run.label:>12}: build {run.build_s:5.1f} s, "
              f"{run.steps / run.seconds:8.1f} env steps/s, {run.episodes} episodes ended")
    ratio = (on.steps / on.seconds) / (off.steps / off.seconds)
    print(f"  ratio on/off: {ratio:.2f}")
    for run in (on, off):
        run.env.close()


if __name__ == "__main__":
    main()
