"""The one yaw <-> quaternion pair (MuJoCo's w, x, y, z order) the project uses."""

from __future__ import annotations

import math

import numpy as np


def yaw_quat(yaw: float) -> np.ndarray:
    """Quaternion (w, x, y, z) of a rotation by `yaw` about +z."""
    return np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])


def quat_yaw(quat: np.ndarray) -> np.ndarray:
    """Yaw (rad, in [-pi, pi]) of quaternions (..., 4): the heading of a body's x axis."""
    q = np.asarray(quat, dtype=float)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def wrap_angle(angle: np.ndarray) -> np.ndarray:
    """Angles wrapped into [-pi, pi)."""
    return (angle + np.pi) % (2 * np.pi) - np.pi
