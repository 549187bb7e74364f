"""What the bridge publishes, taken from the sensors layer: the frame layout, the static
description the node needs (namespaces, frames, lidar geometry, sensor mounts), and the
tick hook that copies the readings into a shared-memory slot.

One path: odometry and every published sensor (each lidar, IMU, contact reading and camera
of the robot, sensor_topics.py) are the SensorSuite's readings (the arrays a policy sees),
copied as they are (camera images only in the envs that took one this tick; a contact's
geom names beside its ids); joint states are the simulator's qpos/qvel/qfrc_actuator
columns of the robot's joints. Nothing here casts a ray or reads a sensor of its own.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np

from arena_gym.ros.camera import camera_key
from arena_gym.ros.sensor_topics import default_topics, listed, role_names
from arena_gym.ros.topic_names import problem, robot_name, shown
from arena_gym.scene.store import SceneStore
from arena_gym.sensors.readings import (
    CameraReading,
    ContactReading,
    ImuReading,
    LidarReading,
    OdometryReading,
    Reading,
)
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator

# the published kinds of reading; a camera only as the bridge's own reading (camera.py)
KINDS = ((LidarReading, "lidar"), (ImuReading, "imu"), (ContactReading, "contact"),
         (CameraReading, "camera"))
NAME_BYTES = 128  # a contact's geom names in a frame: utf-8, cut at this length
# the optical frame of a camera mount (z forward, x right, y down; REP 103) in the mount's
# frame (x forward, y left, z up): roll -90 deg, then yaw -90 deg; (w, x, y, z)
OPTICAL = [0.5, -0.5, 0.5, -0.5]


def namespace(env: int, robot: str) -> str:
    """A robot's ROS namespace: `robot` in env 0 (as the Arena backend's single world),
    `env_<e>/robot` in the others."""
    return robot if env == 0 else f"env_{env}/{robot}"


def _kind(reading: Reading, robot: str) -> str | None:
    if isinstance(reading, CameraReading) and reading.key != camera_key(robot, reading.sensor):
        return None  # the suite's own camera readings render for their own consumers
    return next((kind for cls, kind in KINDS if isinstance(reading, cls)), None)


def role_readings(suite: SensorSuite, robot: str) -> dict[str, Reading]:
    """`robot`'s odometry ("odom") and each sensor it publishes by role (sensor_topics.py):
    its lidars, IMUs and contact readings and the bridge's camera readings, one reading per
    sensor (the first the suite holds), in the suite's order."""
    odom: Reading | None = None
    found: list[tuple[str, Reading]] = []
    seen: set[tuple[str, str]] = set()
    for channel in suite.channels.values():
        reading = channel.reading
        if reading.robot != robot:
            continue
        if isinstance(reading, OdometryReading):
            odom = odom or reading
            continue
        kind = _kind(reading, robot)
        label = (kind, _label(channel.spec, reading))
        if kind is not None and label not in seen:
            seen.add(label)
            found.append((kind, reading))
    if odom is None:
        raise ValueError(f"bridge: the sensor suite has no odometry of robot {robot!r}; "
                         f"expected an OdometrySpec (it has {list(suite.readings)})")
    roles = role_names(kind for kind, _ in found)
    return {"odom": odom, **{role: reading for role, (_, reading) in zip(roles, found,
                                                                        strict=True)}}


def _label(spec: object, reading: Reading) -> str:
    """A sensor's name: its mount's, or a contact reading's link."""
    return reading.sensor or getattr(spec, "link", None) or reading.key


def layout(readings: dict[str, Reading], num_envs: int, njoints: int) -> dict:
    """{name: (shape, dtype)} of one frame."""
    # paused: a frame of a paused bridge (tf and joint states only, at the frozen clock)
    out: dict[str, tuple[list[int], str]] = {"clock": ([1], "f8"), "paused": ([1], "u1")}
    for role, reading in readings.items():
        for field, array in reading.data.items():
            out[f"{role}.{field}"] = (list(array.shape), array.dtype.str)
        for field in ("valid", "fresh", "stamp"):
            array = getattr(reading, field)
            out[f"{role}.{field}"] = (list(array.shape), array.dtype.str)
        if isinstance(reading, ContactReading):  # each contact's (own, other) geom names
            out[f"{role}.names"] = ([num_envs, reading.max_contacts, 2], f"S{NAME_BYTES}")
    for field in ("joint_pos", "joint_vel", "joint_eff"):
        out[field] = ([num_envs, njoints], "f8")
    return out


