"""Contacts of a link, and the robot-level collision flag, from MjData's contact list.

A link's contacts are those between its colliding geoms and any geom outside its robot's
kinematic tree (the floor included), as the last physics step found them: world position,
the unit normal pointing into the link's geom, and the penetration depth (m, positive when
the geoms overlap). MuJoCo's contact normal points from the contact's first geom to its
second; it is flipped where the link's geom is the first.

The collision flag counts a robot's contacts with anything but the floor, and floor
contacts of anything but its feet. Feet are the bodies of its wheels (and their subtrees:
mecanum rollers) and the bodies whose collision geoms rest within FOOT_TOLERANCE of the
ground in the robot's reference pose (casters). The floor is the ground plane and every
spawned floor slab.
"""

from __future__ import annotations

import mujoco
import numpy as np

from arena_gym.scene.robot import RobotInfo
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount
from arena_gym.sensors.access import Frames
from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.specs import CollisionSpec, ContactSpec
from arena_gym.sensors.units import Unit, robot_geoms

FOOT_TOLERANCE = 0.005  # m above the robot's lowest point at rest


def colliding(model: mujoco.MjModel) -> np.ndarray:
    return (model.geom_contype != 0) | (model.geom_conaffinity != 0)


def contacts(data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(geom pairs (n, 2), positions (n, 3), normals (n, 3) from geom 0 to geom 1, dist (n,))."""
    n = data.ncon
    if n == 0:
        empty = np.zeros((0, 3))
        return np.zeros((0, 2), dtype=np.int32), empty, empty, np.zeros(0)
    c = data.contact
    return c.geom[:n], c.pos[:n], c.frame[:n, :3], c.dist[:n]


class ContactUnit(Unit):
    kind = "contact"

    def __init__(self, spec: ContactSpec, num_envs: int) -> None:
        super().__init__(spec, num_envs)
        self.link = spec.link
        self.max_contacts = spec.max_contacts
        self.link_geoms: list[np.ndarray] = [np.zeros(0, dtype=bool)] * num_envs
        self.robot_geoms: list[np.ndarray] = [np.zeros(0, dtype=bool)] * num_envs
        self.geom_names: list[dict[int, str]] = [{} for _ in range(num_envs)]

    def describe(self) -> str:
        what = f"link {self.link!r}" if self.link else f"contact sensor {self.sensor!r}"
        return f"contacts of {what} of robot {self.robot!r}"

    def find_mount(self, scene: Scene, info: RobotInfo) -> SensorMount | None:
        if self.link is None:
            return super().find_mount(scene, info)
        return None

    def _allocate(self, mount: SensorMount | None) -> None:
        n, k = self.num_envs, self.max_contacts
        self.out = {"num": np.zeros(n, dtype=np.int32), "position": np.full((n, k, 3), np.nan),
                    "normal": np.full((n, k, 3), np.nan), "depth": np.full((n, k), np.nan),
                    "other_geom": np.full((n, k), -1, dtype=np.int32)}

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None) -> None:
        model = scene._model
        body_name = mount.body if mount is not None else info.prefix + self.link  # type: ignore[operator]
        try:
            body = model.body(body_name).id
        except KeyError:
            links = [model.body(b).name[len(info.prefix):] for b in range(model.nbody)
                     if model.body(b).name.startswith(info.prefix)]
            raise SensorError(
                f"{self.describe()}: env {scene.env_id} has no link {body_name!r}; "
                f"expected one of {links}"
            ) from None
        root = model.body(info.root_body).id
        self.link_geoms[env] = (model.geom_bodyid == body) & colliding(model)
        self.robot_geoms[env] = robot_geoms(model, root)
        self.geom_names[env] = {g: model.geom(g).name for g in range(model.ngeom)}

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        out, k = self.out, self.max_contacts
        for env in envs:
            geom, pos, normal, dist = contacts(frames.snapshot(int(env), full=True))
            link, robot = self.link_geoms[env], self.robot_geoms[env]
            first = link[geom[:, 0]] & ~robot[geom[:, 1]]
            second = link[geom[:, 1]] & ~robot[geom[:, 0]]
            chosen = np.flatnonzero(first | second)
            order = chosen[np.argsort(dist[chosen], kind="stable")][:k]  # deepest first
            m = len(order)
            out["num"][env] = m
            out["position"][env] = np.nan
            out["normal"][env] = np.nan
            out["depth"][env] = np.nan
            out["other_geom"][env] = -1
            if m:
                sign = np.where(first[order], -1.0, 1.0)[:, None]  # into the link's geom
                out["position"][env, :m] = pos[order]
                out["normal"][env, :m] = sign * normal[order]
                out["depth"][env, :m] = -dist[order]
                out["other_geom"][env, :m] = np.where(first[order], geom[order, 1], geom[order, 0])


class CollisionUnit(Unit):
    kind = "collision"

    def __init__(self, spec: CollisionSpec, num_envs: int) -> None:
        super().__init__(spec, num_envs)
        self.robot_geoms: list[np.ndarray] = [np.zeros(0, dtype=bool)] * num_envs
        self.feet: list[np.ndarray] = [np.zeros(0, dtype=bool)] * num_envs
        self.floor: list[np.ndarray] = [np.zeros(0, dtype=bool)] * num_envs

    def describe(self) -> str:
        return f"collision flag of robot {self.robot!r}"

    def find_mount(self, scene: Scene, info: RobotInfo) -> SensorMount | None:
        return None

    def _allocate(self, mount: SensorMount | None) -> None:
        n = self.num_envs
        self.out = {"collided": np.zeros(n, dtype=bool), "contacts": np.zeros(n, dtype=np.int32)}

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None) -> None:
        model = scene._model
        root = model.body(info.root_body).id
        mine = robot_geoms(model, root) & colliding(model)
        self.robot_geoms[env] = mine
        self.feet[env] = mine & _feet(model, info, root)
        self.floor[env] = _floor(model, scene)

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        for env in envs:
            geom = contacts(frames.snapshot(int(env), full=True))[0]
            mine, feet, floor = self.robot_geoms[env], self.feet[env], self.floor[env]
            a, b = geom[:, 0], geom[:, 1]
            ours = mine[a] ^ mine[b]  # exactly one side is this robot
            robot_side = np.where(mine[a], a, b)
            other_side = np.where(mine[a], b, a)
            standing = floor[other_side] & feet[robot_side]
            count = int(np.count_nonzero(ours & ~standing))
            self.out["contacts"][env] = count
            self.out["collided"][env] = count > 0


def _feet(model: mujoco.MjModel, info: RobotInfo, root: int) -> np.ndarray:
    """Bool mask over geoms: geoms of wheel bodies (and below), and of bodies resting on
    the ground in the reference pose."""
    wheel_bodies = {int(model.jnt_bodyid[model.joint(j).id]) for j in info.wheel_joints}
    below_wheel = np.zeros(model.nbody, dtype=bool)
    for b in range(model.nbody):
        walk = b
        while walk > 0:
            if walk in wheel_bodies:
                below_wheel[b] = True
                break
            walk = int(model.body_parentid[walk])
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    mine = robot_geoms(model, root) & colliding(model)
    low = np.full(model.ngeom, np.inf)
    for g in np.flatnonzero(mine):
        rot = data.geom_xmat[g].reshape(3, 3)
        centre, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        low[g] = data.geom_xpos[g, 2] + rot[2] @ centre - np.abs(rot[2]) @ half
    lowest = low[mine].min() if mine.any() else 0.0
    body_low = np.full(model.nbody, np.inf)
    np.minimum.at(body_low, model.geom_bodyid, low)
    resting = body_low <= lowest + FOOT_TOLERANCE
    bodies = below_wheel | resting
    return bodies[model.geom_bodyid]


def _floor(model: mujoco.MjModel, scene: Scene) -> np.ndarray:
    floor = (model.geom_bodyid == 0) & (model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE)
    for entity in scene.entities.values():
        if entity.kind == "floor":
            floor |= model.geom_bodyid == model.body(entity.body).id
    return floor
