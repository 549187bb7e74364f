"""Odometry: pose and twist of a robot's base from its free joint, or from a planar base's
x, y and yaw joints (scene/planar_base.py: its height fixed, its twist (vx, vy, wz)).

The odom frame coincides with the world frame (as Gazebo's diff-drive plugin with
`odometrySource world`, which the Arena robots use). The twist is expressed in the base
frame, as in nav_msgs/Odometry. Read from the state, so it is current at each tick."""

from __future__ import annotations

import mujoco
import numpy as np

from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount
from arena_gym.sensors import noise
from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.specs import OdometrySpec
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.units import Unit


class OdometryUnit(Unit):
    """A robot's odometry in every env: position, orientation and velocities of its free joint (odom
    = world frame)."""

    kind = "odometry"

    def __init__(self, spec: OdometrySpec, num_envs: int) -> None:
        super().__init__(spec, num_envs)
        self.qpos_adr = np.zeros(num_envs, dtype=np.int64)
        self.dof_adr = np.zeros(num_envs, dtype=np.int64)
        self.height = np.full(num_envs, np.nan)  # a planar base's; NaN: a free joint

    def describe(self) -> str:
        return f"odometry of robot {self.robot!r}"

    def find_mount(self, scene: Scene, info: RobotInfo) -> SensorMount | None:
        return None

    def _allocate(self, mount: SensorMount | None) -> None:
        n = self.num_envs
        self.out = {"position": np.full((n, 3), np.nan), "orientation": np.full((n, 4), np.nan),
                    "linear_velocity": np.full((n, 3), np.nan),
                    "angular_velocity": np.full((n, 3), np.nan)}

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None) -> None:
        model = scene.compiled
        body = model.body(info.root_body).id
        joint = model.body_jntadr[body]
        planar = info.base == "planar"
        self.height[env] = model.body_pos[body, 2] if planar else np.nan
        if not planar and (joint < 0 or model.jnt_type[joint] != mujoco.mjtJoint.mjJNT_FREE):
            raise SensorError(
                f"odometry of robot {self.robot!r} in env {scene.env_id}: expected a free joint "
                f"on its root body {info.root_body!r}, got none"
            )
        self.qpos_adr[env] = model.jnt_qposadr[joint]
        self.dof_adr[env] = model.jnt_dofadr[joint]

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        out = self.out
        for env in envs:
            qpos, qvel = frames.state(int(env), "qpos"), frames.state(int(env), "qvel")
            a, v = self.qpos_adr[env], self.dof_adr[env]
            if np.isnan(self.height[env]):
                out["position"][env] = qpos[a : a + 3]
                out["orientation"][env] = qpos[a + 3 : a + 7]
                out["linear_velocity"][env] = qvel[v : v + 3]  # world frame, rotated below
                out["angular_velocity"][env] = qvel[v + 3 : v + 6]  # free joints: body frame
            else:  # a planar base: x, y, yaw and their rates, all in the world frame
                half = 0.5 * qpos[a + 2]
                out["position"][env] = (qpos[a], qpos[a + 1], self.height[env])
                out["orientation"][env] = (np.cos(half), 0.0, 0.0, np.sin(half))
                out["linear_velocity"][env] = (qvel[v], qvel[v + 1], 0.0)
                out["angular_velocity"][env] = (0.0, 0.0, qvel[v + 2])
        quat = out["orientation"][envs]
        out["linear_velocity"][envs] = _rotate_inverse(quat, out["linear_velocity"][envs])

    def noise(self, values: dict[str, np.ndarray], spec: OdometrySpec,  # type: ignore[override]
              rng: np.random.Generator) -> None:
        noise.gaussian(values["position"], spec.position_noise_std, rng)
        noise.gaussian(values["linear_velocity"], spec.twist_noise_std, rng)
        noise.gaussian(values["angular_velocity"], spec.twist_noise_std, rng)


def _rotate_inverse(quat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """Rotate world vectors (k, 3) into the frames of unit quaternions (k, 4) (w, x, y, z)."""
    w, u = quat[:, :1], -quat[:, 1:]  # the conjugate rotates world -> body
    t = 2 * np.cross(u, vec)
    return vec + w * t + np.cross(u, t)