def joint_columns(store: SceneStore, env: int, robot: str) -> tuple[list[str], list[int],
                                                                       list[int]]:
    """(names without the env prefix, qpos columns, qvel columns) of the robot's joints."""
    info = store[env].robot(robot)
    model = store[env].model
    names, qpos, qvel = [], [], []
    for full in [*info.wheel_joints, *info.servo_joints]:
        joint = model.joint(full)
        names.append(full.removeprefix(info.prefix))
        qpos.append(int(joint.qposadr[0]))
        qvel.append(int(joint.dofadr[0]))
    return names, qpos, qvel


def holders(store: SceneStore, robot: str) -> list[int]:
    """The envs whose scene holds a robot named `robot` (a robot spawned later: maybe one)."""
    return [e for e in range(store.num_envs)
            if getattr(store.scene(e).entities.get(robot), "kind", None) == "robot"]


def mount_transforms(store: SceneStore, robot: str) -> list[dict]:
    """Each sensor mount's pose in the robot's base frame (the first env holding it, at
    qpos0)."""
    env = holders(store, robot)[0]
    info = store[env].robot(robot)
    model = store[env].model
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    base = model.body(info.root_body).id
    base_pos, base_mat = data.xpos[base], data.xmat[base].reshape(3, 3)
    out = []
    for mount in info.sensor_mounts:
        if mount.site:
            i = model.site(mount.site).id
            pos, mat = data.site_xpos[i], data.site_xmat[i].reshape(3, 3)
        else:
            i = model.body(mount.body).id
            pos, mat = data.xpos[i], data.xmat[i].reshape(3, 3)
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, (base_mat.T @ mat).ravel())
        out.append({"child": mount.name, "xyz": (base_mat.T @ (pos - base_pos)).tolist(),
                    "quat": quat.tolist()})
    return out


def describe(sim: Simulator, suite: SensorSuite, robot: str,
             naming: dict[tuple[int, str], dict] | None = None) -> dict:
    """The static part of the bridge (everything but the per-tick arrays). `naming`: per
    (env, robot), the topics and frames a spawn request named (arena_commands.naming),
    merged into that env's robot entry; its `sensors` list picks the sensors published and
    their topics (sensor_topics.listed)."""
    store = sim.store
    robot_name(robot, store.num_envs)  # its namespace: a ROS name
    readings = role_readings(suite, robot)
    envs = holders(store, robot)
    if not envs:
        raise ValueError(f"bridge: no env holds a robot named {robot!r}")
    names, _, _ = joint_columns(store, envs[0], robot)
    info = store[envs[0]].robot(robot)
    links = {m.name: m.decl.link for m in info.sensor_mounts}
    sensors = [_sensor(role, reading, suite, links) for role, reading in readings.items()
               if role != "odom"]
    firsts: set[str] = set()
    for sensor in sensors:  # the first of a kind under the kind's names, the rest their own
        sensor["prefix"] = "" if sensor["kind"] not in firsts else f"{sensor['label']}/"
        firsts.add(sensor["kind"])
    static = mount_transforms(store, robot)
    for camera in (s for s in sensors if s["kind"] == "camera"):
        static.append({"parent": camera["frame"], "child": camera["optical"],
                       "xyz": [0.0, 0.0, 0.0], "quat": OPTICAL})
    robots = []
    for e in envs:
        r = {"env": e, "ns": namespace(e, robot), "base": info.root_body.removeprefix(
            info.prefix), "joints": names, **(naming or {}).get((e, robot), {})}
        topics = default_topics(sensors, r["ns"]) | r.pop("topics", {})
        items = r.pop("sensors", [])
        if items:  # only the listed sensors, on their topics and in their frames
            listed_topics, r["frames"] = listed(sensors, items)
            topics |= listed_topics
        r["topics"] = {key: _publishable(robot, name) for key, name in topics.items()}
        robots.append(r)
    model = store[envs[0]].model
    link_names = [model.body(b).name.removeprefix(info.prefix) for b in range(model.nbody)
                  if model.body(b).name.startswith(info.prefix)]
    return {"robot": robot, "dt": sim.timestep, "tick_steps": sim.tick_steps,
            "robots": robots, "static": static, "sensors": sensors, "links": link_names,
            "layout": layout(readings, store.num_envs, len(names))}


