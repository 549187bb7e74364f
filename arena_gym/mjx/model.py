"""The CPU env's world, robot and lidar as one MuJoCo model every MJX env shares.

Built by the CPU env itself (a one-env NavigationCore: same robot, walls, obstacle pool,
lidar pattern and drive), then adapted where MJX cannot follow MuJoCo:

- MJX has no cylinder-box collision. The robot's cylinders that are not wheels (the
  arena_diffbot's chassis and lidar housing) become spheres of the same radius at the same
  centre: against vertical-sided boxes standing on the floor and taller than the sphere's
  centre (walls; pool boxes are >= 0.2 m tall) a sphere touches exactly when the cylinder
  does, as both reach the same horizontal distance at that height.
- Wheel cylinders keep their shape but collide with the ground plane only (a contype bit
  only the plane answers): rolling is unchanged, but a wheel's rim touching a box is no
  contact here. On the arena_diffbot the rims stick 1 cm out of the chassis sideways (y
  0.085 m against 0.075 m), so a robot turning on the spot 7.5-9.1 cm from a wall collides
  on the CPU and not here (docs/mjx.md; tests/mjx measure it).
- Walls and pool boxes collide with the robot only (contype bits): they have no degrees of
  freedom, so their contacts among themselves and with the floor change nothing, but MJX
  would evaluate all 126 of those pairs at every physics step.
- Sensors are dropped (the task reads contacts and ray casts itself, not the CPU's contact
  sensors, which MJX lacks), and one material is added: mjx.ray fails on a model with none.
- Sleeping is off (MJX steps every body), and the robot's explicit "never sleep" policy
  becomes the compiler's choice: MuJoCo Warp refuses a model with mjSLEEP_NEVER.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from arena_gym.config import EnvConfig
from arena_gym.geometry.rotations import quat_mats
from arena_gym.sensors.contact import collides, floor_geoms
from arena_gym.sensors.lidar import NO_ROBOT_MASK

FLOOR_ONLY = 4  # contype bit only the ground plane's conaffinity holds: wheel-to-floor contacts
STATIC = 8  # the walls' and boxes' only contype bit: robot geoms answer it, they do not


class UnsupportedConfig(ValueError):
    """A config the MJX backend cannot run (yet)."""


def check_config(cfg: EnvConfig) -> None:
    """The MJX backend runs the "random" room world with the box pool; anything else is an
    error naming the key, what is supported and what came."""
    checks = [
        ("base", cfg.base == "wheeled", "'wheeled' (base=\"wheeled\")", cfg.base),
        ("world", cfg.world == "random" and not cfg.worlds and not cfg.scenario,
         "'random' (no worlds, no scenario)", cfg.scenario or cfg.worlds or cfg.world),
        ("obstacles", not cfg.obstacles, "[] (the box pool)", list(cfg.obstacles)),
        ("num_pedestrians", cfg.num_pedestrians == 0, "0", cfg.num_pedestrians),
        ("observe_pedestrians", not cfg.observe_pedestrians, "0", cfg.observe_pedestrians),
        ("paths.subgoal", not cfg.paths.subgoal, "false", cfg.paths.subgoal),
        ("action", cfg.action == "continuous", "'continuous'", cfg.action),
        ("sensors", not cfg.sensors, "[]", list(cfg.sensors)),
        ("plugins", not cfg.plugins, "[]", list(cfg.plugins)),
        ("reward.extra", not cfg.reward.extra, "() (built-in terms only)", cfg.reward.extra),
    ]
    for key, ok, expected, got in checks:
        if not ok:
            raise UnsupportedConfig(f"{key}: the MJX backend expects {expected}, got {got!r}")


@dataclass(frozen=True)
class Layout:
    """What the MJX task needs of the CPU env's model, as numpy (static under jit)."""

    model: mujoco.MjModel  # adapted for MJX
    cpu_model: mujoco.MjModel  # the CPU env's, unadapted
    qpos_adr: int  # the robot's free joint
    spawn_z: float
    mocap: np.ndarray  # (P,) mocap ids of the pool boxes
    sizes: np.ndarray  # (P, 3) full extents
    placed_z: np.ndarray  # (P,)
    room: Any  # the CPU env's RoomLayout: where episodes may be drawn (its `free`)
    radius: float
    actuators: np.ndarray  # (nwheel,) ctrl indices
    drive: np.ndarray  # (nwheel, 3) wheel speeds = drive @ (vx, vy, omega)
    lidar_offset: np.ndarray  # (3,) in the robot root's frame
    lidar_rotation: np.ndarray  # (3, 3)
    directions: np.ndarray  # (beams, 3) in the lidar frame
    range_min: float
    range_max: float
    geomgroup: tuple[int, ...]  # what the lidar sees (its robot is the env's only one)
    collision: np.ndarray  # (ngeom, ngeom) bool: this pair's contact is a collision
    obstacle: np.ndarray  # (ngeom,) bool: a pool box (the "obstacle" class), else "wall"
    low: np.ndarray  # action bounds
    high: np.ndarray

    def rays(self, q: Any) -> tuple[Any, Any]:
        """The lidar's origin (3,) and beam directions (beams, 3) in the world for the
        robot's free joint q (7,): x, y, z, quaternion (numpy or JAX, as the CPU lidar's)."""
        rot = quat_mats(q[None, 3:7])[0]
        return q[:3] + rot @ self.lidar_offset, ((rot @ self.lidar_rotation) @ self.directions.T).T


