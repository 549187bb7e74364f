"""Running a policy for N episodes and summarising them as Arena's evaluation does."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.policies import Policy


@dataclass
class EvalSummary:
    episodes: int
    success: float
    collision: float
    timeout: float
    mean_path_length: float  # over successful episodes
    mean_time: float  # s, over successful episodes
    results: list[str] = field(default_factory=list)
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


SOCIAL = ("time_in_personal_space", "min_pedestrian_distance", "speed_in_personal_space")


def evaluate(env: ArenaVectorEnv, policy: Policy, episodes: int, seed: int = 10_000) -> EvalSummary:
    """`episodes` episodes split evenly over the envs (env i seeded seed + i), so that the
    set does not depend on which episodes end first: the same seed, the same episodes.
    The env's curriculum is paused meanwhile: evaluation episodes do not move its stage."""
    with env.unwrapped.curriculum.paused():
        return _run(env, policy, episodes, seed)


def _run(env: ArenaVectorEnv, policy: Policy, episodes: int, seed: int) -> EvalSummary:
    n = env.num_envs
    quota = np.full(n, episodes // n) + (np.arange(n) < episodes % n)
    done = np.zeros(n, dtype=int)
    obs, _ = env.reset(seed=seed)
    results: list[str] = []
    paths, times = [], []
    social: dict[str, list[float]] = {key: [] for key in (*SOCIAL, "pedestrian_collisions")}
    while (done < quota).any():
        obs, _, _, _, info = env.step(policy(obs))
        if "episode_result" not in info:
            continue
        episode = info["episode_result"]
        for e in np.flatnonzero(info["_episode_result"]):
            if done[e] >= quota[e]:
                continue
            done[e] += 1
            result = episode["result"][e]
            results.append(result)
            if result == "goal":
                paths.append(episode["path_length"][e])
                times.append(episode["time"][e])
            for key, values in social.items():
                if key in episode:
                    values.append(float(episode[key][e]))
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
    out = {key: float(np.mean(values[key])) for key in SOCIAL}
    out["pedestrian_collision_rate"] = float(np.mean(np.array(values["pedestrian_collisions"])
                                                     > 0))
    return out
