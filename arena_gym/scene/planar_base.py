"""The planar base (`base: planar`): a URDF robot as one rigid body on slide-x, slide-y and
hinge-yaw joints, its twist followed by velocity servos in its own frame.

The wheeled base simulates the URDF as written: wheels and casters on the floor, their
contacts, friction and servos (the fidelity check, and the ROS bridge's default). Most of
its physics is those contacts, which a navigation policy never reads. The planar base keeps
what the policy meets: the chassis' collision geometry (every link but the wheels' and the
casters', which stay as visuals), every sensor mount at its place, the robot's mass, and the
drive's kinematics and limits:

- Three velocity actuators on a site at the root link's origin (the drive's reference
  point) push along the base's own x and y and turn it about z; MuJoCo integrates their
  damping implicitly (`implicitfast`), so any gain is stable. Forward (and, for a holonomic
  drive, sideways) and yaw follow their command as a first-order lag of the wheel servos'
  time constant, exactly at every physics step whatever its length (`servo_rate`), their
  force capped at what accelerates the robot at the wheels' limit (`WHEEL_MAX_ACCEL`).
- A differential or skid-steer drive has no lateral velocity: its sideways actuator holds
  zero with a gain that leaves 1 / LATERAL_GRIP of any sideways speed after one physics
  step (the tyres' grip, which a wall's push cannot overcome either).
- Commands are clamped to the velocity limits of model_params.yaml (ctrlrange).

The joints' axes and reference positions are set where the robot spawns (`place`) so that
qpos is the base's world pose (x, y, yaw) at any spawn pose: qpos0 is the spawn pose, and
every reader (tasks, lidar, odometry) reads the pose straight from those three values.
"""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np

from arena_gym.assets.robot_params import load_robot_params
from arena_gym.assets.urdf import RewrittenUrdf
from arena_gym.geometry.groups import GROUP_HIDDEN
from arena_gym.scene import holonomic

BASES = ("wheeled", "planar")
JOINTS = ("root_x", "root_y", "root_yaw")  # slide x, slide y, hinge z: qpos (x, y, yaw)
ACTUATORS = ("base_vx", "base_vy", "base_wz")
SITE = "planar_base"
LATERAL_GRIP = 1e3  # sideways speed left after one physics step: 1 / LATERAL_GRIP of it


def is_holonomic(urdf: RewrittenUrdf, wheels: list[str], link_of: dict[str, str]) -> bool:
    """Whether the URDF's drive moves sideways as written: declared mecanum grips, or a
    force-based planar-move plugin on frictionless wheels (the wheeled base's two holonomic
    drives, scene/holonomic.py)."""
    surfaces = [urdf.surfaces.get(link_of[j]) for j in wheels]
    if any(holonomic.mecanum_grip(s) is not None for s in surfaces):
        return True
    return (holonomic.planar_plugin(urdf.plugins) is not None and bool(wheels)
            and all(holonomic.is_frictionless(s) for s in surfaces))


def _rigid(spec: mujoco.MjSpec, wheels: list[str]) -> None:
    """Delete every joint of the URDF (the robot becomes one rigid body) and switch off the
    collisions of the wheels' links (they stay as visuals)."""
    wheel_links = [spec.joint(j).parent.name for j in wheels]
    for joint in list(spec.joints):
        spec.delete(joint)
    for link in wheel_links:
        _visual_only(spec.body(link))


def _visual_only(body: mujoco.MjsBody) -> None:
    for geom in body.geoms:
        if geom.contype or geom.conaffinity:
            geom.contype = geom.conaffinity = 0
            geom.group = GROUP_HIDDEN


def _inertia(model: mujoco.MjModel, data: mujoco.MjData, root: int) -> tuple[float, float]:
    """(mass, yaw inertia about the root link's origin) of the whole robot."""
    mass = float(model.body_subtreemass[root])
    origin = data.xpos[root]
    izz = 0.0
    for b in range(1, model.nbody):
        if model.body_rootid[b] != root:
            continue
        r = data.xipos[b] - origin
        rot = data.ximat[b].reshape(3, 3)
        izz += (rot @ np.diag(model.body_inertia[b]) @ rot.T)[2, 2]
        izz += model.body_mass[b] * (r[0] ** 2 + r[1] ** 2)
    return mass, max(izz, 1e-9)


