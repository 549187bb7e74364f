"""The task's observation: its space, and the goal in the robot's frame.

`obs["scan"]` (ranges, normalised by max range when configured), `obs["goal"]` (distance,
bearing in the robot's frame) and `obs["last_action"]` (the last commanded twist); with
`observe_pedestrians: k`, `obs["pedestrians"]` (k, 5): the k nearest people's position and
velocity in the robot frame (x forward, y left) and 1 where a person is (0-rows after).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_gym.compiled import kernel, shared
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


@kernel
def nearest_pedestrians(pos, vel, present, pose, out):  # pragma: no cover - compiled
    """For each env's robot (pose (E, 4)), its k = out.shape[1] nearest pedestrians (pos,
    vel (E, P, 2), present (E, P)) in the robot frame, into out (E, k, 5): x, y, vx, vy, 1;
    nearest first (of equal distances, the lower index), rows past the present ones 0."""
    for e in range(pose.shape[0]):
        c, s = math.cos(pose[e, 3]), math.sin(pose[e, 3])
        last, last_p = -1.0, -1  # the row before's squared distance and pedestrian
        for row in range(out.shape[1]):
            best, best_p = math.inf, -1
            for p in range(pos.shape[1]):
                if not present[e, p]:
                    continue
                dx, dy = pos[e, p, 0] - pose[e, 0], pos[e, p, 1] - pose[e, 1]
                d = dx * dx + dy * dy
                if (d > last or (d == last and p > last_p)) and (
                        d < best or (d == best and p < best_p)):
                    best, best_p = d, p
            if best_p < 0:
                for a in range(5):
                    out[e, row, a] = 0.0
                continue
            dx, dy = pos[e, best_p, 0] - pose[e, 0], pos[e, best_p, 1] - pose[e, 1]
            vx, vy = vel[e, best_p, 0], vel[e, best_p, 1]
            out[e, row, 0], out[e, row, 1] = c * dx + s * dy, -s * dx + c * dy
            out[e, row, 2], out[e, row, 3] = c * vx + s * vy, -s * vx + c * vy
            out[e, row, 4] = 1.0
            last, last_p = best, best_p


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
