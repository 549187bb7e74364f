"""Holonomic drives from what a URDF declares.

MuJoCo has no friction that is directional in a body frame, so two declarations are turned
into mechanisms it can simulate:

1. Mecanum friction: a wheel whose `<gazebo reference>` grips along `fdir1` only (mu1 or mu2
   zero, the other not). Its cylinder or sphere collision is switched off and 12 passive
   rollers are added around the rim, each a hinge body with 2 equal spheres whose axis lies
   along the grip direction where it touches the ground. The rollers weigh a quarter of the
   wheel, taken from the wheel, so the robot's mass does not change.
2. Force-based planar drive: frictionless wheels (mu1 = mu2 = 0) plus a planar or
   force-based move plugin. Three velocity actuators on a site at the robot's centre of mass
   push the base along its x and y and turn it about z, with force = gain * (command -
   velocity) as those plugins do, integrated implicitly by MuJoCo. The wheels spin freely.

Gazebo gives `fdir1` in the collision geometry's frame; it is turned into the link frame
with that geometry's orientation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.assets.gazebo import LinkSurface, PluginDecl
from arena_gym.geometry.groups import GROUP_HIDDEN, ROLLER_CONTYPE
from arena_gym.scene.wheels import wheel_geometry

NUM_ROLLERS = 12
ROLLER_MASS_FRACTION = 0.25
ROLLER_RADIUS_FRACTION = 0.35  # sphere radius / wheel radius
PLANAR_PLUGINS = ("planar_move", "force_based_move")
PLANAR_AXES = ("vx", "vy", "wz")
PLANAR_SITE = "planar_drive"
DEFAULT_PLANAR_TIME_CONSTANT = 0.02  # s, when the plugin names no gains


@dataclass(frozen=True)
class PlanarGains:
    """The velocity P gains a planar-move plugin declares for x, y and yaw (None where not
    declared)."""

    x: float | None
    y: float | None
    yaw: float | None


@dataclass(frozen=True)
class Grip:
    """A mecanum wheel's declaration: fdir1 (collision frame), and whether it grips along
    fdir1 (mu1 > 0, mu2 = 0) or across it (mu1 = 0, mu2 > 0)."""

    fdir1: np.ndarray
    across: bool
    mu: float


def mecanum_grip(surface: LinkSurface | None) -> Grip | None:
    """The grip a wheel's surface declares, or None when it grips every way or none."""
    if surface is None or surface.fdir1 is None:
        return None
    mu1 = surface.mu1 or 0.0
    mu2 = (surface.mu2 if surface.mu2 is not None else surface.mu1) or 0.0
    fdir = np.asarray(surface.fdir1, dtype=float)
    if (mu1 > 0) == (mu2 > 0) or np.linalg.norm(fdir) < 1e-9:
        return None
    return Grip(fdir / np.linalg.norm(fdir), across=mu1 == 0, mu=max(mu1, mu2))


def planar_plugin(plugins: list[PluginDecl]) -> PlanarGains | None:
    for plugin in plugins:
        if any(key in plugin.filename for key in PLANAR_PLUGINS):
            gains = [plugin.params.get(f"{axis}_velocity_p_gain") for axis in ("x", "y", "yaw")]
            return PlanarGains(*(float(g) if g else None for g in gains))
    return None


def is_frictionless(surface: LinkSurface | None) -> bool:
    return surface is not None and surface.mu1 == 0.0 and (surface.mu2 or 0.0) == 0.0


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    quat = np.zeros(4)
    mujoco.mju_axisAngle2Quat(quat, axis, angle)
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, quat)
    return mat.reshape(3, 3)


def _collision_geom(body: mujoco.MjsBody) -> mujoco.MjsGeom | None:
    for geom in body.geoms:
        if geom.contype or geom.conaffinity:
            return geom
    return None


MIN_ROLLING_GRIP = 0.1  # |cos| of the angle between a wheel's grip and its rolling direction


def grip_in_link(
    spec: mujoco.MjSpec, model: mujoco.MjModel, data: mujoco.MjData, joint: str, declared: Grip
) -> np.ndarray:
    """The ground-plane grip direction at the wheel's contact, in its link frame.

    `model`/`data`: the robot alone at its reference pose, kinematics done. Raises
    ValueError, saying why, for a grip that could not drive the wheel: along its axle (the
    wheel's speed for a twist would divide by zero) or straight into the ground.
    """
    body = spec.joint(joint).parent
    wheel = _collision_geom(body)
    axis = _unit(spec.joint(joint).axis)
    geom_rot = np.eye(3).ravel() if wheel is None else np.zeros(9)
    if wheel is not None:
        mujoco.mju_quat2Mat(geom_rot, np.asarray(wheel.quat, dtype=float))
    grip = geom_rot.reshape(3, 3) @ declared.fdir1
    down = _down(model, data, body.name, axis)
    grip = grip - (grip @ down) * down  # a direction in the ground plane at the contact
    declared_as = f"fdir1={tuple(float(v) for v in np.round(declared.fdir1, 4))}"
    if np.linalg.norm(grip) < MIN_ROLLING_GRIP:  # within ~6 degrees of vertical
        raise ValueError(f"its grip direction {declared_as} points into the ground")
    if declared.across:
        grip = np.cross(down, grip)
    grip = _unit(grip)
    rolling = np.cross(axis, down)
    if abs(float(grip @ rolling)) < MIN_ROLLING_GRIP:
        along = "across" if declared.across else "along"
        raise ValueError(
            f"its grip ({declared_as}, gripping {along} it) lies along its axle, so the wheel "
            f"cannot drive the robot; expected a grip within "
            f"{math.degrees(math.acos(MIN_ROLLING_GRIP)):.0f} degrees of its rolling direction"
        )
    return grip