def _publishable(robot: str, name: str) -> str:
    """A topic as published: "" (not published, with a warning) where a sensor's name from
    the robot's file makes it one ROS refuses."""
    why = problem(name) if name else ""
    if why:
        warnings.warn(f"bridge: robot {robot!r}: topic {shown(name)} is not published: "
                      f"expected a ROS topic name, got one where {why}", stacklevel=3)
        return ""
    return name


def _sensor(role: str, reading: Reading, suite: SensorSuite, links: dict[str, str]) -> dict:
    """What the node needs of one sensor: role, kind, names, frame, and its kind's fixed
    message fields."""
    label = _label(suite.channels[reading.key].spec, reading)
    kind = _kind(reading, reading.robot)
    out: dict = {"role": role, "kind": kind, "sensor": reading.sensor, "label": label,
                 "frame": label, "link": links.get(reading.sensor, label)}
    if isinstance(reading, LidarReading):
        out |= {"angle_min": float(reading.angle_min), "angle_max": float(reading.angle_max),
                "angle_increment": float(reading.angle_increment),
                "range_min": float(reading.range_min), "range_max": float(reading.range_max),
                "scan_time": float(reading.scan_time),
                # the points topic: the reading's own beam directions (float32, as
                # LidarReading.points() uses them), ring-major
                "rings": reading.pattern.rings, "beams": reading.pattern.beams,
                "directions": reading.pattern.directions.astype(np.float32).tolist()}
    elif isinstance(reading, CameraReading):
        out |= {"optical": f"{reading.sensor}_optical", "width": reading.width,
                "height": reading.height, "K": reading.K.ravel().tolist(),
                "P": reading.P.ravel().tolist()}
    return out


class FrameWriter:
    """Copies the readings and joint states into a frame slot after every tick."""

    def __init__(self, sim: Simulator, suite: SensorSuite, robot: str) -> None:
        self.sim, self.robot = sim, robot
        self.readings = role_readings(suite, robot)
        self._contacts = [(role, r) for role, r in self.readings.items()
                          if isinstance(r, ContactReading)]
        self._layout_version: tuple[int, ...] | None = None
        self._cols: tuple[np.ndarray, np.ndarray] | None = None
        self._envs: list[int] = []

    def _joint_cols(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Shared qpos/qvel columns of the robot's joints (None: the envs' layouts differ,
        or not every env holds the robot)."""
        if self._layout_version != self.sim.layout_version:
            store = self.sim.store
            self._envs = holders(store, self.robot)
            cols = {tuple(map(tuple, joint_columns(store, e, self.robot)[1:]))
                    for e in self._envs}
            self._cols = (tuple(np.array(c) for c in cols.pop())  # type: ignore[assignment]
                          if len(cols) == 1 and len(self._envs) == store.num_envs else None)
            self._layout_version = self.sim.layout_version
        return self._cols

    def write(self, slot: dict[str, np.ndarray], paused: bool = False) -> None:
        slot["clock"][0] = self.sim.clock
        slot["paused"][0] = paused
        for role, reading in self.readings.items():
            # images: new ones only
            rows = reading.fresh if isinstance(reading, CameraReading) else slice(None)
            for field, array in reading.data.items():
                slot[f"{role}.{field}"][rows] = array[rows]
            slot[f"{role}.valid"][...] = reading.valid
            slot[f"{role}.fresh"][...] = reading.fresh
            slot[f"{role}.stamp"][...] = reading.stamp
        for role, reading in self._contacts:  # the names of the geoms in contact
            names = slot[f"{role}.names"]
            for e in np.flatnonzero(reading.num).tolist():
                table = reading.geom_names[e]
                for j in range(int(reading.num[e])):
                    names[e, j] = [table.get(int(g), "").encode()[:NAME_BYTES]
                                   for g in (reading.own_geom[e, j], reading.other_geom[e, j])]
        if slot["joint_pos"].shape[1]:
            cols = self._joint_cols()
            if cols is not None:
                slot["joint_pos"][...] = self.sim.gather("qpos", cols[0])
                slot["joint_vel"][...] = self.sim.gather("qvel", cols[1])
                slot["joint_eff"][...] = self.sim.gather("qfrc_actuator", cols[1])
            else:  # layouts differ (a robot was spawned into one env): env by env
                store = self.sim.store
                for e in self._envs:
                    _, qpos, qvel = joint_columns(store, e, self.robot)
                    data = store[e].data
                    slot["joint_pos"][e] = data.qpos[qpos]
                    slot["joint_vel"][e] = data.qvel[qvel]
                    slot["joint_eff"][e] = data.qfrc_actuator[qvel]
