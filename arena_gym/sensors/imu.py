"""IMU: a site's framequat, gyro and accelerometer sensors, read from sensordata by
address. Addresses are cached once per compile, never looked up per step. A robot spawned
without them (the navigation env's: its own suite reads no IMU) gets them when an IMU reading
first binds to it (sensor_mounts.mount_imu_sensors), from the compile that follows.

Values are those MuJoCo computed in the last physics step (as after any `mj_step`), so the
accelerometer includes gravity: +9.81 on the site's z at rest."""

from __future__ import annotations

import numpy as np

from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount, mount_imu_sensors
from arena_gym.sensors import noise
from arena_gym.sensors.specs import ImuSpec
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.units import Unit

FIELDS = (("orientation", 4), ("angular_velocity", 3), ("linear_acceleration", 3))


class ImuUnit(Unit):
    """A robot's IMU in every env: orientation, angular velocity and linear acceleration from its
    MuJoCo sensors."""

    kind = "imu"

    def __init__(self, spec: ImuSpec, num_envs: int) -> None:
        super().__init__(spec, num_envs)
        self.address = np.zeros((num_envs, len(FIELDS)), dtype=np.int64)

    def _allocate(self, mount: SensorMount | None) -> None:
        self.out = {name: np.full((self.num_envs, dim), np.nan) for name, dim in FIELDS}

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None
                  ) -> bool | None:
        if mount_imu_sensors(scene, info.sensor_mounts):
            return False
        model = scene.compiled
        for k, ((_, dim), sensor) in enumerate(zip(FIELDS, mount.sensors, strict=True)):  # type: ignore[union-attr]
            s = model.sensor(sensor).id
            if model.sensor_dim[s] != dim:
                raise ValueError(
                    f"sensor {sensor!r}: expected {dim} values, got {model.sensor_dim[s]}")
            self.address[env, k] = model.sensor_adr[s]

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        for env in envs:
            data = frames.sensordata(int(env))
            for k, (name, dim) in enumerate(FIELDS):
                adr = self.address[env, k]
                self.out[name][env] = data[adr : adr + dim]

    def noise(self, values: dict[str, np.ndarray], spec: ImuSpec,  # type: ignore[override]
              rng: np.random.Generator) -> None:
        noise.gaussian(values["angular_velocity"], spec.gyro_noise_std, rng)
        noise.gaussian(values["linear_acceleration"], spec.accel_noise_std, rng)
