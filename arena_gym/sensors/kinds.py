"""Sensor kinds: what the sensors layer knows of each kind, registered in SENSOR_KINDS.

A kind is one spec class, one unit (computes samples for all envs) and one reading (the
preallocated arrays a suite publishes into); optionally which URDF/SDF `<sensor>`
declarations it mounts on a robot, the spec a robot gets by default, and how its readings
become an observation. The suite, `default_specs`, the robot's sensor mounts and the env's
`sensors:` config look kinds up here and nowhere else; the built-in kinds below register
exactly as a plugin's kind does:

    SENSOR_KINDS.register("thermometer", SensorKind(ThermoSpec, ThermoUnit, ThermoReading))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from arena_gym.registry import SENSOR_KINDS
from arena_gym.scene.mujoco_mounts import SITE_SENSORS
from arena_gym.sensors.camera import CameraUnit
from arena_gym.sensors.camera_frames import FrameHistory
from arena_gym.sensors.contact import CollisionUnit, ContactUnit
from arena_gym.sensors.imu import ImuUnit
from arena_gym.sensors.lidar import LidarUnit
from arena_gym.sensors.mujoco_sensors import MujocoUnit
from arena_gym.sensors.odometry import OdometryUnit
from arena_gym.sensors.readings import (
    CameraReading,
    CollisionReading,
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
from arena_gym.sensors.units import Unit

if TYPE_CHECKING:
    from arena_gym.assets.gazebo import SensorDecl
    from arena_gym.scene.models import ModelInfo
    from arena_gym.scene.sensor_mounts import SensorMount


Observed = tuple[spaces.Box, Callable[[np.ndarray], np.ndarray]]  # space, values(envs)


@dataclass(frozen=True)
class SensorKind:
    """One kind of sensor. `unit(spec, num_envs, suite)` and `reading(spec, unit, num_envs,
    period)` build its parts; `declares(decl)` says which robot `<sensor>` declarations are
    of this kind (mounted when the robot spawns); `default(robot, mount)` is the spec
    `default_specs` gives a robot: per declared mount, or once per robot for kinds that
    declare nothing (mount None); `model_default(name, info)` the one it gives an MJCF
    model (Scene.spawn_mjcf; None: none); `observation(reading)` -> (space, values(envs))
    for the env's `sensors:` config (default: every float field of the reading, flattened)."""

    spec: type[SensorSpec]
    unit: Callable[[Any, int, Any], Unit]  # (spec, num_envs, the SensorSuite)
    reading: Callable[[Any, Unit, int, float], Reading]
    declares: Callable[[SensorDecl], bool] | None = None
    default: Callable[[str, SensorMount | None], SensorSpec] | None = None
    observation: Callable[[Reading], Observed] | None = None
    model_default: Callable[[str, ModelInfo], SensorSpec | None] | None = None


def flat_observation(reading: Reading) -> Observed:
    """A reading's float fields side by side as one float32 vector per env; envs without a
    sample read zeros (non-finite values too)."""
    fields = [k for k, v in reading.data.items() if np.issubdtype(v.dtype, np.floating)]
    if not fields:
        raise TypeError(f"reading {reading.key!r}: expected a float field to observe, got "
                        f"{ {k: str(v.dtype) for k, v in reading.data.items()} }")
    size = sum(int(np.prod(reading.data[k].shape[1:])) for k in fields)
    space = spaces.Box(-np.inf, np.inf, (size,), np.float32)

    def values(envs: np.ndarray) -> np.ndarray:
        out = np.concatenate([reading.data[k][envs].reshape(len(envs), -1) for k in fields],
                             axis=1).astype(np.float32)
        out[~np.isfinite(out) | ~reading.valid[envs][:, None]] = 0.0
        return out

    return space, values


def _lidar_reading(spec: LidarSpec, unit: LidarUnit, n: int, period: float) -> Reading:
    return LidarReading(spec.reading_key, spec.robot, _name(unit), n, period, unit.pattern)


def _camera_reading(spec: CameraSpec, unit: CameraUnit, n: int, period: float) -> Reading:
    reading = CameraReading(spec.reading_key, spec.robot, _name(unit), n, period, unit.lens,
                            spec.outputs)
    if spec.history:
        reading.history = FrameHistory(reading, spec.history)
    return reading


def _contact_reading(spec: ContactSpec, unit: ContactUnit, n: int, period: float) -> Reading:
    reading = ContactReading(spec.reading_key, spec.robot, _name(unit), n, period,
                             unit.max_contacts)
    reading.geom_names = unit.geom_names
    return reading


def _mujoco_reading(spec: MujocoSpec, unit: MujocoUnit, n: int, period: float) -> Reading:
    dims = {name: dim for name, _, dim in unit.layout or ()}
    types = {name: kind for name, kind, _ in unit.layout or ()}
    return MujocoReading(spec.reading_key, spec.robot, spec.sensor or "", n, period, dims, types)


def _plain(cls: type[Reading]) -> Callable[[SensorSpec, Unit, int, float], Reading]:
    return lambda spec, unit, n, period: cls(spec.reading_key, spec.robot, _name(unit), n, period)


def _name(unit: Unit) -> str:
    return unit.reference.name if unit.reference is not None else ""


SENSOR_KINDS.register("lidar", SensorKind(
    LidarSpec, lambda spec, n, suite: LidarUnit(spec, n), _lidar_reading,
    declares=lambda decl: decl.is_ray, default=lambda robot, mount: LidarSpec(robot, mount.name)))
SENSOR_KINDS.register("camera", SensorKind(  # declared cameras mount; rendering is opt-in
    CameraSpec, lambda spec, n, suite: CameraUnit(spec, n, suite.renderers), _camera_reading,
    declares=lambda decl: decl.is_camera))
SENSOR_KINDS.register("imu", SensorKind(
    ImuSpec, lambda spec, n, suite: ImuUnit(spec, n), _plain(ImuReading),
    declares=lambda decl: decl.kind == "imu",
    default=lambda robot, mount: ImuSpec(robot, mount.name)))
SENSOR_KINDS.register("contact", SensorKind(
    ContactSpec, lambda spec, n, suite: ContactUnit(spec, n), _contact_reading,
    declares=lambda decl: decl.kind == "contact",
    default=lambda robot, mount: ContactSpec(robot, sensor=mount.name)))
SENSOR_KINDS.register("odometry", SensorKind(
    OdometrySpec, lambda spec, n, suite: OdometryUnit(spec, n), _plain(OdometryReading),
    default=lambda robot, mount: OdometrySpec(robot)))
SENSOR_KINDS.register("collision", SensorKind(
    CollisionSpec, lambda spec, n, suite: CollisionUnit(spec, n), _plain(CollisionReading),
    default=lambda robot, mount: CollisionSpec(robot)))
SENSOR_KINDS.register("mujoco", SensorKind(  # a model's own sensors: read by default; a
    # robot's too where it declares Gazebo sensors mounted as MuJoCo's (force_torque, ...)
    MujocoSpec, lambda spec, n, suite: MujocoUnit(spec, n), _mujoco_reading,
    declares=lambda decl: decl.kind in SITE_SENSORS,
    default=lambda robot, mount: MujocoSpec(robot),
    model_default=lambda name, info: MujocoSpec(name) if info.sensors else None))