def _unit(v: object) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _down(model: mujoco.MjModel, data: mujoco.MjData, body: str, axis: np.ndarray) -> np.ndarray:
    """The direction from the wheel's centre to its lowest point, in its link frame."""
    link_rot = data.xmat[model.body(body).id].reshape(3, 3)
    down = link_rot.T @ np.array([0.0, 0.0, -1.0])
    return _unit(down - (down @ axis) * axis)


def _rim(
    model: mujoco.MjModel, data: mujoco.MjData, joint: str, axis: np.ndarray
) -> tuple[float, np.ndarray]:
    """The wheel's radius and the centre of its tread on the axle, in its link frame, from
    the compiled collision (a primitive's size, or a mesh's farthest vertex)."""
    j = model.joint(joint).id
    body = model.jnt_bodyid[j]
    radius = wheel_geometry(model, data, joint, body).radius
    anchor = model.jnt_pos[j]
    first, count = model.body_geomadr[body], model.body_geomnum[body]
    colliding = [g for g in range(first, first + count)
                 if model.geom_contype[g] or model.geom_conaffinity[g]]
    offset = model.geom_pos[colliding[0]] - anchor if colliding else np.zeros(3)
    return radius, anchor + (offset @ axis) * axis  # on the axle, at the tread's middle


def add_rollers(
    spec: mujoco.MjSpec,
    model: mujoco.MjModel,
    data: mujoco.MjData,
    joint: str,
    grip: np.ndarray,
    mu: float,
) -> list[str]:
    """Replace a wheel's collision with NUM_ROLLERS rollers; return the roller joint names."""
    body = spec.joint(joint).parent
    wheel = _collision_geom(body)
    if wheel is None:
        return []
    axis = _unit(spec.joint(joint).axis)
    down = _down(model, data, body.name, axis)
    radius, centre = _rim(model, data, joint, axis)
    wheel.contype, wheel.conaffinity, wheel.group = 0, 0, GROUP_HIDDEN
    sphere = ROLLER_RADIUS_FRACTION * radius
    roller_mass = ROLLER_MASS_FRACTION * body.mass / NUM_ROLLERS
    body.mass *= 1 - ROLLER_MASS_FRACTION
    body.fullinertia = np.asarray(body.fullinertia) * (1 - ROLLER_MASS_FRACTION)
    body.inertia = np.asarray(body.inertia) * (1 - ROLLER_MASS_FRACTION)
    names = []
    for k in range(NUM_ROLLERS):
        rot = _rotation(axis, 2 * math.pi * k / NUM_ROLLERS)
        position = centre + rot @ down * (radius - sphere)
        roller_axis = rot @ grip
        name = f"{body.name}_roller_{k}"
        roller = body.add_body(name=name, pos=position)
        roller.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_HINGE, axis=roller_axis)
        for side in (-1, 1):
            roller.add_geom(
                type=mujoco.mjtGeom.mjGEOM_SPHERE,
                size=[sphere, 0, 0],
                pos=side * 0.6 * sphere * roller_axis,
                mass=roller_mass / 2,
                friction=[mu, 0.005, 0.0001],
                condim=3,
                priority=1,
                contype=ROLLER_CONTYPE,
                conaffinity=0,
                rgba=[0.2, 0.2, 0.2, 1],
            )
        names.append(name)
    return names


def add_planar_drive(
    spec: mujoco.MjSpec, model: mujoco.MjModel, data: mujoco.MjData, gains: PlanarGains
) -> list[str]:
    """Site + three velocity actuators on the root body; return the actuator names."""
    root = spec.worldbody.first_body()
    rid = model.body(root.name).id
    rot = data.xmat[rid].reshape(3, 3)
    com = rot.T @ (data.subtree_com[rid] - data.xpos[rid])
    spec_site = root.add_site(name=PLANAR_SITE, pos=com, group=GROUP_HIDDEN)
    mass = float(model.body_subtreemass[rid])
    # yaw inertia of the whole robot about the site's z axis, for a default yaw gain
    inertia_z = 0.0
    for b in range(1, model.nbody):
        if model.body_rootid[b] != rid:
            continue
        r = data.xipos[b] - data.subtree_com[rid]
        body_rot = data.ximat[b].reshape(3, 3)
        izz = (body_rot @ np.diag(model.body_inertia[b]) @ body_rot.T)[2, 2]
        inertia_z += izz + model.body_mass[b] * (r[0] ** 2 + r[1] ** 2)
    tau = DEFAULT_PLANAR_TIME_CONSTANT
    kv = {
        "vx": gains.x or mass / tau,
        "vy": gains.y or mass / tau,
        "wz": gains.yaw or max(inertia_z, 1e-6) / tau,
    }
    gears = {"vx": [1, 0, 0, 0, 0, 0], "vy": [0, 1, 0, 0, 0, 0], "wz": [0, 0, 0, 0, 0, 1]}
    names = []
    for axis in PLANAR_AXES:
        name = f"planar_{axis}"
        act = spec.add_actuator(name=name, target=spec_site.name, trntype=mujoco.mjtTrn.mjTRN_SITE)
        act.gear = gears[axis]
        act.set_to_velocity(kv=kv[axis])
        names.append(name)
    return names
