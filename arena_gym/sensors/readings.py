"""Readings: preallocated (num_envs, ...) arrays that the suite writes in place.

Every reading has, per env: `valid` (a sample has been shown), `stamp` (the sim time the
shown sample was taken, NaN before), `count` (samples shown so far) and `fresh` (shown at
the last update). The arrays keep their identity for the suite's life; hold on to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from arena_gym.sensors.errors import SensorError

if TYPE_CHECKING:
    from arena_gym.sensors.camera import Optics
    from arena_gym.sensors.lidar import RayPattern


class Reading:
    """Base: bookkeeping arrays and the named data arrays (`data`)."""

    kind = ""

    def __init__(self, key: str, robot: str, sensor: str, num_envs: int, period: float,
                 fields: dict[str, tuple[tuple[int, ...], np.dtype, object]]) -> None:
        self.key, self.robot, self.sensor = key, robot, sensor
        self.num_envs = num_envs
        self.period = period  # s between samples; 0: every tick
        self.valid = np.zeros(num_envs, dtype=bool)
        self.stamp = np.full(num_envs, np.nan)
        self.count = np.zeros(num_envs, dtype=np.int64)
        self.fresh = np.zeros(num_envs, dtype=bool)
        self.data = {
            name: np.full((num_envs, *shape), fill, dtype=dtype)
            for name, (shape, dtype, fill) in fields.items()
        }

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in self.data.items())
        return f"{type(self).__name__}({self.key!r}, {shapes})"


class LidarReading(Reading):
    """REP 117 ranges: +inf where nothing is hit within `range_max`, -inf below `range_min`.

    `ranges` is (num_envs, beams) for a 2D lidar (LaserScan: beam i at angle_min + i *
    angle_increment), (num_envs, rings, beams) for a multi-ring one, ring j at elevation
    `elevations[j]`. `points()` gives the hits in the sensor frame (x forward, y left, z up).
    """

    kind = "lidar"

    def __init__(self, key: str, robot: str, sensor: str, num_envs: int, period: float,
                 pattern: RayPattern) -> None:
        self.pattern = pattern
        shape = (pattern.beams,) if pattern.rings == 1 else (pattern.rings, pattern.beams)
        super().__init__(key, robot, sensor, num_envs, period,
                         {"ranges": (shape, np.dtype(np.float32), np.inf)})
        self.angle_min = pattern.angle_min
        self.angle_max = pattern.angle_max
        self.angle_increment = pattern.angle_increment
        self.range_min = pattern.range_min
        self.range_max = pattern.range_max
        self.elevations = pattern.elevations
        self.scan_time = period

    @property
    def ranges(self) -> np.ndarray:
        return self.data["ranges"]

    def points(self) -> np.ndarray:
        """(num_envs, rings * beams, 3) float32 hit points in the sensor frame; NaN rows for
        beams without a finite range."""
        r = self.ranges.reshape(self.num_envs, -1).astype(np.float32)
        r = np.where(np.isfinite(r), r, np.nan)
        return r[:, :, None] * self.pattern.directions.astype(np.float32)[None]


class CameraReading(Reading):
    """Images of a camera that looks along +x of its mount (z up): `rgb` uint8 (H, W, 3),
    `depth` float32 m along the optical axis (+inf past the far clip, -inf before the
    near one), `points` float32 (H * W, 3) in the sensor frame (x forward, y left, z up),
    NaN where depth is not finite, `segmentation` int32 (H, W, 2): per pixel the (id, mjtObj
    type) of the geom drawn there, or of its body (CameraSpec.segment_by), (-1, -1) where
    nothing is. `K` and `P` are ROS CameraInfo matrices (pixel centres at integer
    coordinates, row 0 at the top)."""

    kind = "camera"

    def __init__(self, key: str, robot: str, sensor: str, num_envs: int, period: float,
                 optics: Optics, outputs: tuple[str, ...]) -> None:
        h, w = optics.height, optics.width
        fields = {}
        if "rgb" in outputs:
            fields["rgb"] = ((h, w, 3), np.dtype(np.uint8), 0)
        if "depth" in outputs:
            fields["depth"] = ((h, w), np.dtype(np.float32), np.inf)
        if "points" in outputs:
            fields["points"] = ((h * w, 3), np.dtype(np.float32), np.nan)
        if "segmentation" in outputs:
            fields["segmentation"] = ((h, w, 2), np.dtype(np.int32), -1)
        super().__init__(key, robot, sensor, num_envs, period, fields)
        self.optics = optics
        self.width, self.height = w, h
        self.K, self.P = optics.K, optics.P
        # the last frames kept (CameraSpec.history): a camera_frames.FrameHistory, or None
        self.history: Any = None

    @property
    def rgb(self) -> np.ndarray | None:
        return self.data.get("rgb")

    @property
    def depth(self) -> np.ndarray | None:
        return self.data.get("depth")

    @property
    def points(self) -> np.ndarray | None:
        return self.data.get("points")

    @property
    def segmentation(self) -> np.ndarray | None:
        return self.data.get("segmentation")


class ImuReading(Reading):
    """`orientation` (w, x, y, z) of the IMU site in the world, `angular_velocity` (rad/s)
    and `linear_acceleration` (m/s^2, gravity included: +9.81 on z at rest) in its frame."""

    kind = "imu"
    AVERAGED = ("angular_velocity", "linear_acceleration")

    def __init__(self, key: str, robot: str, sensor: str, num_envs: int, period: float) -> None:
        f64 = np.dtype(np.float64)
        super().__init__(key, robot, sensor, num_envs, period, {
            "orientation": ((4,), f64, np.nan),
            "angular_velocity": ((3,), f64, np.nan),
            "linear_acceleration": ((3,), f64, np.nan),
        })

    @property
    def orientation(self) -> np.ndarray:
        return self.data["orientation"]

    @property
    def angular_velocity(self) -> np.ndarray:
        return self.data["angular_velocity"]

    @property
    def linear_acceleration(self) -> np.ndarray:
        return self.data["linear_acceleration"]


class OdometryReading(Reading):
    """Base pose in the odom frame (which coincides with the world frame, as Gazebo's
    `odometrySource world`): `position`, `orientation` (w, x, y, z); twist in the base
    frame (as nav_msgs/Odometry): `linear_velocity`, `angular_velocity`."""

    kind = "odometry"

    def __init__(self, key: str, robot: str, sensor: str, num_envs: int, period: float) -> None:
        f64 = np.dtype(np.float64)
        super().__init__(key, robot, sensor, num_envs, period, {
            "position": ((3,), f64, np.nan),
            "orientation": ((4,), f64, np.nan),
            "linear_velocity": ((3,), f64, np.nan),
            "angular_velocity": ((3,), f64, np.nan),
        })

    @property
    def position(self) -> np.ndarray:
        return self.data["position"]

    @property
    def orientation(self) -> np.ndarray:
        return self.data["orientation"]

    @property
    def linear_velocity(self) -> np.ndarray:
        return self.data["linear_velocity"]

    @property
    def angular_velocity(self) -> np.ndarray:
        return self.data["angular_velocity"]


@dataclass(frozen=True)
class Contact:
    """One contact of a link: world position, unit normal pointing into the link's geom,
    penetration depth (m, > 0 when overlapping), and the other geom's name (its MuJoCo
    name, else its body's)."""

    position: np.ndarray
    normal: np.ndarray
    depth: float
    other: str


