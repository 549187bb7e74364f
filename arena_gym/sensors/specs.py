"""What to read: one frozen spec per reading, validated on construction.

    LidarSpec("robot")                                   # the robot's first lidar
    LidarSpec("robot", "front_laser", noise_std=0.01, dropout=0.02, key="scan")
    CameraSpec("robot", outputs=("rgb", "depth"))
    CameraSpec("model", "overhead", outputs=("rgb", "segmentation"), segment_by="body")
    ImuSpec("robot", delay=0.01), OdometrySpec("robot"), CollisionSpec("robot")
    ContactSpec("robot", link="base_link")

`sensor` names a mounted sensor of the robot (`RobotInfo.sensor_mounts`, the URDF's name,
`_1`, `_2` for repeats); None takes the robot's first of the kind. A camera spec may name
an MJCF model instead (Scene.spawn_mjcf, `Simulation(model_path=...)`): `sensor` is then
one of the model's own `<camera>` elements. `key` names the reading
(default `<robot>/<sensor>` or `<robot>/<kind>`). Specs that name the same sensor share
one computation per sim time (one ray cast, one render).

Timing, common to all specs (see rates.py):
  rate      Hz; None: as declared (the URDF's update_rate; 0 there means every tick)
  interval  s; sample-and-hold period, overrides rate when > 0
  delay     s (at most MAX_DELAY), rounded up to whole physics steps: a sample shows that
            much later
  nsample   > 1 averages the last nsample samples (one per tick); imu only
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from arena_gym.sensors.errors import SensorError

CAMERA_OUTPUTS = ("rgb", "depth", "points", "segmentation")
SEGMENT_BY = ("geom", "body")
MAX_HISTORY = 1024  # frames per env a camera spec may keep
MAX_DELAY = 10.0  # s a sample may wait before it shows (each waits in memory)
MAX_PIXELS = 8192  # a camera image's largest width or height
GEOM_GROUPS = 6  # MuJoCo's geom groups (mjNGROUP)


def _nonneg(spec: object, name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
        math.isfinite(value) and value >= 0
    ):
        raise SensorError(
            f"{type(spec).__name__}.{name}: expected a finite number >= 0, got {value!r}"
        )


@dataclass(frozen=True)
class SensorSpec:
    """Common fields; use one of the kind-specific subclasses."""

    kind: ClassVar[str] = ""

    robot: str
    sensor: str | None = None
    key: str | None = None
    rate: float | None = None
    interval: float = 0.0
    delay: float = 0.0
    nsample: int = 1

    def __post_init__(self) -> None:
        name = type(self).__name__
        if not isinstance(self.robot, str) or not self.robot:
            raise SensorError(f"{name}.robot: expected a robot name, got {self.robot!r}")
        if self.sensor is not None and (not isinstance(self.sensor, str) or not self.sensor):
            raise SensorError(f"{name}.sensor: expected a sensor name or None, got {self.sensor!r}")
        if self.key is not None and (not isinstance(self.key, str) or not self.key):
            raise SensorError(f"{name}.key: expected a non-empty name or None, got {self.key!r}")
        if self.rate is not None:
            _nonneg(self, "rate", self.rate)
        _nonneg(self, "interval", self.interval)
        _nonneg(self, "delay", self.delay)
        if self.delay > MAX_DELAY:  # each tick's sample waits that long in memory
            raise SensorError(f"{name}.delay: expected seconds in [0, {MAX_DELAY:g}], got "
                              f"{self.delay!r}")
        if isinstance(self.nsample, bool) or not isinstance(self.nsample, int) or self.nsample < 1:
            raise SensorError(f"{name}.nsample: expected an integer >= 1, got {self.nsample!r}")
        if self.nsample > 1 and self.kind != "imu":
            raise SensorError(
                f"{name}.nsample: expected 1 (averaging applies to imu readings), "
                f"got {self.nsample}"
            )

    @property
    def reading_key(self) -> str:
        return self.key or f"{self.robot}/{self.sensor or self.kind}"

    @property
    def unit_key(self) -> tuple:
        """Specs with equal unit keys share one computation per sim time."""
        return (self.kind, self.robot, self.sensor or "")


@dataclass(frozen=True)
class LidarSpec(SensorSpec):
    """Ranges (REP 117) of a lidar; `noise_std` in m ("declared": the URDF's stddev),
    `dropout` the probability that a beam returns nothing (+inf).

    Overrides (None: as declared): `num_beams`, `angle_min`/`angle_max` (rad, both ends
    are beams), `range_min`/`range_max` (m) change the declared lidar's pattern, e.g.
    `LidarSpec("robot", num_beams=720, range_max=5.0)`. `link` puts a lidar the robot
    does not declare at that link's frame (as Arena's model_params.yaml does: the caller
    reads that file and passes its values): then `num_beams`, `angle_min`, `angle_max`
    and `range_max` are required and `sensor` must be None.
    """

    kind: ClassVar[str] = "lidar"
    noise_std: float | str = 0.0
    dropout: float = 0.0
    link: str | None = None
    num_beams: int | None = None
    angle_min: float | None = None
    angle_max: float | None = None
    range_min: float | None = None
    range_max: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.noise_std != "declared":
            _nonneg(self, "noise_std", self.noise_std)
        _nonneg(self, "dropout", self.dropout)
        if self.dropout > 1:
            raise SensorError(
                f"LidarSpec.dropout: expected a probability in [0, 1], got {self.dropout!r}")
        if self.link is not None:
            if not isinstance(self.link, str) or not self.link:
                raise SensorError(
                    f"LidarSpec.link: expected a link name or None, got {self.link!r}")
            if self.sensor is not None:
                raise SensorError(f"LidarSpec: expected a link or a declared sensor, got "
                                  f"link={self.link!r} and sensor={self.sensor!r}")
            missing = [n for n in ("num_beams", "angle_min", "angle_max", "range_max")
                       if getattr(self, n) is None]
            if missing:
                raise SensorError(f"LidarSpec(link={self.link!r}): expected {', '.join(missing)} "
                                  "(a link lidar has no declaration to fall back on)")
        if self.num_beams is not None and (isinstance(self.num_beams, bool) or not isinstance(
                self.num_beams, int) or self.num_beams < 1):
            raise SensorError(f"LidarSpec.num_beams: expected an integer >= 1 or None, "
                              f"got {self.num_beams!r}")
        for name in ("angle_min", "angle_max"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(
                    value, (int, float)) or not math.isfinite(value)):
                raise SensorError(f"LidarSpec.{name}: expected a finite angle (rad) or None, "
                                  f"got {value!r}")
        if self.range_min is not None:
            _nonneg(self, "range_min", self.range_min)
        if self.range_max is not None:
            _nonneg(self, "range_max", self.range_max)
            if self.range_max <= (self.range_min or 0.0):
                raise SensorError(f"LidarSpec.range_max: expected more than range_min "
                                  f"({self.range_min or 0.0}), got {self.range_max!r}")

    @property
    def reading_key(self) -> str:
        if self.key:
            return self.key
        return f"{self.robot}/{self.sensor or (f'lidar@{self.link}' if self.link else 'lidar')}"

    @property
    def unit_key(self) -> tuple:
        """Specs with equal unit keys share one computation per sim time (one cast)."""
        return (self.kind, self.robot, self.sensor or "", self.link, self.num_beams,
                self.angle_min, self.angle_max, self.range_min, self.range_max)


@dataclass(frozen=True)
class CameraSpec(SensorSpec):
    """Images of a camera: `outputs` among "rgb", "depth", "points", "segmentation" (only
    these render). "segmentation" is a second render pass, per pixel (object id, mjtObj
    type) as int32, (-1, -1) where nothing is drawn: `segment_by` "geom" gives the geom's
    id (type mjOBJ_GEOM), "body" the id of the geom's body (type mjOBJ_BODY).
    `history` > 0 keeps that many of the latest frames per env (Simulation.cameras.buffer).
    `resolution` (width, height) overrides the declared one (a model camera keeps its
    vertical field of view, as MuJoCo's renderer; a robot's keeps its horizontal one).
    `geomgroups`: the geom groups drawn; None: the world's (a loaded model's: MuJoCo's
    default 0, 1, 2, its sites too; a navigation world's: 0, 1, 3, arena_gym.geometry.groups:
    robots' visuals and ceilings, not their collision geoms)."""

    kind: ClassVar[str] = "camera"
    outputs: tuple[str, ...] = ("rgb",)
    rgb_noise_std: float = 0.0  # in intensity units of [0, 1], as Gazebo's image noise
    depth_noise_std: float = 0.0  # m
    segment_by: str = "geom"
    history: int = 0
    resolution: tuple[int, int] | None = None
    geomgroups: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        outputs = (self.outputs,) if isinstance(self.outputs, str) else tuple(self.outputs)
        bad = [o for o in outputs if o not in CAMERA_OUTPUTS]
        if not outputs or bad:
            raise SensorError(
                f"CameraSpec.outputs: expected some of {list(CAMERA_OUTPUTS)}, got {self.outputs!r}"
            )
        object.__setattr__(self, "outputs", tuple(dict.fromkeys(outputs)))
        _nonneg(self, "rgb_noise_std", self.rgb_noise_std)
        _nonneg(self, "depth_noise_std", self.depth_noise_std)
        if self.segment_by not in SEGMENT_BY:
            raise SensorError(f"CameraSpec.segment_by: expected one of {list(SEGMENT_BY)}, "
                              f"got {self.segment_by!r}")
        if isinstance(self.history, bool) or not isinstance(self.history, int) or not (
                0 <= self.history <= MAX_HISTORY):
            raise SensorError(f"CameraSpec.history: expected an integer in [0, {MAX_HISTORY}] "
                              f"(frames kept per env), got {self.history!r}")
        if self.resolution is not None:
            size = tuple(self.resolution) if isinstance(self.resolution, (tuple, list)) else ()
            if len(size) != 2 or not all(isinstance(v, int) and not isinstance(v, bool)
                                         and 1 <= v <= MAX_PIXELS for v in size):
                raise SensorError(f"CameraSpec.resolution: expected (width, height), integers "
                                  f"in [1, {MAX_PIXELS}], got {self.resolution!r}")
            object.__setattr__(self, "resolution", size)
        if self.geomgroups is not None:
            found = (tuple(self.geomgroups) if isinstance(self.geomgroups, (tuple, list))
                     else None)
            if found is None or not all(isinstance(g, int) and not isinstance(g, bool)
                                        and 0 <= g < GEOM_GROUPS for g in found):
                raise SensorError(f"CameraSpec.geomgroups: expected geom groups in [0, "
                                  f"{GEOM_GROUPS}), got {self.geomgroups!r}")
            object.__setattr__(self, "geomgroups", tuple(sorted(set(found))))

    @property
    def unit_key(self) -> tuple:
        """Specs with equal unit keys share one render per sim time; a segmentation by body
        is a unit of its own (its pass writes other ids), and so is another resolution or
        set of geom groups."""
        key = super().unit_key
        if "segmentation" in self.outputs and self.segment_by == "body":
            key += (("segment_by", "body"),)
        if self.resolution is not None:
            key += (("resolution", self.resolution),)
        if self.geomgroups is not None:
            key += (("geomgroups", self.geomgroups),)
        return key


