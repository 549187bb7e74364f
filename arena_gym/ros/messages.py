"""A frame (the per-tick arrays of frames.py) as serialized ROS 2 messages: the one encoder
of everything the bridge sends. The node publishes these bytes as they are
(`Publisher.publish(bytes)`), the MCAP recorder writes the same bytes: one path, and no
ROS install is needed to record.

Only the standard library and numpy: the node loads this module by path in the ROS venv.
Encoding: CDR little endian with its 4-byte encapsulation header (what FastDDS and rosbag2
use); every primitive aligned to its size, counted from after the header.

Order per frame, as the node publishes: /tf (every robot of every env), then per robot
odom, scan, points, imu and the camera's topics (those sampled this tick, at their own stamps),
then every robot's joint_states, then /clock: the clock never runs ahead of the
transforms. A paused frame (the bridge paused, its clock frozen) has /tf and joint_states
only.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np

Message = tuple[str, str, bytes, int]  # topic, type, CDR bytes, stamp (ns)
# a camera's topics in its robot's namespace (`points` is the lidar's)
CAMERA_TOPICS = {"image_raw": "sensor_msgs/msg/Image",
                 "depth/image_raw": "sensor_msgs/msg/Image",
                 "depth/points": "sensor_msgs/msg/PointCloud2",
                 "camera_info": "sensor_msgs/msg/CameraInfo"}
_FLOAT32 = 7  # sensor_msgs/PointField.FLOAT32
_ZEROS_36 = np.zeros(36).tobytes()
_ZEROS_9 = np.zeros(9).tobytes()


class Cdr:
    """Appends CDR fields to a buffer, aligning each to its size."""

    def __init__(self) -> None:
        self.buf = bytearray(b"\x00\x01\x00\x00")  # CDR_LE encapsulation

    def _align(self, n: int) -> None:
        pad = -(len(self.buf) - 4) % n
        if pad:
            self.buf += b"\x00" * pad

    def u8(self, v: int) -> None:
        self.buf.append(v)

    def u32(self, v: int) -> None:
        self._align(4)
        self.buf += struct.pack("<I", v)

    def u8_seq(self, data: bytes) -> None:
        self.u32(len(data))
        self.buf += data

    def time(self, ns: int) -> int:
        self._align(4)
        at = len(self.buf)
        self.buf += struct.pack("<iI", ns // 1_000_000_000, ns % 1_000_000_000)
        return at

    def string(self, s: str) -> None:
        data = s.encode()
        self.u32(len(data) + 1)
        self.buf += data + b"\x00"

    def f32s(self, values: tuple[float, ...] | list[float]) -> None:
        self._align(4)
        self.buf += struct.pack(f"<{len(values)}f", *values)

    def f64_bytes(self, data: bytes) -> int:
        """Doubles already packed little endian (a fixed array or xyz fields); returns
        where they start."""
        self._align(8)
        at = len(self.buf)
        self.buf += data
        return at

    def f64s(self, values) -> int:
        return self.f64_bytes(np.asarray(values, dtype="<f8").tobytes())

    def f64_seq(self, values: np.ndarray) -> None:
        self.u32(len(values))
        if len(values):
            self.f64s(values)

    def f32_seq(self, values: np.ndarray) -> None:
        self.u32(len(values))
        if len(values):
            self._align(4)
            self.buf += np.asarray(values, dtype="<f4").tobytes()

    def header(self, ns: int, frame_id: str) -> int:
        at = self.time(ns)
        self.string(frame_id)
        return at

    def quat(self, wxyz: np.ndarray) -> int:  # ROS order: x, y, z, w
        return self.f64s((wxyz[1], wxyz[2], wxyz[3], wxyz[0]))


class Template:
    """A message whose layout is fixed (its strings and sequence lengths known): encoded
    once with zeros, then each message is a copy with the stamp and the doubles written
    at their offsets (a few microseconds instead of a field-by-field encode)."""

    def __init__(self, cdr: Cdr, stamp_at: int, doubles_at: list[int]) -> None:
        self.data, self.stamp_at, self.doubles_at = bytes(cdr.buf), stamp_at, doubles_at

    def fill(self, ns: int, *doubles: np.ndarray) -> bytes:
        buf = bytearray(self.data)
        struct.pack_into("<iI", buf, self.stamp_at, ns // 1_000_000_000, ns % 1_000_000_000)
        for at, values in zip(self.doubles_at, doubles, strict=True):
            raw = values.astype("<f8", copy=False).tobytes()
            buf[at:at + len(raw)] = raw
        return bytes(buf)


_XYZW = [1, 2, 3, 0]  # (w, x, y, z) -> ROS's (x, y, z, w)


def odom_template(ns: str, base: str) -> Template:
    c = Cdr()
    stamp_at = c.header(0, f"{ns}/odom")
    c.string(f"{ns}/{base}")
    pose = c.f64s(np.zeros(7))
    c.f64_bytes(_ZEROS_36)
    twist = c.f64s(np.zeros(6))
    c.f64_bytes(_ZEROS_36)
    return Template(c, stamp_at, [pose, twist])


def imu_template(frame: str) -> Template:
    c = Cdr()
    stamp_at = c.header(0, frame)
    orientation = c.f64s(np.zeros(4))
    c.f64_bytes(_ZEROS_9)
    gyro = c.f64s(np.zeros(3))
    c.f64_bytes(_ZEROS_9)
    accel = c.f64s(np.zeros(3))
    c.f64_bytes(_ZEROS_9)
    return Template(c, stamp_at, [orientation, gyro, accel])


def joints_template(names: list[str]) -> Template:
    c = Cdr()
    stamp_at = c.header(0, "")
    c.u32(len(names))
    for name in names:
        c.string(name)
    c.u32(len(names))
    position = c.f64s(np.zeros(len(names)))
    c.u32(len(names))
    velocity = c.f64s(np.zeros(len(names)))
    c.u32(0)  # no efforts
    return Template(c, stamp_at, [position, velocity])


def nanos(t: float) -> int:
    return int(round(t * 1e9))


def tf_message(transforms: list[tuple[int, str, str, np.ndarray, np.ndarray]]) -> bytes:
    """TFMessage of (stamp ns, parent, child, xyz, quat wxyz) transforms."""
    c = Cdr()
    c.u32(len(transforms))
    for ns, parent, child, xyz, quat in transforms:
        c.header(ns, parent)
        c.string(child)
        c.f64s(xyz)
        c.quat(quat)
    return bytes(c.buf)


def clock_message(ns: int) -> bytes:
    c = Cdr()
    c.time(ns)
    return bytes(c.buf)


def static_messages(metas: list[dict]) -> Iterator[Message]:
    """/tf_static: every sensor mount of every bridged robot (of each meta: a robot name) in
    one message (a latched topic keeps only the last)."""
    transforms = [(0, f"{r['ns']}/{m.get('parent', r['base'])}", f"{r['ns']}/{m['child']}",
                   np.array(m["xyz"]), np.array(m["quat"]))
                  for meta in metas for r in meta["robots"] for m in meta["static"]]
    yield "/tf_static", "tf2_msgs/msg/TFMessage", tf_message(transforms), 0


def _templates(meta: dict) -> dict:
    cached = meta.get("_templates")
    if cached is None:
        imu = meta["imu"]
        cached = meta["_templates"] = {
            "odom": [odom_template(r["ns"], r["base"]) for r in meta["robots"]],
            "imu": [imu_template(f"{r['ns']}/{imu['frame']}") if imu else None
                    for r in meta["robots"]],
            "joints": [joints_template(r["joints"]) for r in meta["robots"]],
            # the lidar's unit beam directions (rings * beams, 3), ring-major as its ranges
            "directions": (np.asarray(meta["lidar"]["directions"], dtype=np.float32)
                           if meta["lidar"] else None),
            "camera_info": [camera_info_template(f"{r['ns']}/{meta['camera']['optical']}",
                                                 meta["camera"]) if meta["camera"] else None
                            for r in meta["robots"]],
        }
    return cached


def frame_messages(groups: list[tuple[dict, dict[str, np.ndarray]]]) -> Iterator[Message]:
    """The messages of one tick: `groups` holds (meta, frame) of each bridged robot name
    (the bridge's robot first; a robot spawned later adds one), all at the same clock."""
    f0 = groups[0][1]
    now = nanos(float(f0["clock"][0]))
    transforms = [(now, f"{r['ns']}/odom", f"{r['ns']}/{r['base']}",
                   f["odom.position"][r["env"]], f["odom.orientation"][r["env"]])
                  for meta, f in groups for r in meta["robots"] if f["odom.valid"][r["env"]]]
    yield "/tf", "tf2_msgs/msg/TFMessage", tf_message(transforms), now
    if not f0["paused"][0]:
        for meta, f in groups:
            yield from _robot_messages(meta, f)
    for meta, f in groups:
        yield from _joint_states(meta, f, _templates(meta), now)
    if not f0["paused"][0]:
        yield "/clock", "rosgraph_msgs/msg/Clock", clock_message(now), now


def _robot_messages(meta: dict, f: dict[str, np.ndarray]) -> Iterator[Message]:
    """Each robot's sensor topics sampled this tick (of one robot name, every env)."""
    templates = _templates(meta)
    lidar, imu = meta["lidar"], meta["imu"]
    pose = np.concatenate([f["odom.position"], f["odom.orientation"][:, _XYZW]], axis=1)
    twist = np.concatenate([f["odom.linear_velocity"], f["odom.angular_velocity"]], axis=1)
    imu_quat = f["imu.orientation"][:, _XYZW] if imu else None
    for i, r in enumerate(meta["robots"]):
        e, ns = r["env"], r["ns"]
        if f["odom.fresh"][e]:
            t = nanos(float(f["odom.stamp"][e]))
            yield (f"/{ns}/odom", "nav_msgs/msg/Odometry",
                   templates["odom"][i].fill(t, pose[e], twist[e]), t)
        if lidar and f["scan.fresh"][e]:
            yield from lidar_messages(lidar, ns, f["scan.ranges"][e],
                                      nanos(float(f["scan.stamp"][e])), templates["directions"])
        if imu and f["imu.fresh"][e]:
            t = nanos(float(f["imu.stamp"][e]))
            yield (f"/{ns}/imu", "sensor_msgs/msg/Imu", templates["imu"][i].fill(
                t, imu_quat[e], f["imu.angular_velocity"][e], f["imu.linear_acceleration"][e]),
                t)
        if meta["camera"] and f["camera.fresh"][e]:
            yield from camera_messages(meta["camera"], ns, f, e, templates["camera_info"][i])


def _joint_states(meta: dict, f: dict[str, np.ndarray], templates: dict,
                  now: int) -> Iterator[Message]:
    for i, r in enumerate(meta["robots"]):
        e = r["env"]
        if r["joints"]:
            yield (f"/{r['ns']}/joint_states", "sensor_msgs/msg/JointState",
                   templates["joints"][i].fill(now, f["joint_pos"][e], f["joint_vel"][e]), now)


def lidar_messages(lidar: dict, ns: str, ranges: np.ndarray, t: int,
                   directions: np.ndarray) -> Iterator[Message]:
    """One lidar sample: its LaserScan (a multi-ring lidar's middle ring, ring rings // 2, as
    Arena's backend) and its PointCloud2 (every ring)."""
    frame = f"{ns}/{lidar['frame']}"
    c = Cdr()
    c.header(t, frame)
    c.f32s((lidar["angle_min"], lidar["angle_max"], lidar["angle_increment"], 0.0,
            lidar["scan_time"], lidar["range_min"], lidar["range_max"]))
    c.f32_seq(ranges[ranges.shape[0] // 2] if ranges.ndim == 2 else ranges)
    c.u32(0)  # no intensities
    yield f"/{ns}/scan", "sensor_msgs/msg/LaserScan", bytes(c.buf), t
    yield f"/{ns}/points", "sensor_msgs/msg/PointCloud2", cloud(
        t, frame, lidar["rings"], lidar["beams"], lidar_points(ranges, directions)), t


def lidar_points(ranges: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """(rings * beams, 3) float32 points in the lidar's frame: range x beam direction, NaN
    where the range is not finite (a miss: +inf, or -inf below range_min). The same values
    as the sensors layer's LidarReading.points(); organised as Gazebo's gpu_lidar cloud (one
    point per beam, ring-major, rings from the lowest elevation), which writes its misses as
    +-inf coordinates instead: NaN is what PCL and depth_image_proc use for "no point"."""
    r = ranges.reshape(-1).astype(np.float32)
    r = np.where(np.isfinite(r), r, np.float32(np.nan))
    return r[:, None] * directions


def image(stamp: int, frame: str, height: int, width: int, encoding: str,
          data: np.ndarray) -> bytes:
    """sensor_msgs/Image of `data` (rows top first, little endian)."""
    c = Cdr()
    c.header(stamp, frame)
    c.u32(height)
    c.u32(width)
    c.string(encoding)
    c.u8(0)  # little endian
    c.u32(data.nbytes // height)
    c.u8_seq(np.ascontiguousarray(data).tobytes())
    return bytes(c.buf)


def cloud(stamp: int, frame: str, height: int, width: int, points: np.ndarray) -> bytes:
    """An organized sensor_msgs/PointCloud2 of float32 x, y, z (NaN where no return):
    `height` rows of `width` points; dense only when no point is NaN."""
    c = Cdr()
    c.header(stamp, frame)
    c.u32(height)
    c.u32(width)
    c.u32(3)
    for i, name in enumerate("xyz"):
        c.string(name)
        c.u32(4 * i)
        c.u8(_FLOAT32)
        c.u32(1)
    c.u8(0)  # little endian
    c.u32(12)
    c.u32(12 * width)
    c.u8_seq(np.ascontiguousarray(points, dtype="<f4").tobytes())
    c.u8(int(not np.isnan(points).any()))  # is_dense
    return bytes(c.buf)


def camera_info_template(frame: str, camera: dict) -> Template:
    """sensor_msgs/CameraInfo of an ideal pinhole (no distortion); only the stamp changes."""
    c = Cdr()
    stamp_at = c.header(0, frame)
    c.u32(camera["height"])
    c.u32(camera["width"])
    c.string("plumb_bob")
    c.f64_seq(np.zeros(5))
    c.f64s(camera["K"])
    c.f64s(np.eye(3).ravel())
    c.f64s(camera["P"])
    for _ in range(6):  # binning x, y; roi x_offset, y_offset, height, width (0: full)
        c.u32(0)
    c.u8(0)  # roi.do_rectify
    return Template(c, stamp_at, [])


def camera_messages(camera: dict, ns: str, f: dict[str, np.ndarray], e: int,
                    info: Template) -> Iterator[Message]:
    """Env e's image, depth image, point cloud (in the mount frame) and camera info."""
    t = nanos(float(f["camera.stamp"][e]))
    h, w = camera["height"], camera["width"]
    optical = f"{ns}/{camera['optical']}"
    kind = CAMERA_TOPICS
    yield (f"/{ns}/image_raw", kind["image_raw"],
           image(t, optical, h, w, "rgb8", f["camera.rgb"][e]), t)
    yield (f"/{ns}/depth/image_raw", kind["depth/image_raw"],
           image(t, optical, h, w, "32FC1", f["camera.depth"][e].astype("<f4", copy=False)), t)
    yield (f"/{ns}/depth/points", kind["depth/points"],
           cloud(t, f"{ns}/{camera['frame']}", h, w, f["camera.points"][e]), t)
    yield f"/{ns}/camera_info", kind["camera_info"], info.fill(t), t
