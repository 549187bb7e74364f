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
from collections.abc import Callable, Container, Iterator

import numpy as np

Message = tuple[str, str, bytes, int]  # topic, type, CDR bytes, stamp (ns)
# a camera's topics in its robot's namespace (`points` is the lidar's)
CAMERA_TOPICS = {"image_raw": "sensor_msgs/msg/Image",
                 "depth/image_raw": "sensor_msgs/msg/Image",
                 "depth/points": "sensor_msgs/msg/PointCloud2",
                 "camera_info": "sensor_msgs/msg/CameraInfo"}
# each sensor kind's topics, as its robot's first sensor of that kind names them in the
# robot's namespace (a further one puts its own name before them: sensor_topics.py)
KIND_TOPICS = {"lidar": {"scan": "sensor_msgs/msg/LaserScan",
                         "points": "sensor_msgs/msg/PointCloud2"},
               "imu": {"imu": "sensor_msgs/msg/Imu"},
               "camera": CAMERA_TOPICS,
               "contact": {"contact": "ros_gz_interfaces/msg/Contacts"}}
COLLISION = 5  # ros_gz_interfaces/Entity.COLLISION
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

    def u64(self, v: int) -> None:
        self._align(8)
        self.buf += struct.pack("<Q", v)

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
    """A message whose layout is fixed (its strings and sequence lengths known), encoded
    once with zeros; a message is that encoding with its stamps and values put in by one
    `struct` call (Python floats and bytes, no numpy per message: per-message Python and
    numpy calls were most of the bridge's cost per tick).

    `stamps`: the offsets of the header stamps (all filled with one time); `values`:
    (offset, count, code) of each value field, code "d" (count doubles) or "s" (count
    bytes, given as bytes)."""

    def __init__(self, cdr: Cdr, stamps: list[int], values: list[tuple[int, int, str]]
                 ) -> None:
        self.data = bytes(cdr.buf)
        fields = sorted([(at, 8, "iI", None) for at in stamps] +
                        [(at, count * (8 if code == "d" else 1), f"{count}{code}", k)
                         for k, (at, count, code) in enumerate(values)])
        fmt, self._plan, end = "<", [], 0  # plan: None (a stamp) or a value's index
        for at, size, code, k in fields:
            if at > end:
                fmt += f"{at - end}s"
                self._plan.append(self.data[end:at])
            fmt += code
            self._plan.append(k if k is None or code.endswith("s") else (k,))
            end = at + size
        fmt += f"{len(self.data) - end}s"
        self._plan.append(self.data[end:])
        self._struct = struct.Struct(fmt)

    def fill(self, ns: int, *values) -> bytes:
        """The message stamped `ns` holding `values` (sequences of floats, or bytes)."""
        args: list = []
        stamp = (ns // 1_000_000_000, ns % 1_000_000_000)
        for part in self._plan:
            if part is None:
                args += stamp
            elif type(part) is tuple:
                args += values[part[0]]
            elif type(part) is int:
                args.append(values[part])
            else:
                args.append(part)
        return self._struct.pack(*args)


def frame_id(r: dict, name: str) -> str:
    """A robot's frame `name` as published: under its namespace (`ns/name`), or under the
    tf prefix its spawn request named (Arena's SpawnUrdf: `tf_prefix` + name)."""
    prefix = r.get("tf_prefix")
    return f"{r['ns']}/{name}" if prefix is None else prefix + name


def sensor_frame(r: dict, sensor: dict) -> str:
    """The frame a sensor's messages carry: its own (`ns/frame`), or the frame the spawn
    request listed for it (`tf_prefix` + frame)."""
    return frame_id(r, r.get("frames", {}).get(sensor["role"], sensor["frame"]))


def topics_of(r: dict) -> dict[str, str]:
    """A robot's topic per topic key (sensor_topics.py; "": not published)."""
    return r["topics"]


def odom_template(r: dict) -> Template:
    c = Cdr()
    stamp_at = c.header(0, frame_id(r, "odom"))
    c.string(frame_id(r, r["base"]))
    pose = c.f64s(np.zeros(7))
    c.f64_bytes(_ZEROS_36)
    twist = c.f64s(np.zeros(6))
    c.f64_bytes(_ZEROS_36)
    return Template(c, [stamp_at], [(pose, 7, "d"), (twist, 6, "d")])


def imu_template(frame: str) -> Template:
    c = Cdr()
    stamp_at = c.header(0, frame)
    orientation = c.f64s(np.zeros(4))
    c.f64_bytes(_ZEROS_9)
    gyro = c.f64s(np.zeros(3))
    c.f64_bytes(_ZEROS_9)
    accel = c.f64s(np.zeros(3))
    c.f64_bytes(_ZEROS_9)
    return Template(c, [stamp_at],
                    [(orientation, 4, "d"), (gyro, 3, "d"), (accel, 3, "d")])


def joints_template(names: list[str]) -> Template:
    """JointState: position, velocity and effort (the actuators' force on each joint)."""
    c = Cdr()
    stamp_at = c.header(0, "")
    c.u32(len(names))
    for name in names:
        c.string(name)
    values = []
    for _ in range(3):
        c.u32(len(names))
        values.append((c.f64s(np.zeros(len(names))), len(names), "d"))
    return Template(c, [stamp_at], values)


def scan_template(lidar: dict, r: dict) -> Template:
    """LaserScan of one lidar: a multi-ring lidar's middle ring (as Arena's backend), its
    `beams` float32 ranges (as bytes) the only values that change."""
    c = Cdr()
    stamp_at = c.header(0, sensor_frame(r, lidar))
    c.f32s((lidar["angle_min"], lidar["angle_max"], lidar["angle_increment"], 0.0,
            lidar["scan_time"], lidar["range_min"], lidar["range_max"]))
    c.f32_seq(np.zeros(lidar["beams"]))
    ranges = len(c.buf) - 4 * lidar["beams"]
    c.u32(0)  # no intensities
    return Template(c, [stamp_at], [(ranges, 4 * lidar["beams"], "s")])


def tf_template(frames: list[tuple[str, str]]) -> Template:
    """TFMessage of (parent, child) transforms, all at one stamp: values are each
    transform's xyz and x, y, z, w quaternion (7 doubles)."""
    c = Cdr()
    c.u32(len(frames))
    stamps, poses = [], []
    for parent, child in frames:
        stamps.append(c.header(0, parent))
        c.string(child)
        poses.append((c.f64s(np.zeros(7)), 7, "d"))
    return Template(c, stamps, poses)


def nanos(t: float) -> int:
    return int(round(t * 1e9))


def clock_message(ns: int) -> bytes:
    c = Cdr()
    c.time(ns)
    return bytes(c.buf)


def static_messages(metas: list[dict]) -> Iterator[Message]:
    """/tf_static: every sensor mount of every bridged robot (of each meta: a robot name) in
    one message (a latched topic keeps only the last). A robot of an Arena session
    (`arena`) leaves out the frames that are links of its URDF: the runtime's
    robot_state_publisher latches those along the URDF's chain."""
    mounts = [(r, m) for meta in metas for r in meta["robots"] for m in meta["static"]
              if not (r.get("arena") and m["child"] in meta.get("links", ()))]
    template = tf_template([(frame_id(r, m.get("parent", r["base"])), frame_id(r, m["child"]))
                            for r, m in mounts])
    w_last = [[*m["xyz"], *m["quat"][1:], m["quat"][0]] for _, m in mounts]  # ROS: x, y, z, w
    yield "/tf_static", "tf2_msgs/msg/TFMessage", template.fill(0, *w_last), 0


def _templates(meta: dict) -> dict:
    cached = meta.get("_templates")
    if cached is None:
        robots = meta["robots"]
        cached = meta["_templates"] = {
            "odom": [odom_template(r) for r in robots],
            "joints": [joints_template(r["joints"]) for r in robots],
            "topics": [topics_of(r) for r in robots],
            "sensors": [_sensor_templates(s, robots) for s in meta["sensors"]],
            "tf": {},  # the /tf template of each set of robots with valid odometry
        }
    return cached


def _sensor_templates(sensor: dict, robots: list[dict]) -> dict:
    """What one sensor's messages reuse, per robot entry: its frame's column names, the
    templates of its fixed-layout messages, its topics by name (KIND_TOPICS)."""
    role, kind = sensor["role"], sensor["kind"]
    out: dict = {"sensor": sensor, "fresh": f"{role}.fresh", "stamp": f"{role}.stamp",
                 "topics": [{name: topics_of(r)[sensor["prefix"] + name]
                             for name in KIND_TOPICS[kind]} for r in robots]}
    if kind == "lidar":
        out["scan"] = [scan_template(sensor, r) for r in robots]
        # the lidar's unit beam directions (rings * beams, 3), ring-major as its ranges
        out["directions"] = np.asarray(sensor["directions"], dtype=np.float32)
    elif kind == "imu":
        out["imu"] = [imu_template(sensor_frame(r, sensor)) for r in robots]
    elif kind == "camera":
        out["camera_info"] = [camera_info_template(camera_frame(r, sensor), sensor)
                              for r in robots]
    return out


class Columns:
    """A frame's arrays as Python lists, each converted once when first read: the messages
    of a tick index these per robot without a numpy call each."""

    def __init__(self, frame: dict[str, np.ndarray]) -> None:
        self.frame = frame
        self._lists: dict[str, list] = {}

    def __getitem__(self, name: str) -> list:
        out = self._lists.get(name)
        if out is None:
            out = self._lists[name] = self.frame[name].tolist()
        return out


def frame_messages(groups: list[tuple[dict, dict[str, np.ndarray]]],
                   wanted: Container[str] | None = None) -> Iterator[Message]:
    """The messages of one tick: `groups` holds (meta, frame) of each bridged robot name
    (the bridge's robot first; a robot spawned later adds one), all at the same clock.
    `wanted`: the topics to encode (the rclpy node's: those with subscribers); None: all."""
    want = _every if wanted is None else wanted.__contains__
    columns = [(meta, Columns(f)) for meta, f in groups]
    f0 = groups[0][1]
    now = nanos(float(f0["clock"][0]))
    paused = bool(f0["paused"][0])
    if want("/tf"):
        yield "/tf", "tf2_msgs/msg/TFMessage", _tf(columns, now), now
    if not paused:
        for meta, f in columns:
            yield from _robot_messages(meta, f, want)
    for meta, f in columns:
        yield from _joint_states(meta, f, now, want)
    if not paused and want("/clock"):
        yield "/clock", "rosgraph_msgs/msg/Clock", clock_message(now), now


def _every(topic: str) -> bool:
    return True


def _pose(f: Columns, e: int) -> list[float]:
    """Env e's odometry position and (x, y, z, w) orientation, as odom and tf hold them."""
    w, x, y, z = f["odom.orientation"][e]
    return [*f["odom.position"][e], x, y, z, w]


_IDENTITY = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]