class ContactReading(Reading):
    """Contacts of a link with anything outside its robot, deepest first: `num` (how many
    of the `max_contacts` slots are filled), `position`, `normal`, `depth`, `other_geom` and
    `own_geom` (the other's and the link's geom ids, -1 in empty slots); `geom_names[env]`
    names each geom id (its MuJoCo name, else its body's)."""

    kind = "contact"

    def __init__(self, key: str, robot: str, sensor: str, num_envs: int, period: float,
                 max_contacts: int) -> None:
        k = max_contacts
        super().__init__(key, robot, sensor, num_envs, period, {
            "num": ((), np.dtype(np.int32), 0),
            "position": ((k, 3), np.dtype(np.float64), np.nan),
            "normal": ((k, 3), np.dtype(np.float64), np.nan),
            "depth": ((k,), np.dtype(np.float64), np.nan),
            "other_geom": ((k,), np.dtype(np.int32), -1),
            "own_geom": ((k,), np.dtype(np.int32), -1),
        })
        self.max_contacts = k
        self.geom_names: list[dict[int, str]] = [{} for _ in range(num_envs)]

    @property
    def num(self) -> np.ndarray:
        return self.data["num"]

    @property
    def position(self) -> np.ndarray:
        return self.data["position"]

    @property
    def normal(self) -> np.ndarray:
        return self.data["normal"]

    @property
    def depth(self) -> np.ndarray:
        return self.data["depth"]

    @property
    def other_geom(self) -> np.ndarray:
        return self.data["other_geom"]

    @property
    def own_geom(self) -> np.ndarray:
        return self.data["own_geom"]

    def contacts(self, env: int) -> list[Contact]:
        """The shown contacts of one env as records (empty while touching nothing)."""
        names = self.geom_names[env]
        return [
            Contact(self.position[env, i].copy(), self.normal[env, i].copy(),
                    float(self.depth[env, i]), names.get(int(self.other_geom[env, i]), ""))
            for i in range(int(self.num[env]))
        ]


