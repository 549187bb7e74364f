"""A flat, fixed-scale observation for MLP policies: every observed key in one Box.

In this order: the scan in [0, 1] of its max range; the goal's distance over GOAL_SCALE
(clipped at 1) and angle over pi; the subgoal's (where the observation has one) distance
over SUBGOAL_SCALE (clipped at 1) and angle over pi; the last action over its bounds; the
observed pedestrians (`observe_pedestrians: k`), each row's position over PEDESTRIAN_SCALE
and velocity over PEDESTRIAN_SPEED (clipped to [-1, 1]) and its presence flag; then every
other key (a configured sensor's, a plugin's) by name, each a float vector: over its bound
where the space has finite bounds, as it comes where it has none.
A key that is not a float vector (an image) cannot go in: `flat_space` names it.
Fixed scaling (no running statistics): running observation normalisation broke learning on
this task (../shared/FACTS.md).

`observation_layout(space)` lists the keys and shapes the flat observation is made of; a
model file records it (arena_gym.train.training) and loading checks it
(arena_gym.train.model_files).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv, VectorObservationWrapper
from gymnasium.vector.utils import batch_space

GOAL_SCALE = 10.0  # m
SUBGOAL_SCALE = 2.0  # m: subgoals lie a lookahead (1.5 m by default) ahead
PEDESTRIAN_SCALE = 5.0  # m: people further away read as 5 m
PEDESTRIAN_SPEED = 2.0  # m/s: walkers move at ~1.3 m/s
TASK_KEYS = ("scan", "goal", "subgoal", "last_action", "pedestrians")  # in this order


def observation_layout(obs_space: spaces.Dict) -> dict[str, list[int]]:
    """The keys of the flat observation, in order, with their shapes (JSON-ready)."""
    return {key: [int(n) for n in obs_space[key].shape] for key in _keys(obs_space)}


def describe(layout: dict[str, list[int]]) -> str:
    """'scan (360), goal (2), last_action (2), pedestrians (2x5)'."""
    return ", ".join(f"{key} ({'x'.join(str(n) for n in shape)})"
                     for key, shape in layout.items())


def _keys(obs_space: spaces.Dict) -> list[str]:
    task = [key for key in TASK_KEYS if key in obs_space.spaces]
    others = sorted(key for key in obs_space.spaces if key not in TASK_KEYS)
    refused = {key: obs_space[key] for key in others if not _vector(obs_space[key])}
    if refused:
        got = ", ".join(f"{key} {space}" for key, space in refused.items())
        raise ValueError(f"policy observation: expected float vectors in the flat observation "
                         f"(Box of one dimension), got {got}; leave {sorted(refused)} out of "
                         "the observation, or use a policy for Dict observations "
                         "(ArenaSB3VecEnv(flat=False), MultiInputPolicy)")
    return task + others


def _vector(space: spaces.Space) -> bool:
    return (isinstance(space, spaces.Box) and len(space.shape) == 1
            and np.issubdtype(space.dtype, np.floating))


def _bound(space: spaces.Box) -> np.ndarray:
    """Per element: what a value is divided by (1 where the space is unbounded)."""
    high = np.maximum(np.abs(space.low), np.abs(space.high))
    return np.where(np.isfinite(high) & (high > 0), high, 1.0).astype(space.dtype)


def flat_space(obs_space: spaces.Dict) -> spaces.Box:
    """The Box `flatten` gives: [-1, 1] but for unbounded sensor keys (as they come)."""
    lows, highs = [], []
    for key in _keys(obs_space):
        space = obs_space[key]
        n = int(np.prod(space.shape))
        if key in TASK_KEYS:
            lows.append(np.full(n, -1.0))
            highs.append(np.full(n, 1.0))
        else:
            finite = np.isfinite(space.low) & np.isfinite(space.high)
            lows.append(np.where(finite, -1.0, -np.inf))
            highs.append(np.where(finite, 1.0, np.inf))
    return spaces.Box(np.concatenate(lows).astype(np.float32),
                      np.concatenate(highs).astype(np.float32))


def flatten(obs: dict[str, np.ndarray], obs_space: spaces.Dict) -> np.ndarray:
    """(num_envs, n) float32 from a batched Dict observation."""
    parts = []
    for key in _keys(obs_space):
        value = np.asarray(obs[key])
        if key == "scan":
            parts.append(value / obs_space["scan"].high[0])
        elif key in ("goal", "subgoal"):
            scale = GOAL_SCALE if key == "goal" else SUBGOAL_SCALE
            parts.append(np.column_stack([np.minimum(value[:, 0] / scale, 1.0),
                                          value[:, 1] / np.pi]))
        elif key == "last_action":
            parts.append(value / _bound(obs_space["last_action"]))
        elif key == "pedestrians":  # (n, k, 5): x, y, vx, vy, present
            scale = np.array([PEDESTRIAN_SCALE] * 2 + [PEDESTRIAN_SPEED] * 2 + [1.0])
            parts.append(np.clip(value / scale, -1.0, 1.0).reshape(len(value), -1))
        else:
            parts.append(value / _bound(obs_space[key]))
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
