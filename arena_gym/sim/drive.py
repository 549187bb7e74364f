"""Base twist -> wheel speeds, from the wheels the robot's model has.

Each wheel turns at (u . d) / r, where u is the ground velocity the commanded twist gives
the wheel's position, d the wheel's rolling direction and r its radius. Two wheels on one
axle make a differential drive; four make a skid steer; the same rows serve both.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.wheels import Wheel, wheel_geometry


@dataclass(frozen=True)
class WheelDrive:
    """Maps (vx, vy, omega) to the velocity-servo controls of a robot's wheels."""

    actuator_ids: np.ndarray  # (nwheel,) indices into ctrl
    matrix: np.ndarray  # (nwheel, 3): wheel speeds = matrix @ (vx, vy, omega)
    wheels: tuple[Wheel, ...]
    holonomic: bool = False

    def controls(self, vx: float, vy: float, omega: float) -> np.ndarray:
        return self.matrix @ np.array([vx, vy, omega])

    @property
    def separation(self) -> float:
        """Lateral distance between the outermost left and right wheels."""
        ys = [w.position[1] for w in self.wheels]
        return float(max(ys) - min(ys))

    @property
    def radius(self) -> float:
        return float(np.mean([w.radius for w in self.wheels]))


def wheel_drive(model: mujoco.MjModel, robot: RobotInfo) -> WheelDrive:
    """The wheel drive of `robot` in `model` at its reference pose (qpos0)."""
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    base = model.body(robot.root_body).id
    wheels = tuple(wheel_geometry(model, data, j, base) for j in robot.wheel_joints)
    rows = []
    for wheel in wheels:
        dx, dy = wheel.rolling_direction()
        x, y = wheel.position[:2]
        rows.append(np.array([dx, dy, x * dy - y * dx]) / max(wheel.radius, 1e-6))
    ids = np.array([model.actuator(robot.actuator(j)).id for j in robot.wheel_joints], dtype=int)
    matrix = np.array(rows).reshape(len(wheels), 3)
    return WheelDrive(actuator_ids=ids, matrix=matrix, wheels=wheels)
