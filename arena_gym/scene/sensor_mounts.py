"""Sensor elements a robot brings: sites, cameras and IMU sensors added to its own MjSpec.

`mount_sensors` runs on the robot's spec before it is attached, so the attach prefix makes
every element the robot's own (`env_0/burger/base_footprint_sensor_lds_lfcd_sensor_site`).
Where each sensor comes from, in order:

1. the URDF's `<gazebo reference=...><sensor>` declarations (`RobotInfo.sensors`), mounted at
   the declared pose on the declared link (the child link when the reference names a joint);
2. if the URDF declares no lidar, the laser block of the robot's `model_params.yaml`
   (Arena-Rosnav's robot parameters), mounted at its `robot_sensor_frame` link;
3. else a 360-beam ring (`DEFAULT_RING`) at the centre of the robot's collision box.

Elements are named `<root body>_sensor_<name>_<part>`; a sensor name that repeats within a
robot gets `_1`, `_2`, ... Lidars get a site (the casting is done by `arena_gym.sensors`);
cameras a MuJoCo camera that looks along +x of the mount with z up (Gazebo's convention;
MuJoCo cameras look along -z with y up); IMUs a site with framequat, gyro and accelerometer
sensors (with `imu=False` the site alone, its sensors named in the mount and added by
`add_imu_sensors` when a reading asks for them: MuJoCo computes an accelerometer at every
physics step, with a pass over every body); contact sensors a MuJoCo touch sensor over the
link's collision geoms (the contact kind reads contacts from MjData; the "mujoco" kind reads
the touch); force_torque, magnetometer and gps a site at their pose with MuJoCo's force and
torque, magnetometer, or framepos and framelinvel sensors (mujoco_mounts.py); other types a
site at their pose.
Mounts are plain data: which sensor kind reads one is the sensors layer's to say
(arena_gym.sensors.kinds).

It also files the robot's collision geoms into `groups.GROUP_ROBOT`, which cameras do not
draw (they draw the visuals) and lidars see, except their own carrier's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from arena_gym.assets.gazebo import SensorDecl
from arena_gym.assets.model_params import MODEL_PARAMS_FILE, ModelParamsError, read_model_params
from arena_gym.assets.sources import is_xml_text
from arena_gym.assets.urdf import fold_name
from arena_gym.errors import SpawnError
from arena_gym.geometry import groups
from arena_gym.geometry.rotations import mul_quat, rpy_quat
from arena_gym.scene import mujoco_mounts

SITE_GROUP = 5  # sensor sites: not drawn by viewers or cameras by default
SITE_SIZE = 0.005

# the fallback lidar when neither the URDF nor model_params.yaml declares one: evenly spaced
# beams over the full circle (both ends included, so the last beam stops one step short)
DEFAULT_RING = SensorDecl(
    name="laser",
    kind="ray",
    link="",
    update_rate=10.0,
    samples=360,
    min_angle=0.0,
    max_angle=2 * math.pi * 359 / 360,
    min_range=0.12,
    max_range=3.5,
)

# the camera frame in the mount frame (x forward, y left, z up): MuJoCo cameras look along
# their -z with y up, so camera x = -y, y = z, z = -x; this is that rotation's quaternion
_CAMERA_QUAT = (0.5, 0.5, -0.5, -0.5)


@dataclass(frozen=True)
class SensorMount:
    """A mounted sensor: where it sits and the MuJoCo elements that carry it.

    `kind` is "lidar" (a ray sensor: a site), "camera" (a site and a MuJoCo camera),
    "imu" (a site and MuJoCo's framequat, gyro and accelerometer), "contact" (no frame of
    its own: contacts are read from MjData; `sensors` a MuJoCo touch), or the
    declaration's own type (a site: force_torque, magnetometer and gps with the MuJoCo
    sensors in `sensors`, others for a sensor kind that reads them). `source` says where
    the declaration came from: "urdf", "model_params" or "default". Names are full MuJoCo
    names once the robot is spawned.
    """

    name: str
    kind: str
    decl: SensorDecl
    source: str
    body: str
    site: str = ""
    camera: str = ""
    sensors: tuple[str, ...] = ()  # MuJoCo's (imu: framequat, gyro, accelerometer)

    def prefixed(self, prefix: str) -> SensorMount:
        def full(name: str) -> str:
            return prefix + name if name else name

        return replace(
            self,
            body=full(self.body),
            site=full(self.site),
            camera=full(self.camera),
            sensors=tuple(full(s) for s in self.sensors),
        )


def find_model_params(urdf: object, explicit: str | Path | None) -> Path | None:
    """The model_params.yaml to use: `explicit`, else the one next to a URDF file, else None."""
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise SpawnError(f"model_params: expected a readable YAML file, got {str(path)!r}")
        return path
    if isinstance(urdf, (str, Path)) and not is_xml_text(urdf):
        candidate = Path(urdf).parent / MODEL_PARAMS_FILE
        if candidate.is_file():
            return candidate
    return None


def mount_sensors(
    spec: mujoco.MjSpec,
    declared: list[SensorDecl],
    model_params: Path | None,
    source: str,
    fallback: bool = True,
    imu: bool = True,
) -> list[SensorMount]:
    """Add the sensor elements to the robot's spec; return what was mounted (unprefixed).
    `fallback` False: no lidar unless declared (a URDF loaded as a model). `imu` False: an
    IMU's site only, its MuJoCo sensors named but not added (`add_imu_sensors`)."""
    root = spec.worldbody.first_body()
    _file_collision_geoms(spec)
    decls = [(d, "urdf") for d in declared]
    if fallback and not any(d.is_ray for d in declared):
        decls.append(_fallback_lidar(spec, model_params, source))
    mounts: list[SensorMount] = []
    taken: set[str] = set()
    for decl, origin in decls:
        kind = _kind(decl)
        body = spec.body(decl.link)
        if body is None:
            raise SpawnError(
                f"{source}: sensor {decl.name!r}: expected link {decl.link!r} in the robot, "
                "found none"
            )
        name = _unique(fold_name(decl.name) or kind, taken)
        stem = f"{root.name}_sensor_{name}"
        mounts.append(_mount(spec, body, stem, name, kind, decl, origin, imu))
    return mounts


