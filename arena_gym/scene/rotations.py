"""The one set of rotation helpers the project uses (MuJoCo's w, x, y, z quaternion order):
yaw <-> quaternion, roll-pitch-yaw, products, matrices."""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np

from arena_gym.tasks.arrays import arctan2, xp


def yaw_quat(yaw: float) -> np.ndarray:
    """Quaternion (w, x, y, z) of a rotation by `yaw` about +z."""
    return np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])


def quat_yaw(quat: np.ndarray) -> np.ndarray:
    """Yaw (rad, in [-pi, pi]) of quaternions (..., 4): the heading of a body's x axis."""
    q = np.asarray(quat, dtype=float) if xp(quat) is np else quat  # or jax.numpy (MJX)
    return yaw(q[..., 0], q[..., 1], q[..., 2], q[..., 3])


def yaw(w: Any, x: Any, y: Any, z: Any) -> Any:
    """quat_yaw of a quaternion's components: numpy or JAX arrays, or the scalars of a
    compiled kernel (tasks/array_kernels.py)."""
    return arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def wrap_angle(angle: np.ndarray) -> np.ndarray:
    """Angles wrapped into [-pi, pi)."""
    return (angle + np.pi) % (2 * np.pi) - np.pi


# R = sum of coefficient * q_i q_j per entry (row-major), for a unit quaternion (w, x, y, z)
_W, _X, _Y, _Z = range(4)
_ROTATION_TERMS = {
    0: [(1, _W, _W), (1, _X, _X), (-1, _Y, _Y), (-1, _Z, _Z)],
    4: [(1, _W, _W), (-1, _X, _X), (1, _Y, _Y), (-1, _Z, _Z)],
    8: [(1, _W, _W), (-1, _X, _X), (-1, _Y, _Y), (1, _Z, _Z)],
    1: [(2, _X, _Y), (-2, _W, _Z)], 3: [(2, _X, _Y), (2, _W, _Z)],
    2: [(2, _X, _Z), (2, _W, _Y)], 6: [(2, _X, _Z), (-2, _W, _Y)],
    5: [(2, _Y, _Z), (-2, _W, _X)], 7: [(2, _Y, _Z), (2, _W, _X)],
}
_PRODUCTS_TO_MATRIX = np.zeros((16, 9))
for _entry, _terms in _ROTATION_TERMS.items():
    for _coef, _i, _j in _terms:
        _PRODUCTS_TO_MATRIX[4 * _i + _j, _entry] = _coef


def quat_mats(quat: np.ndarray) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of quaternions (n, 4) w, x, y, z, normalised first as
    mj_kinematics does with a free joint's quaternion (a zero one reads as the identity).
    Equal to mju_quat2Mat to round-off: one linear map of q q^T / |q|^2, a handful of
    numpy calls whatever n."""
    space = xp(quat)  # numpy, or jax.numpy (the MJX backend's lidar)
    q = np.asarray(quat, dtype=float) if space is np else quat
    n = q.shape[0]
    products = (q[:, :, None] * q[:, None, :]).reshape(n, 16)
    norm2 = products[:, ::5].sum(axis=1)
    if space is not np:  # immutable arrays, no branching on values under jit
        zero = norm2 < 1e-30  # mjMINVAL squared
        products = space.where(zero[:, None], space.eye(16)[0], products)
        norm2 = space.where(zero, 1.0, norm2)
    elif n and np.fmin.reduce(norm2) < 1e-30:  # one reduction (NaN-blind) clears most
        zero = norm2 < 1e-30
        products[zero], norm2[zero] = np.eye(16)[0], 1.0
    return ((products @ _PRODUCTS_TO_MATRIX) / norm2[:, None]).reshape(n, 3, 3)


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
