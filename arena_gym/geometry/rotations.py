"""The one set of rotation helpers the project uses (MuJoCo's w, x, y, z quaternion order):
yaw <-> quaternion, roll-pitch-yaw, products, matrices."""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np

from arena_gym.compiled import shared
from arena_gym.geometry.arrays import arctan2, where, xp


def yaw_quat(yaw: Any) -> Any:
    """Quaternions (..., 4) w, x, y, z of rotations by `yaw` about +z: a number, or numpy
    or JAX arrays of them (the MJX backend places its episodes with it)."""
    space = xp(yaw)
    half = space.asarray(yaw, dtype=float) / 2 if space is np else yaw / 2
    zero = space.zeros_like(half)
    return space.stack([space.cos(half), zero, zero, space.sin(half)], axis=-1)


def quat_yaw(quat: np.ndarray) -> np.ndarray:
    """Yaw (rad, in [-pi, pi]) of quaternions (..., 4): the heading of a body's x axis."""
    q = np.asarray(quat, dtype=float) if xp(quat) is np else quat  # or jax.numpy (MJX)
    return yaw(q[..., 0], q[..., 1], q[..., 2], q[..., 3])


@shared
def yaw(w: Any, x: Any, y: Any, z: Any) -> Any:
    """quat_yaw of a quaternion's components: numpy or JAX arrays, or scalars."""
    return arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


@shared
def wrap_angle(angle: Any) -> Any:
    """Angles wrapped into [-pi, pi)."""
    return (angle + np.pi) % (2 * np.pi) - np.pi


@shared
def quat_mat(w: Any, x: Any, y: Any, z: Any) -> tuple[Any, ...]:
    """The rotation matrix of a quaternion's components (numpy or JAX arrays, or scalars),
    its nine entries row by row, normalised first as mj_kinematics does with a free joint's
    quaternion (a zero one, below mjMINVAL squared, reads as the identity)."""
    norm2 = w * w + x * x + y * y + z * z
    zero = norm2 < 1e-30
    w = where(zero, 1.0, w)
    scale = 1.0 / where(zero, 1.0, norm2)
    ww, xx, yy, zz = w * w, x * x, y * y, z * z
    wx, wy, wz, xy, xz, yz = w * x, w * y, w * z, x * y, x * z, y * z
    return ((ww + xx - yy - zz) * scale, 2 * (xy - wz) * scale, 2 * (xz + wy) * scale,
            2 * (xy + wz) * scale, (ww - xx + yy - zz) * scale, 2 * (yz - wx) * scale,
            2 * (xz - wy) * scale, 2 * (yz + wx) * scale, (ww - xx - yy + zz) * scale)


@shared(scalar=lambda yaw: (math.cos(yaw), -math.sin(yaw), 0.0, math.sin(yaw), math.cos(yaw),
                            0.0, 0.0, 0.0, 1.0))
def yaw_mat(yaw: Any) -> tuple[Any, ...]:
    """The rotation matrix of a turn by `yaw` about z (a planar base's), its nine entries
    row by row, as `quat_mat` gives them (numpy or JAX arrays, or scalars)."""
    space = xp(yaw)
    c, s = space.cos(yaw), space.sin(yaw)
    zero = space.zeros_like(c)
    return (c, -s, zero, s, c, zero, zero, zero, zero + 1.0)


def quat_mats(quat: np.ndarray) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of quaternions (n, 4) w, x, y, z (`quat_mat`; numpy or
    JAX arrays)."""
    space = xp(quat)  # numpy, or jax.numpy (the MJX backend's lidar)
    q = np.asarray(quat, dtype=float) if space is np else quat
    entries = quat_mat(q[:, 0], q[:, 1], q[:, 2], q[:, 3])
    return space.stack(entries, axis=-1).reshape(q.shape[0], 3, 3)


def axis_angle_mats(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) by `angle` (...,) rad about unit axes (..., 3) (both
    broadcast), by Rodrigues' formula: I + sin(a) K + (1 - cos(a)) K^2."""
    axis, angle = np.broadcast_arrays(np.asarray(axis, dtype=float),
                                      np.asarray(angle, dtype=float)[..., None])
    x, y, z = axis[..., 0], axis[..., 1], axis[..., 2]
    zero = np.zeros_like(x)
    k = np.stack([zero, -z, y, z, zero, -x, -y, x, zero], axis=-1).reshape(*x.shape, 3, 3)
    a = angle[..., 0, None, None]
    return np.eye(3) + np.sin(a) * k + (1.0 - np.cos(a)) * (k @ k)


def mat_quats(mats: np.ndarray) -> np.ndarray:
    """Unit quaternions (..., 4) w, x, y, z of rotation matrices (..., 3, 3), vectorised
    (Shepperd's method: each from its largest of 4w^2, 4x^2, 4y^2, 4z^2, so no division
    by a small number), w >= 0."""
    r = np.asarray(mats, dtype=float)
    r00, r11, r22 = r[..., 0, 0], r[..., 1, 1], r[..., 2, 2]
    big = np.stack([1 + r00 + r11 + r22, 1 + r00 - r11 - r22, 1 - r00 + r11 - r22,
                    1 - r00 - r11 + r22], axis=-1)  # 4w^2, 4x^2, 4y^2, 4z^2
    d21, d02, d10 = r[..., 2, 1] - r[..., 1, 2], r[..., 0, 2] - r[..., 2, 0], \
        r[..., 1, 0] - r[..., 0, 1]
    s01, s02, s12 = r[..., 0, 1] + r[..., 1, 0], r[..., 0, 2] + r[..., 2, 0], \
        r[..., 1, 2] + r[..., 2, 1]
    candidates = np.stack([  # 4 * (the largest component) * q, one row per choice
        np.stack([big[..., 0], d21, d02, d10], axis=-1),
        np.stack([d21, big[..., 1], s01, s02], axis=-1),
        np.stack([d02, s01, big[..., 2], s12], axis=-1),
        np.stack([d10, s02, s12, big[..., 3]], axis=-1)], axis=-2)
    pick = np.argmax(big, axis=-1)[..., None, None]
    q = np.take_along_axis(candidates, pick, axis=-2)[..., 0, :]
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def mul_quat(a: np.ndarray | list[float], b: np.ndarray | list[float]) -> np.ndarray:
    """The product a b of two quaternions (MuJoCo's mju_mulQuat)."""
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    return out


def rpy_quat(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Quaternion of URDF/SDF roll-pitch-yaw: Rz(yaw) Ry(pitch) Rx(roll)."""
    qx = [math.cos(roll / 2), math.sin(roll / 2), 0.0, 0.0]
    qy = [math.cos(pitch / 2), 0.0, math.sin(pitch / 2), 0.0]
    qz = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
    return mul_quat(mul_quat(qz, qy), qx)