IMU_SENSORS = (("quat", mujoco.mjtSensor.mjSENS_FRAMEQUAT),
               ("gyro", mujoco.mjtSensor.mjSENS_GYRO),
               ("accel", mujoco.mjtSensor.mjSENS_ACCELEROMETER))


def add_imu_sensors(spec: mujoco.MjSpec, mount: SensorMount) -> bool:
    """An IMU mount's framequat, gyro and accelerometer at its site, into `spec` (the
    robot's own, or a scene's with the mount's full names); False where they are there."""
    if spec.sensor(mount.sensors[0]) is not None:
        return False
    for (_, sensor_type), name in zip(IMU_SENSORS, mount.sensors, strict=True):
        spec.add_sensor(name=name, type=sensor_type, objtype=mujoco.mjtObj.mjOBJ_SITE,
                        objname=mount.site)
    return True


def _kind(decl: SensorDecl) -> str:
    """What a declaration mounts as, by its Gazebo type alone: "lidar" (ray), "camera"
    (camera, depth), else its own type ("imu", "contact", "gps", ...). Which sensor kind
    reads a mount is the sensors layer's to say (arena_gym.sensors.kinds.mounted_kind)."""
    if decl.is_ray:
        return "lidar"
    if decl.is_camera:
        return "camera"
    return decl.kind


def _unique(name: str, taken: set[str]) -> str:
    candidate, k = name, 0
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    taken.add(candidate)
    return candidate


def mount_imu_sensors(scene: Any, mounts: list[SensorMount]) -> bool:
    """The MuJoCo sensors of the IMUs among a spawned robot's `mounts` (full names) where
    it was spawned without them (`Scene.spawn_urdf(imu=False)`), into `scene`'s spec,
    compiled at its next query or step; False where every one is there already."""
    added = [add_imu_sensors(scene.spec, m) for m in mounts if m.kind == "imu"]
    if any(added):
        scene.edited()
    return any(added)


