"""Building a robot's MjSpec from a rewritten URDF: free base, servos, friction, self-collision.

The conventions follow the Arena MuJoCo backend: every continuous joint is a wheel with a
velocity servo; every other movable joint gets a position servo (kp=1000) and a velocity
servo (kv=100).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path

import mujoco
import numpy as np

from arena_gym.assets.gazebo import LinkSurface, PluginDecl, SensorDecl
from arena_gym.assets.urdf import RewrittenUrdf
from arena_gym.errors import SpawnError
from arena_gym.scene import holonomic, planar_base
from arena_gym.scene.base_controller import separation_multiplier
from arena_gym.scene.sensor_mounts import SensorMount, mount_sensors
from arena_gym.scene.wheels import lowest_collision_z, wheel_geometry

JOINT_KP = 1000.0
JOINT_KV = 100.0
WHEEL_TIME_CONSTANT = 0.08  # s: 1 / natural frequency of a wheel servo carrying the robot
WHEEL_MAX_ACCEL = 20.0  # m/s^2 the wheel torques can give the robot (they saturate beyond)
# s: the planar base's first-order servos, set so that a step in the twist carries it as far
# as the wheels' critically damped servos carry the wheeled base (arena_diffbot: within
# 1.0 mm and 0.019 rad over 2 s of twists at the planar base's 0.025 s step)
PLANAR_TIME_CONSTANT = 0.14
VEL_SUFFIX = "_vel"
POS_SUFFIX = "_pos"


@dataclass
class RobotInfo:
    """What the scene keeps about a spawned robot. Names are full (prefixed) MuJoCo names."""

    name: str
    prefix: str
    root_body: str
    wheel_joints: list[str]
    servo_joints: list[str]
    sensors: list[SensorDecl] = field(default_factory=list)
    surfaces: dict[str, LinkSurface] = field(default_factory=dict)
    plugins: list[PluginDecl] = field(default_factory=list)
    urdf_name: str = ""
    ground_clearance: float = 0.0  # height of the root link above the ground when resting
    # holonomic drives (see holonomic.py): mecanum grip per wheel joint (link frame), the
    # passive roller joints (never in joint states or actions), planar-drive actuators
    grips: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    roller_joints: list[str] = field(default_factory=list)
    planar_actuators: list[str] = field(default_factory=list)
    sensor_mounts: list[SensorMount] = field(default_factory=list)  # see sensor_mounts.py
    # bodies that may touch the floor without colliding: wheels (with their rollers) and
    # bodies resting on the ground in the reference pose (casters); see foot_bodies
    feet: list[str] = field(default_factory=list)
    # the base controller's declared wheel_separation_multiplier (base_controller.py)
    separation_multiplier: float = 1.0
    # "wheeled" (the URDF as written, on a free joint) or "planar" (one rigid body on
    # planar joints, scene/planar_base.py); `root_joint` is the first of the base's joints
    base: str = "wheeled"
    root_joint: str = "root"
    holonomic: bool = False  # a planar base's drive moves sideways (scene/planar_base.py)

    @property
    def root_width(self) -> int:
        """qpos values of the base's joints: 7 (free joint) or 3 (planar: x, y, yaw)."""
        return 3 if self.base == "planar" else 7

    @property
    def drive(self) -> str:
        """"planar" (force-based), "mecanum", or "wheels" (differential or skid steer)."""
        if self.planar_actuators:
            return "planar"
        return "mecanum" if self.grips else "wheels"

    def prefixed(self, prefix: str) -> RobotInfo:
        """A copy whose element names carry the scene prefix (`env_0/jackal/`)."""
        return replace(
            self,
            prefix=prefix,
            root_body=prefix + self.root_body,
            wheel_joints=[prefix + j for j in self.wheel_joints],
            servo_joints=[prefix + j for j in self.servo_joints],
            grips={prefix + j: g for j, g in self.grips.items()},
            roller_joints=[prefix + j for j in self.roller_joints],
            planar_actuators=[prefix + a for a in self.planar_actuators],
            sensor_mounts=[m.prefixed(prefix) for m in self.sensor_mounts],
            feet=[prefix + b for b in self.feet],
            root_joint=prefix + self.root_joint,
        )

    def actuator(self, joint: str, kind: str = VEL_SUFFIX) -> str:
        return f"{joint}{kind}"


