"""Reward terms of the navigation task: one small function per term, for all envs at once.

Each term maps (weights, what happened in the step) to a (num_envs,) array; the reward is
their sum, and `info["reward_terms"]` carries each term per env (as in MuJoCo Playground).
"""

from __future__ import annotations

from collections.abc import Callable
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
    # worlds with pedestrians only (None elsewhere: no pedestrian terms)
    pedestrian_distance: np.ndarray | None = None  # m, robot to the nearest person, centres
    hit_pedestrian: np.ndarray | None = None  # bool: the collision was with a person
    speed: np.ndarray | None = None  # m/s the robot moved in the step


def goal(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return np.where(out.reached, cfg.goal, 0.0)


def collision(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return np.where(out.collided, cfg.collision, 0.0)


def progress(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    """Distance gained toward the goal (lost distance weighs progress_away); none in the
    step that ends the episode, whose outcome has its own term."""
    gained = out.distance_before - out.distance_after
    shaped = np.where(gained >= 0, cfg.progress * gained, cfg.progress_away * gained)
    return np.where(out.reached | out.collided, 0.0, shaped)


def safe_distance(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return np.where(out.min_clearance < cfg.safe_distance_m, cfg.safe_distance, 0.0)


def reverse(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return np.where(out.forward_speed < 0, cfg.reverse, 0.0)


def abrupt_velocity(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return cfg.abrupt_velocity * out.action_change


def time(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return np.full(len(out.distance_after), cfg.time)


def pedestrian_collision(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return np.where(out.hit_pedestrian, cfg.pedestrian_collision, 0.0)


def pedestrian_safety(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    return np.where(out.pedestrian_distance < cfg.pedestrian_safety_m,  # type: ignore[operator]
                    cfg.pedestrian_safety, 0.0)


def pedestrian_speed(cfg: RewardConfig, out: StepOutcome) -> np.ndarray:
    """Speed near people costs: the robot's speed while within pedestrian_safety_m."""
    near = out.pedestrian_distance < cfg.pedestrian_safety_m  # type: ignore[operator]
    return np.where(near, cfg.pedestrian_speed * np.abs(out.speed), 0.0)  # type: ignore[arg-type]


TERMS: dict[str, Callable[[RewardConfig, StepOutcome], np.ndarray]] = {
    "goal": goal,
    "collision": collision,
    "progress": progress,
    "safe_distance": safe_distance,
    "reverse": reverse,
    "abrupt_velocity": abrupt_velocity,
    "time": time,
}


PEDESTRIAN_TERMS: dict[str, Callable[[RewardConfig, StepOutcome], np.ndarray]] = {
    "pedestrian_collision": pedestrian_collision,
    "pedestrian_safety": pedestrian_safety,
    "pedestrian_speed": pedestrian_speed,
}


def reward_terms(cfg: RewardConfig, out: StepOutcome) -> dict[str, np.ndarray]:
    """TERMS, and PEDESTRIAN_TERMS in worlds with pedestrians."""
    terms = TERMS if out.pedestrian_distance is None else {**TERMS, **PEDESTRIAN_TERMS}
    return {name: term(cfg, out) for name, term in terms.items()}


def total(terms: dict[str, np.ndarray]) -> np.ndarray:
    return np.sum(list(terms.values()), axis=0)
