"""A flat, fixed-scale observation for MLP policies: scan, goal, last action in one Box
(and the subgoal after the goal, where the observation has one).

Fixed scaling (no running statistics): the scan in [0, 1] of its max range, the goal distance
over GOAL_SCALE (clipped at 1), the goal angle over pi, the subgoal's distance over
SUBGOAL_SCALE (clipped at 1) and angle over pi, the last action over its bounds.
Running observation normalisation broke learning on this task (../shared/FACTS.md).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv, VectorObservationWrapper
from gymnasium.vector.utils import batch_space

GOAL_SCALE = 10.0  # m
SUBGOAL_SCALE = 2.0  # m: subgoals lie a lookahead (1.5 m by default) ahead


def flat_space(obs_space: spaces.Dict) -> spaces.Box:
    n = obs_space["scan"].shape[0] + 2 + obs_space["last_action"].shape[0]
    n += 2 if "subgoal" in obs_space.spaces else 0
    return spaces.Box(-1.0, 1.0, (n,), np.float32)


def flatten(obs: dict[str, np.ndarray], obs_space: spaces.Dict) -> np.ndarray:
    """(num_envs, n) float32 from a batched Dict observation."""
    scan = obs["scan"] / obs_space["scan"].high[0]
    goal = np.column_stack([np.minimum(obs["goal"][:, 0] / GOAL_SCALE, 1.0),
                            obs["goal"][:, 1] / np.pi])
    high = np.maximum(np.abs(obs_space["last_action"].low), np.abs(obs_space["last_action"].high))
    action = obs["last_action"] / high
    parts = [scan, goal, action]
    if "subgoal" in obs:
        sub = obs["subgoal"]
        parts.insert(2, np.column_stack([np.minimum(sub[:, 0] / SUBGOAL_SCALE, 1.0),
                                         sub[:, 1] / np.pi]))
    return np.concatenate(parts, axis=1).astype(np.float32)


class FlatObservation(VectorObservationWrapper):
    """A vector env's Dict observation as the flat, fixed-scale Box above (for policies
    whose encoders take a Box: RLlib's defaults)."""

    def __init__(self, env: VectorEnv) -> None:
        super().__init__(env)
        self.single_observation_space = flat_space(env.single_observation_space)
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    def observations(self, observations: dict[str, np.ndarray]) -> np.ndarray:
        return flatten(observations, self.env.single_observation_space)