def _compile_alone(spec: mujoco.MjSpec, source: str) -> mujoco.MjModel:
    try:
        return spec.compile()
    except ValueError as exc:
        raise SpawnError(f"{source}: MuJoCo rejected the robot: {str(exc).strip()}") from None


def _wheel_inertia(spec: mujoco.MjSpec, wheels: list[str], source: str) -> tuple[float, float]:
    """(inertia each wheel servo moves, wheel radius): the robot's mass shared by its wheels,
    seen at the wheel radius."""
    model = _compile_alone(spec, source)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    base = model.body(spec.worldbody.first_body().name).id
    radii = [wheel_geometry(model, data, w, base).radius for w in wheels]
    radius = max(min(radii), 1e-3)
    total_mass = float(model.body_subtreemass[base])
    return max(total_mass * radius**2 / len(wheels), 1e-8), radius


def _add_wheel_servos(spec: mujoco.MjSpec, wheels: list[str], source: str) -> None:
    """Integrated-velocity servos: ctrl is a wheel speed (rad/s); the actuator integrates it
    into a position target and tracks it with a critically damped spring. Unlike a plain
    velocity servo it has no steady-state speed error under load (scrubbing tyres, casters),
    with gains soft enough that 0.002 s and 0.005 s steps drive alike; torque saturates at
    what accelerates the robot at WHEEL_MAX_ACCEL."""
    inertia, radius = _wheel_inertia(spec, wheels, source)
    omega = 1.0 / WHEEL_TIME_CONSTANT
    kp, kv = inertia * omega**2, 2.0 * inertia * omega
    torque = inertia / radius * WHEEL_MAX_ACCEL
    for joint in wheels:
        act = spec.add_actuator(name=joint + VEL_SUFFIX, target=joint,
                                trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_intvelocity(kp=kp, kv=kv)
        act.forcelimited = True
        act.forcerange = [-torque, torque]


def _apply_surfaces(spec: mujoco.MjSpec, surfaces: dict[str, LinkSurface]) -> None:
    """Gazebo's per-link mu1 becomes the sliding friction of the link's collision geoms.

    priority=1 makes it win over the floor's (MuJoCo otherwise takes the larger one).
    A frictionless surface (mu1 = 0) gets condim 1: a friction cone of zero width makes
    MuJoCo's condim-3 contacts unstable (the Ridgeback's wheels flew off without this).
    """
    for link, surface in surfaces.items():
        body = spec.body(link)
        if body is None or surface.mu1 is None:
            continue
        for geom in body.geoms:
            if geom.contype or geom.conaffinity:
                geom.friction[0] = surface.mu1
                geom.priority = 1
                if surface.mu1 == 0.0:
                    geom.condim = 1


def _add_holonomic(
    spec: mujoco.MjSpec,
    model: mujoco.MjModel,
    data: mujoco.MjData,
    urdf: RewrittenUrdf,
    wheels: list[str],
    rollers: bool,
    source: str,
) -> tuple[dict, list[str], list[str]]:
    """Mecanum rollers or a planar drive, whichever the URDF declares (holonomic.py)."""
    link_of = {j: spec.joint(j).parent.name for j in wheels}
    grips, roller_joints, planar = {}, [], []
    for joint in wheels:
        declared = holonomic.mecanum_grip(urdf.surfaces.get(link_of[joint]))
        if declared is None:
            continue
        try:
            grip = holonomic.grip_in_link(spec, model, data, joint, declared)
        except ValueError as exc:
            raise SpawnError(
                f"{source}: wheel {link_of[joint]!r} (joint {joint!r}): {exc}"
            ) from None
        grips[joint] = tuple(float(v) for v in grip)
        if rollers:
            roller_joints += holonomic.add_rollers(spec, model, data, joint, grip, declared.mu)
    gains = holonomic.planar_plugin(urdf.plugins)
    frictionless = all(holonomic.is_frictionless(urdf.surfaces.get(link_of[j])) for j in wheels)
    if gains is not None and frictionless and not grips:
        planar = holonomic.add_planar_drive(spec, model, data, gains)
    return grips, roller_joints, planar


COLLISION_PREFIX = "collision/"
COLLISION_ALL = COLLISION_PREFIX + "contacts"
COLLISION_HISTORY = 128  # physics steps of contact counts kept in mjData.history
FOOT_TOLERANCE = 0.005  # m above the robot's lowest point at rest: a body resting there is a foot


def collision_sensor_names(info: RobotInfo) -> tuple[str, list[str]]:
    """Full names of a robot's contact counters: (all its contacts, each foot's contacts
    with the ground plane)."""
    feet = [f"{info.prefix}{COLLISION_PREFIX}foot_{i}_ground" for i in range(len(info.feet))]
    return info.prefix + COLLISION_ALL, feet


def add_collision_sensors(world: mujoco.MjSpec, info: RobotInfo) -> None:
    """MuJoCo contact sensors counting the robot's contacts (data="found", no reduction):
    with anything, and per foot with the ground plane; each keeps its value of every
    physics step in mjData.history (nsample COLLISION_HISTORY), so that a contact anywhere
    in a control step is seen (arena_gym.sensors.contact reads them). They name only the
    robot's own bodies and the ground, never other entities, which may come and go."""
    found, no_reduction, one = 1, 0, 1  # data="found" reduce="none" num="1"
    everything, grounds = collision_sensor_names(info)
    rows = [(everything, mujoco.mjtObj.mjOBJ_XBODY, info.root_body, None)]  # xbody: subtree
    rows += [(name, mujoco.mjtObj.mjOBJ_BODY, body, "ground")
             for name, body in zip(grounds, info.feet, strict=True)]
    for name, kind, body, ref in rows:
        sensor = world.add_sensor(name=name, type=mujoco.mjtSensor.mjSENS_CONTACT,
                                  objtype=kind, objname=body)
        sensor.intprm[:3] = [found, no_reduction, one]
        sensor.nsample = COLLISION_HISTORY
        if ref is not None:
            sensor.reftype, sensor.refname = mujoco.mjtObj.mjOBJ_GEOM, ref


def foot_bodies(model: mujoco.MjModel, data: mujoco.MjData, wheels: list[str]) -> list[str]:
    """Bodies of the wheel joints and everything they carry (mecanum rollers), and bodies
    whose collision geoms rest within FOOT_TOLERANCE of the robot's lowest point in the
    reference pose (casters)."""
    wheel_bodies = {int(model.jnt_bodyid[model.joint(j).id]) for j in wheels}
    feet = set()
    for b in range(1, model.nbody):
        walk = b
        while walk > 0 and walk not in wheel_bodies:
            walk = int(model.body_parentid[walk])
        if walk > 0:
            feet.add(b)
    colliding = np.flatnonzero((model.geom_contype != 0) | (model.geom_conaffinity != 0))
    low = np.full(model.ngeom, np.inf)
    for g in colliding:
        rot = data.geom_xmat[g].reshape(3, 3)
        centre, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        low[g] = data.geom_xpos[g, 2] + rot[2] @ centre - np.abs(rot[2]) @ half
    if colliding.size:
        lowest = low[colliding].min()
        feet |= {int(model.geom_bodyid[g]) for g in colliding if low[g] <= lowest + FOOT_TOLERANCE}
    feet.discard(0)
    return [model.body(b).name for b in sorted(feet)]


def _exclude_self_collision(spec: mujoco.MjSpec) -> None:
    colliding = [
        b.name for b in spec.bodies[1:] if any(g.contype or g.conaffinity for g in b.geoms)
    ]
    for a, b in itertools.combinations(colliding, 2):
        spec.add_exclude(bodyname1=a, bodyname2=b)


def build_robot_spec(
    name: str, urdf: RewrittenUrdf, source: str, rollers: bool = True,
    model_params: Path | None = None, package_paths: tuple[Path, ...] = (),
    base: str = "wheeled", timestep: float = 0.002, imu: bool = True,
) -> tuple[mujoco.MjSpec, RobotInfo]:
    """The robot's own MjSpec (unprefixed names) and what the scene keeps about it.

    rollers=False keeps declared mecanum wheels as plain cylinders (for comparison).
    `package_paths` resolve the controller parameter file its plugins name. `base`:
    "wheeled" simulates the URDF as written, "planar" as one rigid body on planar joints
    (scene/planar_base.py; its servos' gains suit `timestep`). `imu` False: an IMU's MuJoCo
    sensors wait until a reading asks for them (sensor_mounts.add_imu_sensors).
    """
    if base not in planar_base.BASES:
        raise SpawnError(f"{source}: base: expected one of {planar_base.BASES}, got {base!r}")
    try:
        spec = mujoco.MjSpec.from_string(urdf.xml)
    except ValueError as exc:
        raise SpawnError(f"{source}: MuJoCo rejected the URDF: {str(exc).strip()}") from None
    root = spec.worldbody.first_body()
    if root is None:
        raise SpawnError(f"{source}: the URDF has no links")
    model = _compile_alone(spec, source)  # fail early, with the robot's own names
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    # URDF roots sit at the ground by convention, but not all do (the Ridgeback's wheels
    # reach below its base_link): spawn so that the lowest collision point touches z = 0
    clearance = max(0.0, -lowest_collision_z(model, data))
    wheels = [j for j, kind in urdf.joint_types.items() if kind == "continuous"]
    servos = [j for j, kind in urdf.joint_types.items() if kind in ("revolute", "prismatic")]
    if base == "planar":
        return _planar(spec, name, urdf, source, model, data, wheels, clearance,
                       model_params, timestep, imu)
    root.add_freejoint(name="root")
    _apply_surfaces(spec, urdf.surfaces)
    _exclude_self_collision(spec)
    grips, roller_joints, planar = _add_holonomic(spec, model, data, urdf, wheels, rollers,
                                                  source)
    if wheels:
        _add_wheel_servos(spec, wheels, source)
    for joint in servos:
        pos = spec.add_actuator(name=joint + POS_SUFFIX, target=joint,
                                trntype=mujoco.mjtTrn.mjTRN_JOINT)
        pos.set_to_position(kp=JOINT_KP)
        vel = spec.add_actuator(name=joint + VEL_SUFFIX, target=joint,
                                trntype=mujoco.mjtTrn.mjTRN_JOINT)
        vel.set_to_velocity(kv=JOINT_KV)
    mounts = mount_sensors(spec, list(urdf.sensors), model_params, source, imu=imu)
    info = RobotInfo(
        name=name,
        prefix="",
        root_body=root.name,
        wheel_joints=wheels,
        servo_joints=servos,
        sensors=list(urdf.sensors),
        surfaces=dict(urdf.surfaces),
        plugins=list(urdf.plugins),
        urdf_name=urdf.robot_name,
        ground_clearance=clearance,
        grips=grips,
        roller_joints=roller_joints,
        planar_actuators=planar,
        sensor_mounts=mounts,
        feet=foot_bodies(model, data, wheels),
        separation_multiplier=separation_multiplier(urdf.plugins, package_paths, Path.cwd(),
                                                    source),
    )
    return spec, info


def _planar(spec: mujoco.MjSpec, name: str, urdf: RewrittenUrdf, source: str,
            model: mujoco.MjModel, data: mujoco.MjData, wheels: list[str], clearance: float,
            model_params: Path | None, timestep: float, imu: bool = True
            ) -> tuple[mujoco.MjSpec, RobotInfo]:
    """The planar base of the robot (scene/planar_base.py): no wheels, feet or joint
    servos; the base's three actuators and joints."""
    feet = foot_bodies(model, data, wheels)  # (its links are welded: no self-collision)
    try:
        actuators, holo = planar_base.build(spec, urdf, wheels, feet, model_params,
                                            PLANAR_TIME_CONSTANT, WHEEL_MAX_ACCEL, timestep)
    except ValueError as exc:
        raise SpawnError(f"{source}: MuJoCo rejected the planar base: {str(exc).strip()}"
                         ) from None
    mounts = mount_sensors(spec, list(urdf.sensors), model_params, source, imu=imu)
    info = RobotInfo(
        name=name, prefix="", root_body=spec.worldbody.first_body().name, wheel_joints=[],
        servo_joints=[], sensors=list(urdf.sensors), surfaces=dict(urdf.surfaces),
        plugins=list(urdf.plugins), urdf_name=urdf.robot_name, ground_clearance=clearance,
        planar_actuators=actuators, sensor_mounts=mounts, feet=[], base="planar",
        root_joint=planar_base.JOINTS[0], holonomic=holo,
    )
    return spec, info