def build_layout(cfg: EnvConfig) -> Layout:
    """The shared model and its static facts, from a one-env CPU NavigationCore."""
    from arena_gym.envs.core import NavigationCore

    check_config(cfg)
    core = NavigationCore(1, cfg)
    try:
        return _layout(core, cfg)
    finally:
        core.close()


def _layout(core, cfg: EnvConfig) -> Layout:
    cpu_model = core.store[0].model
    info = core.robot
    spec = core.store.scene(0).spec.copy()
    wheels = {name.split("/")[-1] for name in info.feet}  # link names (casters are spheres)
    root = cpu_model.body(info.root_body).id
    robot_bodies = {cpu_model.body(b).name for b in range(cpu_model.nbody)
                    if _under(cpu_model, b, root)}
    for geom in spec.geoms:
        if geom.contype == 0 and geom.conaffinity == 0:
            continue
        if geom.parent.name not in robot_bodies:
            if geom.type == mujoco.mjtGeom.mjGEOM_PLANE:
                geom.conaffinity |= FLOOR_ONLY
            else:  # walls, pool boxes: no DOFs, so no pair among them (MJX checks every one)
                geom.contype, geom.conaffinity = STATIC, 0
            continue
        geom.conaffinity |= STATIC
        if geom.type != mujoco.mjtGeom.mjGEOM_CYLINDER:
            continue
        if geom.parent.name.split("/")[-1] in wheels:
            geom.contype, geom.conaffinity = FLOOR_ONLY, 0
        else:
            geom.type = mujoco.mjtGeom.mjGEOM_SPHERE
            geom.size = [geom.size[0], 0.0, 0.0]
    for body in spec.bodies:
        if body.sleep == mujoco.mjtSleepPolicy.mjSLEEP_NEVER:
            body.sleep = mujoco.mjtSleepPolicy.mjSLEEP_AUTO
    for sensor in list(spec.sensors):
        spec.delete(sensor)
    spec.add_material(name="mjx_ray_material")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = spec.compile()
    model.opt.enableflags = 0  # no sleeping; no multi-CCD (only convex-convex pairs, none
    # here; MJX lacks it)
    unit = core.sensor_suite.channels["scan"].unit  # the CPU lidar's bound pattern and frame
    pattern = unit.pattern
    drive = core.sim.controller.drive(0, "robot")
    params = core.params
    robot = np.array([_under(model, model.geom_bodyid[g], root) for g in range(model.ngeom)])
    feet = np.array([model.body(model.geom_bodyid[g]).name in info.feet
                     for g in range(model.ngeom)])
    floor = floor_geoms(cpu_model, core.store.scene(0))
    # the collision rule (arena_gym.sensors.contact) for every pair of geoms
    collision = collides(robot[:, None], robot[None, :], feet[:, None], feet[None, :],
                         floor[:, None], floor[None, :])
    mocap = np.array([model.body_mocapid[model.body(f"env_0/{name}").id]
                      for name in core.pool.names])
    obstacle = np.isin(model.geom_bodyid, [model.body(f"env_0/{n}").id for n in core.pool.names])
    return Layout(
        model=model, cpu_model=cpu_model, qpos_adr=int(core.qpos_adr),
        spawn_z=float(core.spawn_z), mocap=mocap, sizes=core.pool.sizes.copy(),
        placed_z=core.pool.placed_z(), room=core.layout,
        radius=float(params.radius), actuators=drive.actuator_ids.copy(),
        drive=drive.matrix.copy(), lidar_offset=unit.offset[0].copy(),
        lidar_rotation=unit.rotation[0].copy(), directions=pattern.directions.copy(),
        range_min=float(pattern.range_min), range_max=float(core.max_range),
        geomgroup=tuple(int(v) for v in NO_ROBOT_MASK[:6]), collision=collision,
        obstacle=obstacle, low=np.array(params.low, float), high=np.array(params.high, float))


def _under(model: mujoco.MjModel, body: int, root: int) -> bool:
    """Whether `body` is `root` or below it."""
    while body > 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return False
