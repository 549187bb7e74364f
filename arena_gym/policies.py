"""Policies that act on batched Dict observations with actions in the robot's range:
baselines (random, reactive) and a loader for trained SB3 models."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from gymnasium import spaces

Policy = Callable[[dict[str, np.ndarray]], np.ndarray]


def random_policy(action_space: spaces.Box, seed: int = 0) -> Policy:
    rng = np.random.default_rng(seed)
    low, high = action_space.low, action_space.high

    def act(obs: dict[str, np.ndarray]) -> np.ndarray:
        return rng.uniform(low, high, size=(len(obs["goal"]), len(low)))

    return act


def reactive_policy(action_space: spaces.Box, angles: np.ndarray, max_range: float,
                    radius: float) -> Policy:
    """Turn toward the goal; slow down and steer away from the nearest obstacle ahead.

    A potential-field controller on the scan: the goal attracts, beams closer than a safety
    distance repel, and the heading error sets the turn rate.
    """
    low, high = action_space.low, action_space.high
    safe = radius + 0.35

    def act(obs: dict[str, np.ndarray]) -> np.ndarray:
        scan = obs["scan"] * max_range if obs["scan"].max() <= 1.0 + 1e-6 else obs["scan"]
        distance, bearing = obs["goal"][:, 0], obs["goal"][:, 1]
        attract = np.column_stack([np.cos(bearing), np.sin(bearing)])
        push = np.clip((safe - scan) / safe, 0.0, 1.0) ** 2  # (n, beams)
        repel = -np.column_stack([(push * np.cos(angles)).sum(1), (push * np.sin(angles)).sum(1)])
        direction = attract + 0.6 * repel
        heading = np.arctan2(direction[:, 1], direction[:, 0])
        ahead = np.abs(((angles + np.pi) % (2 * np.pi)) - np.pi) < 0.5
        front = np.where(ahead[None, :], scan, np.inf).min(axis=1)
        v = high[0] * np.clip((front - radius - 0.05) / 0.5, 0.0, 1.0) * np.cos(heading).clip(0, 1)
        v = np.minimum(v, distance)  # do not overshoot
        omega = np.clip(2.0 * heading, low[-1], high[-1])
        action = np.zeros((len(distance), len(low)))
        action[:, 0], action[:, -1] = v, omega
        return np.clip(action, low, high)

    return act


def sb3_policy(path: str | Path, obs_space: spaces.Dict, action_space: spaces.Box,
               deterministic: bool = True) -> Policy:
    """A saved SB3 model trained through ArenaSB3VecEnv (flat obs, actions in [-1, 1])."""
    try:
        from stable_baselines3 import PPO, SAC
    except ImportError as exc:
        raise ImportError("loading a policy needs stable-baselines3: pip install 'arena_gym[train]'") from exc
    from arena_gym.wrappers.policy_obs import flatten

    path = Path(path)
    algo = SAC if "sac" in path.name.lower() else PPO
    model = algo.load(path, device="cpu")
    low, high = action_space.low, action_space.high

    def act(obs: dict[str, np.ndarray]) -> np.ndarray:
        action, _ = model.predict(flatten(obs, obs_space), deterministic=deterministic)
        return low + (np.clip(action, -1, 1) + 1.0) * 0.5 * (high - low)

    return act