@dataclass(frozen=True)
class ImuSpec(SensorSpec):
    """Orientation, angular velocity and linear acceleration of an IMU site."""

    kind: ClassVar[str] = "imu"
    gyro_noise_std: float = 0.0  # rad/s
    accel_noise_std: float = 0.0  # m/s^2

    def __post_init__(self) -> None:
        super().__post_init__()
        _nonneg(self, "gyro_noise_std", self.gyro_noise_std)
        _nonneg(self, "accel_noise_std", self.accel_noise_std)


@dataclass(frozen=True)
class OdometrySpec(SensorSpec):
    """Pose and twist of the robot's base (its free joint) in the odom frame."""

    kind: ClassVar[str] = "odometry"
    position_noise_std: float = 0.0  # m
    twist_noise_std: float = 0.0  # m/s and rad/s

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sensor is not None:
            raise SensorError(f"OdometrySpec.sensor: expected None (the base), got {self.sensor!r}")
        _nonneg(self, "position_noise_std", self.position_noise_std)
        _nonneg(self, "twist_noise_std", self.twist_noise_std)

    @property
    def reading_key(self) -> str:
        return self.key or f"{self.robot}/odom"


@dataclass(frozen=True)
class ContactSpec(SensorSpec):
    """Contacts of one link (`link`, or the link of a declared contact `sensor`) with
    anything outside the robot, deepest first, at most `max_contacts`."""

    kind: ClassVar[str] = "contact"
    link: str | None = None
    max_contacts: int = 8

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.link is None) == (self.sensor is None):
            raise SensorError(
                f"ContactSpec: expected a link or a declared contact sensor, got "
                f"link={self.link!r} and sensor={self.sensor!r}"
            )
        if isinstance(self.max_contacts, bool) or not isinstance(self.max_contacts, int) or (
            self.max_contacts < 1
        ):
            raise SensorError(
                f"ContactSpec.max_contacts: expected an integer >= 1, got {self.max_contacts!r}"
            )

    @property
    def reading_key(self) -> str:
        if self.key:
            return self.key
        return f"{self.robot}/contact/{self.link}" if self.link else f"{self.robot}/{self.sensor}"

    @property
    def unit_key(self) -> tuple[str, str, str]:
        return (self.kind, self.robot, f"link:{self.link}" if self.link else self.sensor or "")


