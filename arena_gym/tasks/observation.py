"""The task's observation: its space, and the goal in the robot's frame.

`obs["scan"]` (ranges, normalised by max range when configured), `obs["goal"]` (distance,
bearing in the robot's frame) and `obs["last_action"]` (the last commanded twist).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from arena_gym.scene.rotations import wrap_angle


def observation_space(beams: int, scan_high: float, action_low: tuple[float, ...],
                      action_high: tuple[float, ...]) -> spaces.Dict:
    return spaces.Dict({
        "scan": spaces.Box(0.0, scan_high, (beams,), np.float32),
        "goal": spaces.Box(np.array([0.0, -np.pi], np.float32),
                           np.array([np.inf, np.pi], np.float32)),
        "last_action": spaces.Box(np.array(action_low, np.float32),
                                  np.array(action_high, np.float32)),
    })


def goal_polar(goal: np.ndarray, pose: np.ndarray) -> np.ndarray:
    """(num_envs, 2): distance and bearing of each goal (num_envs, 2) from planar poses
    (num_envs, 4: x, y, z, yaw)."""
    delta = goal - pose[:, :2]
    distance = np.hypot(delta[:, 0], delta[:, 1])
    angle = wrap_angle(np.arctan2(delta[:, 1], delta[:, 0]) - pose[:, 3])
    return np.column_stack([distance, angle])