def _tf_key(r: dict) -> tuple:
    """What a robot adds to /tf's template (made once per robot entry)."""
    key = r.get("_tf")
    if key is None:
        key = r["_tf"] = (r["ns"], frame_id(r, "odom"), bool(r.get("map")))
    return key


def _tf(columns: list[tuple[dict, Columns]], now: int) -> bytes:
    """The TFMessage of every robot with a valid odometry reading (of each robot name):
    odom -> base, and for a robot spawned by Arena's SpawnUrdf an identity map -> odom
    before it (as Arena's server sends)."""
    robots = [(r, f) for meta, f in columns for r in meta["robots"]
              if f["odom.valid"][r["env"]]]
    key = tuple(_tf_key(r) for r, _ in robots)
    cache = _templates(columns[0][0])["tf"]
    template = cache.get(key)
    if template is None:
        if len(cache) > 64:  # validity flickering through many sets: keep memory bounded
            cache.clear()
        frames = []
        for r, _ in robots:
            if r.get("map"):
                frames.append(("map", frame_id(r, "odom")))
            frames.append((frame_id(r, "odom"), frame_id(r, r["base"])))
        template = cache[key] = tf_template(frames)
    values = []
    for r, f in robots:
        if r.get("map"):
            values.append(_IDENTITY)
        values.append(_pose(f, r["env"]))
    return template.fill(now, *values)


