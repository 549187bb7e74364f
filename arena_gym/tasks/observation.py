"""The task's observation: its space, and the goal in the robot's frame.

`obs["scan"]` (ranges, normalised by max range when configured), `obs["goal"]` (distance,
bearing in the robot's frame) and `obs["last_action"]` (the last commanded twist); with
`observe_pedestrians: k`, `obs["pedestrians"]` (k, 5): the k nearest people's position and
velocity in the robot frame (x forward, y left) and 1 where a person is (0-rows after).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from arena_gym.compiled import shared
from arena_gym.geometry.arrays import arctan2, hypot, where, xp
from arena_gym.geometry.rotations import wrap_angle


def observation_space(beams: int, scan_high: float, action_low: tuple[float, ...],
                      action_high: tuple[float, ...]) -> spaces.Dict:
    return spaces.Dict({
        "scan": spaces.Box(0.0, scan_high, (beams,), np.float32),
        "goal": spaces.Box(np.array([0.0, -np.pi], np.float32),
                           np.array([np.inf, np.pi], np.float32)),
        "last_action": spaces.Box(np.array(action_low, np.float32),
                                  np.array(action_high, np.float32)),
    })


def pedestrians_space(k: int) -> spaces.Box:
    return spaces.Box(-np.inf, np.inf, (k, 5), np.float32)


def nearest_pedestrians(pos: np.ndarray, vel: np.ndarray, present: np.ndarray,
                        pose: np.ndarray, k: int) -> np.ndarray:
    """(E, k, 5): for each env's robot (pose (E, 4)), its k nearest pedestrians (pos, vel
    (E, P, 2), present (E, P)) in the robot frame: x, y, vx, vy, 1; nearest first."""
    delta = pos - pose[:, None, :2]
    dist = np.where(present, np.hypot(delta[..., 0], delta[..., 1]), np.inf)
    order = np.argsort(dist, axis=1, kind="stable")[:, :k]
    c, s = np.cos(pose[:, 3])[:, None], np.sin(pose[:, 3])[:, None]

    def frame(v: np.ndarray) -> np.ndarray:
        v = np.take_along_axis(v, order[..., None], axis=1)
        return np.stack([c * v[..., 0] + s * v[..., 1], -s * v[..., 0] + c * v[..., 1]], -1)

    here = np.take_along_axis(present, order, axis=1)
    out = np.concatenate([frame(delta), frame(vel), here[..., None].astype(float)], -1)
    out[~here] = 0.0
    if out.shape[1] < k:  # fewer pedestrians than k
        out = np.concatenate([out, np.zeros((len(out), k - out.shape[1], 5))], axis=1)
    return out


@shared
def clipped_range(reading: Any, max_range: float) -> Any:
    """The policy's range in metres of a REP 117 reading (+inf: no return within range,
    -inf: closer than the lidar's min range): clipped into [0, max_range], so that the
    infinities read max_range and 0 (finite readings lie in [range_min, range_max]); NaN
    stays NaN. numpy arrays, or scalars."""
    return where(reading < 0, 0.0, where(reading > max_range, max_range, reading))


def goal_polar(goal: np.ndarray, pose: np.ndarray) -> np.ndarray:
    """(num_envs, 2): distance and bearing of each goal (num_envs, 2) from planar poses
    (num_envs, 4: x, y, z, yaw). numpy or JAX arrays (the MJX backend's step calls it)."""
    delta = goal - pose[:, :2]
    distance, bearing = polar(delta[:, 0], delta[:, 1], pose[:, 3])
    if xp(pose) is np:  # into one buffer: np.stack's checks cost more than this whole function
        out = np.empty((len(delta), 2), np.result_type(delta, pose))  # np.stack's dtype
        out[:, 0], out[:, 1] = distance, bearing
        return out
    return xp(pose).stack([distance, bearing], axis=1)


@shared
def polar(dx: Any, dy: Any, heading: Any) -> tuple[Any, Any]:
    """Distance and bearing (rad, in [-pi, pi), from `heading`) of the offset (dx, dy):
    numpy or JAX arrays, or scalars."""
    return hypot(dx, dy), wrap_angle(arctan2(dy, dx) - heading)