@dataclass(frozen=True)
class CollisionSpec(SensorSpec):
    """The robot-level collision flag: a contact with anything but the floor, or a floor
    contact of anything but the robot's feet (wheels, and casters resting on the ground)."""

    kind: ClassVar[str] = "collision"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sensor is not None:
            raise SensorError(
                f"CollisionSpec.sensor: expected None (the robot), got {self.sensor!r}")

    @property
    def reading_key(self) -> str:
        return self.key or f"{self.robot}/collision"


@dataclass(frozen=True)
class MujocoSpec(SensorSpec):
    """A robot's or MJCF model's own MuJoCo `<sensor>` elements, read from `sensordata` by
    name: `sensor` one of them (its name without the env and entity prefix), None: all of
    them, one reading field each. MuJoCo applies `cutoff`, `delay`, `interval` and
    `nsample` itself (sensors/mujoco_sensors.py); `noise` is its metadata, which we apply:
    "declared" takes each sensor's `noise` as the std of Gaussian noise, a number
    overrides it for all. `user(name, model, data)` gives the values of the user sensors
    (type user) from a copy of the env's MjData at sampling."""

    kind: ClassVar[str] = "mujoco"
    noise: float | str = "declared"
    user: Callable[[str, object, object], object] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.noise != "declared":
            _nonneg(self, "noise", self.noise)
        if self.user is not None and not callable(self.user):
            raise SensorError(f"MujocoSpec.user: expected a callable (name, model, data) -> "
                              f"values or None, got {self.user!r}")

    @property
    def reading_key(self) -> str:
        return self.key or f"{self.robot}/{self.sensor or 'mujoco'}"