def _robot_messages(meta: dict, f: Columns, want: Callable[[str], bool]) -> Iterator[Message]:
    """Each robot's wanted odometry and sensor topics sampled this tick (of one robot name,
    every env)."""
    templates = _templates(meta)
    ranges: dict[str, bytes] = {}  # per lidar role: every env's ranges, once per frame
    for i, r in enumerate(meta["robots"]):
        e, topics = r["env"], templates["topics"][i]
        if f["odom.fresh"][e] and topics["odom"] and want(topics["odom"]):
            t = nanos(f["odom.stamp"][e])
            yield topics["odom"], "nav_msgs/msg/Odometry", templates["odom"][i].fill(
                t, _pose(f, e), f["odom.linear_velocity"][e] + f["odom.angular_velocity"][e]), t
        for cache in templates["sensors"]:
            if f[cache["fresh"]][e]:
                yield from _SENSOR_MESSAGES[cache["sensor"]["kind"]](
                    cache, r, i, f, e, nanos(f[cache["stamp"]][e]), want, ranges)


def _lidar_messages(cache: dict, r: dict, i: int, f: Columns, e: int, t: int,
                    want: Callable[[str], bool], ranges: dict[str, bytes]
                    ) -> Iterator[Message]:
    lidar, topic = cache["sensor"], cache["topics"][i]
    role = lidar["role"]
    if topic["scan"] and want(topic["scan"]):
        if role not in ranges:  # a multi-ring lidar's middle ring, as Arena's backend
            scan = f.frame[f"{role}.ranges"]
            ranges[role] = np.ascontiguousarray(
                scan[:, scan.shape[1] // 2] if scan.ndim == 3 else scan, dtype="<f4").tobytes()
        size = 4 * lidar["beams"]
        yield (topic["scan"], "sensor_msgs/msg/LaserScan",
               cache["scan"][i].fill(t, ranges[role][size * e:size * (e + 1)]), t)
    if topic["points"] and want(topic["points"]):
        yield topic["points"], "sensor_msgs/msg/PointCloud2", cloud(
            t, sensor_frame(r, lidar), lidar["rings"], lidar["beams"],
            lidar_points(f.frame[f"{role}.ranges"][e], cache["directions"])), t


def _imu_messages(cache: dict, r: dict, i: int, f: Columns, e: int, t: int,
                  want: Callable[[str], bool], ranges: dict) -> Iterator[Message]:
    topic, role = cache["topics"][i]["imu"], cache["sensor"]["role"]
    if topic and want(topic):
        w, x, y, z = f[f"{role}.orientation"][e]
        yield topic, "sensor_msgs/msg/Imu", cache["imu"][i].fill(
            t, [x, y, z, w], f[f"{role}.angular_velocity"][e],
            f[f"{role}.linear_acceleration"][e]), t


def _camera_messages(cache: dict, r: dict, i: int, f: Columns, e: int, t: int,
                     want: Callable[[str], bool], ranges: dict) -> Iterator[Message]:
    """Rendered only where watched: fresh only there."""
    if any(topic and want(topic) for topic in cache["topics"][i].values()):
        yield from (m for m in camera_messages(cache["sensor"], r, f.frame, e,
                                               cache["camera_info"][i], cache["topics"][i])
                    if m[0] and want(m[0]))


def _contact_messages(cache: dict, r: dict, i: int, f: Columns, e: int, t: int,
                      want: Callable[[str], bool], ranges: dict) -> Iterator[Message]:
    topic, role = cache["topics"][i]["contact"], cache["sensor"]["role"]
    if topic and want(topic):
        frame = f.frame
        yield topic, "ros_gz_interfaces/msg/Contacts", contacts(
            t, sensor_frame(r, cache["sensor"]), int(frame[f"{role}.num"][e]),
            *(frame[f"{role}.{k}"][e] for k in ("position", "normal", "depth", "own_geom",
                                                "other_geom", "names"))), t


_SENSOR_MESSAGES = {"lidar": _lidar_messages, "imu": _imu_messages,
                    "camera": _camera_messages, "contact": _contact_messages}


def contacts(stamp: int, frame: str, num: int, position: np.ndarray, normal: np.ndarray,
             depth: np.ndarray, own: np.ndarray, other: np.ndarray, names: np.ndarray) -> bytes:
    """ros_gz_interfaces/Contacts of a contact reading's first `num` contacts that touch
    (depth >= 0): one Contact per pair of the link's geom (collision1) and the other geom
    (collision2), in the order the pairs first come, with each contact point's world
    position, normal (into the link's geom) and depth; entities by geom id and `names`
    (own, other: utf-8 bytes), type COLLISION; no wrenches. Empty while nothing touches."""
    pairs: dict[tuple[int, int], list[int]] = {}
    for j in range(num):
        if depth[j] >= 0:
            pairs.setdefault((int(own[j]), int(other[j])), []).append(j)
    c = Cdr()
    c.header(stamp, frame)
    c.u32(len(pairs))
    for (a, b), rows in pairs.items():
        for geom, name in ((a, names[rows[0], 0]), (b, names[rows[0], 1])):
            c.u64(geom)
            c.string(bytes(name).decode(errors="replace"))
            c.u8(COLLISION)
        for values in (position, normal):
            c.u32(len(rows))
            c.f64s(values[rows].reshape(-1))
        c.f64_seq(depth[rows])
        c.u32(0)  # wrenches
    return bytes(c.buf)


def _joint_states(meta: dict, f: Columns, now: int,
                  want: Callable[[str], bool]) -> Iterator[Message]:
    templates = _templates(meta)
    for i, r in enumerate(meta["robots"]):
        e, topic = r["env"], templates["topics"][i]["joint_states"]
        if r["joints"] and topic and want(topic):
            yield (topic, "sensor_msgs/msg/JointState", templates["joints"][i].fill(
                now, f["joint_pos"][e], f["joint_vel"][e], f["joint_eff"][e]), now)


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
    return Template(c, [stamp_at], [])


def camera_frame(r: dict, camera: dict) -> str:
    """The frame of a camera's images and info: its optical frame, or the frame its spawn
    request listed (as Arena's server stamps them)."""
    listed = r.get("frames", {}).get(camera["role"])
    return frame_id(r, listed if listed else camera["optical"])


def camera_messages(camera: dict, r: dict, f: dict[str, np.ndarray], e: int,
                    info: Template, topic: dict[str, str]) -> Iterator[Message]:
    """Env e's image, depth image, point cloud (in the mount frame) and camera info of one
    camera (`topic` per name of CAMERA_TOPICS, "": not published)."""
    role = camera["role"]
    t = nanos(float(f[f"{role}.stamp"][e]))
    h, w = camera["height"], camera["width"]
    optical = camera_frame(r, camera)
    kind = CAMERA_TOPICS
    yield (topic["image_raw"], kind["image_raw"],
           image(t, optical, h, w, "rgb8", f[f"{role}.rgb"][e]), t)
    yield (topic["depth/image_raw"], kind["depth/image_raw"],
           image(t, optical, h, w, "32FC1", f[f"{role}.depth"][e].astype("<f4", copy=False)),
           t)
    yield (topic["depth/points"], kind["depth/points"],
           cloud(t, sensor_frame(r, camera), h, w, f[f"{role}.points"][e]), t)
    yield topic["camera_info"], kind["camera_info"], info.fill(t), t
