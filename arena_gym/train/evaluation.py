"""Running a policy for N episodes and summarising them as Arena's evaluation does.

One episode loop serves `arena-gym eval`, training's evaluations and the benchmark runner
(arena_gym.bench): `run_episodes` yields each episode's result and metrics
(arena_gym.tasks.metrics); `evaluate` summarises them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.tasks.metrics import SOCIAL
from arena_gym.train.policies import Policy

MAX_EPISODES = 1_000_000  # an evaluation keeps each episode's result (8 bytes a reference)


@dataclass
class EvalSummary:
    """Rates and means over a set of evaluation episodes (success, collision, timeout, path length,
    time; social metrics with people)."""

    episodes: int
    success: float
    collision: float
    timeout: float
    mean_path_length: float  # over successful episodes
    mean_time: float  # s, over successful episodes
    results: list[str] = field(default_factory=list)  # by episode index
    # worlds with pedestrians: means over all episodes of the social metrics (tasks/metrics.py)
    # and the share of episodes that ended hitting a person; empty elsewhere
    social: dict[str, float] = field(default_factory=dict)

    def line(self) -> str:
        text = (f"{self.episodes} episodes: success {self.success:.1%}, collision "
                f"{self.collision:.1%}, timeout {self.timeout:.1%}, mean path length "
                f"{self.mean_path_length:.2f} m, mean time {self.mean_time:.1f} s")
        if self.social:
            s = self.social
            text += (f"; pedestrian collisions {s['pedestrian_collision_rate']:.1%}, time in "
                     f"personal space {s['time_in_personal_space']:.1f} s, min distance "
                     f"{s['min_pedestrian_distance']:.2f} m, speed in personal space "
                     f"{s['speed_in_personal_space']:.3f} m/s")
        return text


def check_episodes(episodes: int) -> int:
    """`episodes` when it is an evaluation's count (1 .. MAX_EPISODES); else ValueError."""
    if isinstance(episodes, bool) or not isinstance(episodes, int) or not (
            1 <= episodes <= MAX_EPISODES):
        raise ValueError(f"episodes: expected an integer in 1..{MAX_EPISODES:,} (each keeps "
                         f"its result), got {episodes!r}")
    return episodes


def evaluate(env: ArenaVectorEnv, policy: Policy, episodes: int, seed: int = 10_000,
             each: Callable[[int, dict[str, Any]], None] | None = None) -> EvalSummary:
    """`episodes` episodes of `policy`, episode k seeded `seed + k` (see run_episodes);
    `each(k, episode)` sees every episode as it ends (e.g. to plot it)."""
    results: list[str] = [""] * check_episodes(episodes)
    paths, times = [], []
    social: dict[str, list[float]] = {key: [] for key in SOCIAL}
    for k, episode in run_episodes(env, policy, episodes, seed):
        if each is not None:
            each(k, episode)
        results[k] = episode["result"]
        if episode["result"] == "goal":
            paths.append(episode["path_length"])
            times.append(episode["time"])
        for key, values in social.items():
            if key in episode:
                values.append(float(episode[key]))
    counts = Counter(results)
    return EvalSummary(
        episodes=episodes,
        success=counts["goal"] / episodes,
        collision=counts["collision"] / episodes,
        timeout=counts["timeout"] / episodes,
        mean_path_length=float(np.mean(paths)) if paths else 0.0,
        mean_time=float(np.mean(times)) if times else 0.0,
        results=results,
        social=_social(social),
    )


def _social(values: dict[str, list[float]]) -> dict[str, float]:
    if not values["pedestrian_collisions"]:
        return {}
    out = {key: float(np.mean(values[key])) for key in SOCIAL if key != "pedestrian_collisions"}
    out["pedestrian_collision_rate"] = float(np.mean(np.array(values["pedestrian_collisions"])
                                                     > 0))
    return out


def run_episodes(env: ArenaVectorEnv, policy: Policy, episodes: int,
                 seed: int = 10_000) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(k, episode)` for k in 0..episodes-1 as they end, `episode` the env's
    `episode_result` of that episode (result, metrics, trajectory, goal) and "env", the
    env that ran it.

    Episode k is seeded `seed + k` whichever env runs it: an env whose episode ended is
    reset (`reset_mask`) with the next episode's seed, so the set of episodes depends on
    neither the number of envs nor the order they finish in (for a policy that acts on
    each env's observation alone). Envs left over once every episode is handed out run
    uncounted episodes (seeded `seed + episodes + env`). The env's curriculum is paused
    meanwhile: evaluation episodes do not move its stage."""
    with env.unwrapped.curriculum.paused():
        yield from _run(env, policy, episodes, seed)


def _run(env: ArenaVectorEnv, policy: Policy, episodes: int,
         seed: int) -> Iterator[tuple[int, dict[str, Any]]]:
    n = env.num_envs
    owner = np.full(n, -1)  # the episode index each env runs; -1: an uncounted one
    start = min(n, episodes)
    owner[:start] = np.arange(start)
    handed = start
    obs, _ = env.reset(seed=[seed + k if k >= 0 else seed + episodes + e
                             for e, k in enumerate(owner)])
    while (owner >= 0).any():
        obs, _, terminated, truncated, info = env.step(policy(obs))
        if "episode_result" in info:
            results = info["episode_result"]
            for e in np.flatnonzero(info["_episode_result"]):
                if owner[e] >= 0:
                    yield int(owner[e]), {**{key: value[e] for key, value in results.items()},
                                          "env": int(e)}
        ended = terminated | truncated
        if not ended.any():
            continue
        seeds = [0] * n
        for e in np.flatnonzero(ended):
            owner[e] = handed if handed < episodes else -1
            seeds[e] = seed + handed if handed < episodes else seed + episodes + int(e)
            handed += handed < episodes
        if (owner >= 0).any():  # else done: no uncounted episode starts (nor its video)
            obs, _ = env.reset(seed=seeds, options={"reset_mask": ended})
