"""Base twist -> controls, from the wheels and drive the robot's model has.

A wheel turns at (u . g) / (r (d . g)), where u is the ground velocity the commanded twist
(vx, vy, omega) gives the wheel's contact, d the wheel's rolling direction, g the direction
it grips the ground in (g = d for a plain wheel; along the rollers' axes for a mecanum
wheel) and r its radius. Two plain wheels on an axle make a differential drive, four a skid
steer, four mecanum wheels a holonomic base; the same rows serve all. A planar drive
(force-based move plugin) and the planar base (`base: planar`, no wheels) write the twist
itself to their three base actuators.

Skid steer. Wheels on one side at different x cannot all roll when the base turns: they
scrub sideways, and the base turns slower than its wheels' speeds say (in MuJoCo's soft
contacts the Jackal turns at 0.2 of the commanded rate; a rigid Coulomb model gives
b^2 / (a^2 + b^2) = 0.67 for half-track b and half-wheelbase a). A real base controller
makes up for it in two parts, and so does this drive:

1. Feedforward: the robot's declared `wheel_separation_multiplier` (ros2_control's
   diff_drive_controller, e.g. 1.5 in the Jackal's control.yaml): omega is turned into wheel
   speeds as if the wheels were that much further apart.
2. Feedback: a PI loop on the yaw rate the base measures about its own z axis (what its
   gyro reads), the way a base closes its yaw loop on the IMU: omega_wheels = multiplier *
   (omega + kp e + ki integral(e)), e = omega - measured. The integral is exactly the heading
   the base has lost, so a commanded turn ends at its commanded angle; it is clamped so a base
   pinned against a wall does not wind up.

The loop runs at every tick of the simulator (Simulator.step steps in ticks while a closed
loop drive is commanded), batched over envs; it is part of the env's state, zeroed when
the env resets. Differential drives (two driven wheels) and holonomic bases roll without
scrubbing and stay open loop, exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.registry import DRIVES
from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.wheels import Wheel, wheel_geometry

# singular-value ratio of the wheels' grip directions above which they span the plane:
# 1.0 for 45-degree mecanum rollers, ~1e-7 for plain wheels whose axes carry rounding
HOLONOMIC_TOLERANCE = 0.05
YAW_KP = 1.0  # yaw-rate loop, proportional (dimensionless)
YAW_KI = 20.0  # 1/s: the lost heading is made up with a time constant of ~0.05 s / (gain)
YAW_INTEGRAL_LIMIT = 8.0  # rad/s of extra yaw command the integral may add


@dataclass(frozen=True)
class YawLoop:
    """Closed-loop yaw-rate correction of a skid-steer base (see the module docstring)."""

    dof: int  # qvel index of the base's angular velocity about its own z axis
    multiplier: float = 1.0  # the declared wheel_separation_multiplier (feedforward)
    kp: float = YAW_KP
    ki: float = YAW_KI
    limit: float = YAW_INTEGRAL_LIMIT

    def correct(self, twists: np.ndarray, measured: np.ndarray, integral: np.ndarray,
                dt: float) -> np.ndarray:
        """Twists (n, 3) with omega replaced by the wheels' yaw command; advances `integral`
        (n,) in place by dt seconds of error."""
        error = twists[:, 2] - measured
        np.clip(integral + self.ki * error * dt, -self.limit, self.limit, out=integral)
        out = twists.copy()
        out[:, 2] = self.multiplier * (twists[:, 2] + self.kp * error + integral)
        return out


@dataclass(frozen=True)
class WheelDrive:
    """Maps (vx, vy, omega) to a robot's controls."""

    actuator_ids: np.ndarray  # (nwheel,) indices into ctrl
    matrix: np.ndarray  # (nwheel, 3): wheel speeds = matrix @ (vx, vy, omega)
    wheels: tuple[Wheel, ...]
    grips: np.ndarray  # (nwheel, 2) ground grip direction of each wheel, base frame
    base_ids: np.ndarray  # (3,) planar-drive actuators (vx, vy, omega), or (0,)
    holonomic: bool = False
    yaw_loop: YawLoop | None = None  # skid steer only

    def controls(self, vx: float, vy: float, omega: float) -> np.ndarray:
        """Open-loop wheel speeds of one twist."""
        return self.matrix @ np.array([vx, vy, omega])

    def key(self) -> tuple:
        """Equal for drives that write the same controls from the same twists."""
        return (self.actuator_ids.tobytes(), self.matrix.tobytes(), self.base_ids.tobytes(),
                self.yaw_loop)

    @property
    def separation(self) -> float:
        """Lateral distance between the outermost left and right wheels."""
        ys = [w.position[1] for w in self.wheels]
        return float(max(ys) - min(ys))

    @property
    def radius(self) -> float:
        return float(np.mean([w.radius for w in self.wheels]))


def _spans_plane(grips: list[np.ndarray]) -> bool:
    if len(grips) < 2:
        return False
    s = np.linalg.svd(np.array(grips), compute_uv=False)
    return bool(s[1] > HOLONOMIC_TOLERANCE * s[0])


def _is_skid_steer(wheels: tuple[Wheel, ...]) -> bool:
    """Four or more driven wheels, at least two on each side (they scrub when turning)."""
    left = [w for w in wheels if w.position[1] > 1e-3]
    right = [w for w in wheels if w.position[1] < -1e-3]
    return len(left) >= 2 and len(right) >= 2


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
    # a planar base moves sideways only where its URDF's drive does (scene/planar_base.py)
    holonomic = robot.holonomic if robot.base == "planar" else planar or _spans_plane(grips)
    loop = None
    free = model.body_jntnum[base] > 0 and (
        model.jnt_type[model.body_jntadr[base]] == mujoco.mjtJoint.mjJNT_FREE)
    if not holonomic and free and _is_skid_steer(wheels):
        dof = int(model.jnt_dofadr[model.body_jntadr[base]]) + 5  # free joint: local wz
        loop = YawLoop(dof, robot.separation_multiplier)
    return WheelDrive(ids, matrix, wheels, np.array(grips).reshape(-1, 2), base_ids, holonomic,
                      loop)


# Every built-in drive kind (RobotInfo.drive) is the one formulation above; a plugin's drive
# registers a factory(model, robot) -> WheelDrive under its own name.
for _kind in ("wheels", "mecanum", "planar"):
    DRIVES.register(_kind, wheel_drive)
