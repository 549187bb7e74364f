"""Base twist -> controls, from the wheels and drive the robot's model has.

A wheel turns at (u . g) / (r (d . g)), where u is the ground velocity the commanded twist
(vx, vy, omega) gives the wheel's contact, d the wheel's rolling direction, g the direction
it grips the ground in (g = d for a plain wheel; along the rollers' axes for a mecanum
wheel) and r its radius. Two plain wheels on an axle make a differential drive, four a skid
steer, four mecanum wheels a holonomic base; the same rows serve all. A planar drive
(force-based move plugin) also writes the twist itself to its three base actuators.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.wheels import Wheel, wheel_geometry


@dataclass(frozen=True)
class WheelDrive:
    """Maps (vx, vy, omega) to a robot's controls."""

    actuator_ids: np.ndarray  # (nwheel,) indices into ctrl
    matrix: np.ndarray  # (nwheel, 3): wheel speeds = matrix @ (vx, vy, omega)
    wheels: tuple[Wheel, ...]
    grips: np.ndarray  # (nwheel, 2) ground grip direction of each wheel, base frame
    base_ids: np.ndarray  # (3,) planar-drive actuators (vx, vy, omega), or (0,)
    holonomic: bool = False

    def controls(self, vx: float, vy: float, omega: float) -> np.ndarray:
        return self.matrix @ np.array([vx, vy, omega])

    def write(self, ctrl: np.ndarray, twist: tuple[float, float, float]) -> None:
        ctrl[self.actuator_ids] = self.controls(*twist)
        if len(self.base_ids):
            ctrl[self.base_ids] = twist

    @property
    def separation(self) -> float:
        """Lateral distance between the outermost left and right wheels."""
        ys = [w.position[1] for w in self.wheels]
        return float(max(ys) - min(ys))

    @property
    def radius(self) -> float:
        return float(np.mean([w.radius for w in self.wheels]))


def wheel_drive(model: mujoco.MjModel, robot: RobotInfo) -> WheelDrive:
    """The drive of `robot` in `model` at its reference pose (qpos0)."""
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    base = model.body(robot.root_body).id
    base_rot = data.xmat[base].reshape(3, 3)
    wheels = tuple(wheel_geometry(model, data, j, base) for j in robot.wheel_joints)
    planar = bool(robot.planar_actuators)
    rows, grips = [], []
    for wheel in wheels:
        d = wheel.rolling_direction()
        g = d
        if wheel.joint in robot.grips and not planar:
            link_rot = data.xmat[model.jnt_bodyid[model.joint(wheel.joint).id]].reshape(3, 3)
            g3 = base_rot.T @ link_rot @ np.asarray(robot.grips[wheel.joint])
            g = g3[:2] / np.linalg.norm(g3[:2])
        x, y = wheel.position[:2]
        scale = max(wheel.radius, 1e-6) * float(d @ g)
        rows.append(np.array([g[0], g[1], x * g[1] - y * g[0]]) / scale)
        grips.append(g)
    ids = np.array([model.actuator(robot.actuator(j)).id for j in robot.wheel_joints], dtype=int)
    base_ids = np.array([model.actuator(a).id for a in robot.planar_actuators], dtype=int)
    matrix = np.array(rows).reshape(len(wheels), 3)
    holonomic = planar or (len(wheels) > 0 and np.linalg.matrix_rank(np.array(grips)) == 2)
    return WheelDrive(ids, matrix, wheels, np.array(grips).reshape(-1, 2), base_ids, holonomic)