def build(spec: mujoco.MjSpec, urdf: RewrittenUrdf, wheels: list[str], feet: list[str],
          model_params: Path | None, time_constant: float, max_accel: float,
          timestep: float) -> tuple[list[str], bool]:
    """Make `spec` (the robot's own, its root at the origin) a planar base; returns the
    actuators (vx, vy, wz) and whether the drive is holonomic. `feet` are the bodies resting
    on the ground (casters): visual only too. The servos' gains are set for `timestep`."""
    link_of = {j: spec.joint(j).parent.name for j in wheels}
    holo = is_holonomic(urdf, wheels, link_of)
    _rigid(spec, wheels)
    root = spec.worldbody.first_body()
    for name in feet:
        body = spec.body(name)
        if body is not None and body.name != root.name:
            _visual_only(body)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    mass, izz = _inertia(model, data, model.body(root.name).id)
    for name, kind, axis in zip(JOINTS, ("slide", "slide", "hinge"),
                                ((1, 0, 0), (0, 1, 0), (0, 0, 1)), strict=True):
        joint = root.add_joint(name=name, axis=list(axis),
                               type=getattr(mujoco.mjtJoint, f"mjJNT_{kind.upper()}"))
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
    site = root.add_site(name=SITE, group=GROUP_HIDDEN)
    lateral = mass / timestep * LATERAL_GRIP
    rate = servo_rate(time_constant, timestep)
    gains = {"base_vx": mass * rate, "base_wz": izz * rate,
             "base_vy": mass * rate if holo else lateral}
    reach = _reach(model, data, model.body(root.name).id)
    forces = {"base_vx": mass * max_accel, "base_wz": izz * max_accel / reach,
              "base_vy": mass * max_accel if holo else None}
    limits = _limits(model_params)
    gears = {"base_vx": [1, 0, 0, 0, 0, 0], "base_vy": [0, 1, 0, 0, 0, 0],
             "base_wz": [0, 0, 0, 0, 0, 1]}
    for name in ACTUATORS:
        act = spec.add_actuator(name=name, target=site.name, trntype=mujoco.mjtTrn.mjTRN_SITE)
        act.gear = gears[name]
        act.set_to_velocity(kv=gains[name])
        if forces[name] is not None:
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [-forces[name], forces[name]]
        if limits.get(name) is not None:
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.ctrlrange = list(limits[name])
    return list(ACTUATORS), holo


def servo_rate(time_constant: float, timestep: float) -> float:
    """kv / mass (1/s) of a velocity servo that MuJoCo's implicit step makes follow its
    command as the first-order lag exp(-t / time_constant) does, exactly at every physics
    step whatever the step: one implicit step keeps 1 / (1 + timestep * rate) of the error,
    the lag exp(-timestep / time_constant) of it."""
    return math.expm1(timestep / time_constant) / timestep


def _reach(model: mujoco.MjModel, data: mujoco.MjData, root: int) -> float:
    """The robot's radius about its root link's origin, at least 5 cm: its wheels' linear
    acceleration limit turns into an angular one at this radius."""
    offsets = np.linalg.norm(data.geom_xpos[:, :2] - data.xpos[root, :2], axis=1)
    return max(0.05, float(np.max(offsets + model.geom_rbound, initial=0.0)))


def _limits(model_params: Path | None) -> dict[str, tuple[float, float] | None]:
    """ctrlrange of each actuator from model_params.yaml's continuous action ranges (the
    sideways one of a non-holonomic drive is held at zero by its gain, not a range)."""
    if model_params is None:
        return {}
    params = load_robot_params(model_params)
    low, high = params.low, params.high
    if len(low) == 3:
        return {"base_vx": (low[0], high[0]), "base_vy": (low[1], high[1]),
                "base_wz": (low[2], high[2])}
    return {"base_vx": (low[0], high[0]), "base_wz": (low[1], high[1])}


def place(spec: mujoco.MjSpec, prefix: str, pose: tuple[float, float, float]) -> None:
    """Set the planar joints of the robot under `prefix` in `spec` so that qpos is the
    world pose (x, y, yaw) and qpos0 the spawn `pose`: the robot's frame there is yawed by
    pose[2], so the slides' axes are the world's x and y seen from it, and each joint's
    reference is the spawn pose."""
    c, s = math.cos(pose[2]), math.sin(pose[2])
    x, y, yaw = (spec.joint(prefix + name) for name in JOINTS)
    x.axis, y.axis = [c, -s, 0.0], [s, c, 0.0]
    x.ref, y.ref, yaw.ref = pose[0], pose[1], pose[2]
