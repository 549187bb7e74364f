"""Sensors: lidar, camera, IMU, contact, odometry and a model's own MuJoCo sensors for
every env, sampled in the simulator's tick hook into preallocated (num_envs, ...) arrays.

    from arena_gym.sensors import CameraSpec, SensorSuite
    suite = SensorSuite(sim, seed=0)
    sim.step(10)
    suite["burger/lds_lfcd_sensor"].ranges

Sensors come from each robot's URDF declarations (arena_gym.scene.sensor_mounts); see
suite.py for the suite, specs.py for what a reading can ask for, rates.py for timing.
"""

from arena_gym.sensors.contact import COLLISION_CLASSES
from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.readings import (
    CameraReading,
    CollisionReading,
    Contact,
    ContactReading,
    ImuReading,
    LidarReading,
    MujocoReading,
    OdometryReading,
    Reading,
)
from arena_gym.sensors.specs import (
    CameraSpec,
    CollisionSpec,
    ContactSpec,
    ImuSpec,
    LidarSpec,
    MujocoSpec,
    OdometrySpec,
    SensorSpec,
)
from arena_gym.sensors.suite import SensorSuite, default_specs

__all__ = [
    "COLLISION_CLASSES",
    "CameraReading",
    "CameraSpec",
    "CollisionReading",
    "CollisionSpec",
    "Contact",
    "ContactReading",
    "ContactSpec",
    "ImuReading",
    "ImuSpec",
    "LidarReading",
    "LidarSpec",
    "MujocoReading",
    "MujocoSpec",
    "OdometryReading",
    "OdometrySpec",
    "Reading",
    "SensorError",
    "SensorSpec",
    "SensorSuite",
    "default_specs",
]