class CollisionReading(Reading):
    """`collided`: the robot touched anything but the floor, or the floor with anything but
    its feet, at any physics step since the previous sample (contact.py has the rule);
    `kind`: what it hit, an index into COLLISION_CLASSES ("none", "wall", "obstacle",
    "robot", "pedestrian"); `contacts`: how many such contacts (at the window's last step,
    else the most at any of its steps)."""

    def __init__(self, key: str, robot: str, sensor: str, num_envs: int, period: float) -> None:
        super().__init__(key, robot, sensor, num_envs, period, {
            "collided": ((), np.dtype(bool), False),
            "contacts": ((), np.dtype(np.int32), 0),
            "kind": ((), np.dtype(np.int8), 0),
        })

    @property
    def collided(self) -> np.ndarray:
        return self.data["collided"]

    @property
    def contacts(self) -> np.ndarray:
        return self.data["contacts"]

    @property
    def kind(self) -> np.ndarray:  # type: ignore[override]
        """(num_envs,) int8: what was hit, an index into COLLISION_CLASSES (unlike the
        other readings, whose `kind` names the sensor kind)."""
        return self.data["kind"]

    @property
    def classes(self) -> np.ndarray:
        """`kind` as class names, (num_envs,) str."""
        from arena_gym.sensors.contact import COLLISION_CLASSES

        return np.asarray(COLLISION_CLASSES)[self.data["kind"]]


class MujocoReading(Reading):
    """A robot's or model's own MuJoCo sensors (MujocoSpec), one float64 field each, named
    as the model names them (without the env and entity prefix), (num_envs, dim):
    `reading.data["wrist_force"]`, or `reading["wrist_force"]`. `types` holds each one's
    mujoco.mjtSensor. Values are those MuJoCo put in `sensordata` in the last physics step
    (cutoff, delay, interval applied), with our noise on top."""

    kind = "mujoco"

    def __init__(self, key: str, robot: str, sensor: str, num_envs: int, period: float,
                 dims: dict[str, int], types: dict[str, int]) -> None:
        f64 = np.dtype(np.float64)
        super().__init__(key, robot, sensor, num_envs, period,
                         {name: ((dim,), f64, np.nan) for name, dim in dims.items()})
        self.types = dict(types)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.data:
            raise SensorError(f"reading {self.key!r}: expected one of its sensors "
                              f"{list(self.data)}, got {name!r}")
        return self.data[name]