def _mount(spec: mujoco.MjSpec, body: mujoco.MjsBody, stem: str, name: str, kind: str,
           decl: SensorDecl, origin: str, imu: bool = True) -> SensorMount:
    pos, quat = list(decl.pose[:3]), rpy_quat(*decl.pose[3:])
    mount = SensorMount(name=name, kind=kind, decl=decl, source=origin, body=body.name)
    if kind == "contact":  # a touch sensor over the link's collision geoms (no frame)
        return replace(mount, sensors=mujoco_mounts.touch(spec, body, stem))
    site = body.add_site(name=f"{stem}_site", pos=pos, quat=quat, size=[SITE_SIZE] * 3,
                         group=SITE_GROUP)
    mount = replace(mount, site=site.name)
    if kind in mujoco_mounts.SITE_SENSORS:  # force_torque, magnetometer, gps
        return replace(mount, sensors=mujoco_mounts.at_site(spec, site, stem, kind))
    if kind == "camera":
        width, height = decl.width or 640, decl.height or 480
        hfov = decl.horizontal_fov or math.radians(60)
        fovy = math.degrees(2 * math.atan(math.tan(hfov / 2) * height / width))
        camera = body.add_camera(name=f"{stem}_camera", pos=pos,
                                 quat=mul_quat(quat, _CAMERA_QUAT), fovy=fovy)
        camera.resolution = [width, height]
        return replace(mount, camera=camera.name)
    if kind == "imu":
        mount = replace(mount, sensors=tuple(f"{stem}_{part}" for part, _ in IMU_SENSORS))
        if imu:
            add_imu_sensors(spec, mount)
    return mount


def _file_collision_geoms(spec: mujoco.MjSpec) -> None:
    """Colliding geoms in the default group move to GROUP_ROBOT; others keep their group."""
    for body in spec.bodies[1:]:
        for geom in body.geoms:
            if (geom.contype or geom.conaffinity) and geom.group == groups.GROUP_STATIC:
                geom.group = groups.GROUP_ROBOT


# ------------------------------------------------------------------ fallback lidar
def _fallback_lidar(spec: mujoco.MjSpec, model_params: Path | None,
                    source: str) -> tuple[SensorDecl, str]:
    root = spec.worldbody.first_body()
    if model_params is not None:
        laser, frame = read_laser_params(model_params)
        if laser is not None:
            link = frame if frame and spec.body(frame) is not None else root.name
            return replace(laser, link=link), "model_params"
    z = _collision_box_centre_z(spec, source)
    return replace(DEFAULT_RING, link=root.name, pose=(0.0, 0.0, z, 0.0, 0.0, 0.0)), "default"


def read_laser_params(path: Path) -> tuple[SensorDecl | None, str]:
    """The laser block of an Arena `model_params.yaml` as a ray declaration, and the
    `robot_sensor_frame`. Arena lists `num_beams` beams from `angle.min` in steps of
    `angle.increment`; as a declaration both ends are included, so max is the last beam."""
    try:
        data = read_model_params(path)
    except ModelParamsError as exc:
        raise SpawnError(str(exc)) from None
    frame = str(data.get("robot_sensor_frame", "") or "")
    laser = data.get("laser")
    if not isinstance(laser, dict):
        return None, frame
    try:
        beams = int(laser["num_beams"])
        max_range = float(laser["range"])
        angle = laser.get("angle", {}) or {}
        low = float(angle.get("min", 0.0))
        high = float(angle.get("max", 2 * math.pi))
        step = float(angle.get("increment", (high - low) / max(beams, 1)))
        rate = float(laser.get("update_rate", 10.0))
    except (KeyError, TypeError, ValueError) as exc:
        raise SpawnError(
            f"model_params {str(path)!r}: laser: expected num_beams, range and angle "
            f"min/max/increment, got {laser!r} ({exc})"
        ) from None
    if beams < 1 or max_range <= 0:
        raise SpawnError(
            f"model_params {str(path)!r}: laser: expected num_beams >= 1 and range > 0, "
            f"got {beams} and {max_range}"
        )
    decl = SensorDecl(
        name="laser", kind="ray", link=frame, update_rate=rate, samples=beams,
        min_angle=low, max_angle=low + (beams - 1) * step, min_range=0.0, max_range=max_range,
    )
    return decl, frame


def _collision_box_centre_z(spec: mujoco.MjSpec, source: str) -> float:
    """Height of the centre of the robot's collision bounding box above its root link."""
    try:
        model = spec.compile()
    except ValueError as exc:
        raise SpawnError(f"{source}: MuJoCo rejected the robot: {str(exc).strip()}") from None
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    root = model.body(spec.worldbody.first_body().name).id
    low, high = np.inf, -np.inf
    for g in range(model.ngeom):
        if not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        rot = data.geom_xmat[g].reshape(3, 3)
        centre, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        z = data.geom_xpos[g, 2] + rot[2] @ centre
        reach = np.abs(rot[2]) @ half
        low, high = min(low, z - reach), max(high, z + reach)
    if not np.isfinite(low):
        return 0.0
    return float((low + high) / 2 - data.xpos[root, 2])

