"""Reward terms of the navigation task, each named, computed for all envs at once.

The total is the sum of the terms; `info["reward_terms"]` carries each term per env.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena_gym.config import RewardConfig


@dataclass
class StepOutcome:
    """What happened to each env in one control step, (num_envs,) arrays."""

    distance_before: np.ndarray
    distance_after: np.ndarray
    reached: np.ndarray  # bool
    collided: np.ndarray  # bool
    min_clearance: np.ndarray  # m from the robot's footprint to the nearest obstacle
    forward_speed: np.ndarray  # commanded, m/s
    action_change: np.ndarray  # |a_t - a_{t-1}| of the normalised action


def reward_terms(cfg: RewardConfig, out: StepOutcome) -> dict[str, np.ndarray]:
    gained = out.distance_before - out.distance_after
    progress = np.where(gained >= 0, cfg.progress * gained, cfg.progress_away * gained)
    n = len(gained)
    return {
        "goal": np.where(out.reached, cfg.goal, 0.0),
        "collision": np.where(out.collided, cfg.collision, 0.0),
        "progress": np.where(out.reached | out.collided, 0.0, progress),
        "safe_distance": np.where(out.min_clearance < cfg.safe_distance_m, cfg.safe_distance, 0.0),
        "reverse": np.where(out.forward_speed < 0, cfg.reverse, 0.0),
        "abrupt_velocity": cfg.abrupt_velocity * out.action_change,
        "time": np.full(n, cfg.time),
    }


def total(terms: dict[str, np.ndarray]) -> np.ndarray:
    return np.sum(list(terms.values()), axis=0)
