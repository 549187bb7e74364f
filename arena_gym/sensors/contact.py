"""Contacts of a link, and the robot-level collision flag and class: the one collision rule.

A link's contacts are those between its colliding geoms and any geom outside its robot's
kinematic tree (the floor included), as the last physics step found them: world position,
the unit normal pointing into the link's geom, the penetration depth (m, positive when
the geoms overlap), and both geoms (the link's and the other; named by their MuJoCo name,
else their body's). MuJoCo's contact normal points from the contact's first geom to its
second; it is flipped where the link's geom is the first.

Collision (CollisionSpec, `suite[key].collided`, `.kind`): a robot collides when any of
its geoms touches anything outside the robot, except its feet touching a floor surface.
Feet are the robot's wheels (with their rollers) and the bodies resting on the ground in
its reference pose (casters), `RobotInfo.feet`; floor surfaces are the ground plane and
the spawned floor slabs. So a robot lying on its side on the floor collides; wheels on a
floor slab do not. What was hit gives the class (COLLISION_CLASSES, `kind` int8): another
robot ("robot"), else a movable obstacle prim ("obstacle"), else anything static, walls,
static prims and floors ("wall"); "none" without a collision. A pedestrian's capsule (a slot
of the env's pedestrian pool, arena_gym.people.pedestrians) is "pedestrian", which outranks
the others when a robot touches several things at once.

A contact anywhere inside the sampling window counts, not only at its end: the window is
every physics step since the previous sample (one control step when the caller samples
once per control step). Per physics step MuJoCo counts the robot's contacts in contact
sensors (scene/robot.py: all its contacts, and each foot's with the ground plane) and
keeps each step's counts in mjData.history, so stepping stays batched and nothing is
copied per step. A step with more contacts than feet-on-ground ones is a collision, unless
the env has floor slabs: there the extra contacts may be feet on a slab, and the contact
list of the window's last step (the contacts the last physics step found, where every
contact's geoms are known) settles it (in slab worlds a robot on a slab costs one
MjData copy per sample). The class comes from that list too (or from the reset sample
for a window that starts in contact and leaves it, e.g. a robot spawned overlapping a
wall and pushed out), and is "wall" when the contact is gone by then. A forced sample
(`SensorSuite.reset`) applies the rule to the contacts of the current state. The window
walk over every env's rings is one compiled function (`window`); the contact list is read
only for envs it finds in contact.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from arena_gym.compiled import kernel
from arena_gym.scene.robot import COLLISION_HISTORY, RobotInfo, collision_sensor_names
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount
from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.specs import CollisionSpec, ContactSpec
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.units import Unit, robot_geoms


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
    """A robot's contact sensor (or one link's contacts) in every env: the contacts it touches,
    their geoms, positions and frames."""

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
                    "other_geom": np.full((n, k), -1, dtype=np.int32),
                    "own_geom": np.full((n, k), -1, dtype=np.int32)}

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None) -> None:
        model = scene.compiled
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
        self.geom_names[env] = {g: model.geom(g).name or model.body(model.geom_bodyid[g]).name
                                for g in range(model.ngeom)}

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
            out["own_geom"][env] = -1
            if m:
                sign = np.where(first[order], -1.0, 1.0)[:, None]  # into the link's geom
                out["position"][env, :m] = pos[order]
                out["normal"][env, :m] = sign * normal[order]
                out["depth"][env, :m] = -dist[order]
                out["other_geom"][env, :m] = np.where(first[order], geom[order, 1], geom[order, 0])
                out["own_geom"][env, :m] = np.where(first[order], geom[order, 0], geom[order, 1])


def collides(robot_a: Any, robot_b: Any, foot_a: Any, foot_b: Any, floor_a: Any,
             floor_b: Any) -> Any:
    """The collision rule for a contact between geoms a and b, from whether each is the
    robot's, one of its feet, a floor surface: exactly one side is the robot's, and it is
    not a foot on a floor. numpy or JAX arrays (the MJX backend's pair table)."""
    return (robot_a != robot_b) & ~((foot_a & floor_b) | (floor_a & foot_b))


COLLISION_CLASSES = ("none", "wall", "obstacle", "robot", "pedestrian")
NONE, WALL, OBSTACLE, ROBOT, PEDESTRIAN = range(5)


class CollisionUnit(Unit):
    """The one collision rule for a robot in every env: whether anything but its feet on a floor
    touched it since the last sample, and what it hit."""

    kind = "collision"
    in_place = True  # its samples are written through `out` only

    def __init__(self, spec: CollisionSpec, num_envs: int) -> None:
        super().__init__(spec, num_envs)
        self.robot_geoms: list[np.ndarray] = [np.zeros(0, dtype=bool)] * num_envs
        self.feet: list[np.ndarray] = [np.zeros(0, dtype=bool)] * num_envs
        self.floor: list[np.ndarray] = [np.zeros(0, dtype=bool)] * num_envs
        self.other_class: list[np.ndarray] = [np.zeros(0, dtype=np.int8)] * num_envs
        self.slabs = np.zeros(num_envs, dtype=bool)
        # history: start address of the all-contacts counter and the feet-on-ground ones
        self.everything = np.zeros(num_envs, dtype=np.int64)
        self.feet_ground: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * num_envs
        self._feet_rings: np.ndarray | None = None  # feet_ground as one padded array
        self.since = np.full(num_envs, -np.inf)  # env time of the previous sample
        self.pending = np.zeros(num_envs, dtype=np.int8)  # class seen by the reset sample
        self.extra = np.zeros(num_envs)  # the window's most contacts beyond the feet's

    def describe(self) -> str:
        return f"collision flag of robot {self.robot!r}"

    def find_mount(self, scene: Scene, info: RobotInfo) -> SensorMount | None:
        return None

    def _allocate(self, mount: SensorMount | None) -> None:
        n = self.num_envs
        self.out = {"collided": np.zeros(n, dtype=bool), "contacts": np.zeros(n, dtype=np.int32),
                    "kind": np.zeros(n, dtype=np.int8)}

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None) -> None:
        model = scene.compiled
        root = model.body(info.root_body).id
        mine = robot_geoms(model, root) & colliding(model)
        self.robot_geoms[env] = mine
        feet = np.zeros(model.nbody, dtype=bool)
        feet[[model.body(b).id for b in info.feet]] = True
        self.feet[env] = mine & feet[model.geom_bodyid]
        self.floor[env] = floor_geoms(model, scene)
        self.slabs[env] = any(e.kind == "floor" for e in scene.entities.values())
        self.other_class[env] = _classes(model, scene)
        everything, feet_ground = collision_sensor_names(info)
        adr = model.sensor_historyadr
        self.everything[env] = adr[model.sensor(everything).id]
        self.feet_ground[env] = np.array([adr[model.sensor(n).id] for n in feet_ground],
                                         dtype=np.int64)
        self._feet_rings = None
        self.since[env] = -np.inf

    @property
    def feet_rings(self) -> np.ndarray:
        """(num_envs, most feet) history addresses of each env's feet-on-ground counters,
        -1 where an env has fewer (kept until the next bind)."""
        if self._feet_rings is None:
            width = max(len(f) for f in self.feet_ground)
            rings = np.full((self.num_envs, width), -1, dtype=np.int64)
            for env, adr in enumerate(self.feet_ground):
                rings[env, :len(adr)] = adr
            self._feet_rings = rings
        return self._feet_rings

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        out = self.out
        if frames.forced:  # the current state's contacts (mj_forward on a snapshot)
            for env in envs.tolist():
                data = frames.snapshot(env, full=True)
                count, kind = self._rule(env, contacts(data)[0])
                out["contacts"][env], out["collided"][env] = count, count > 0
                out["kind"][env] = self.pending[env] = kind
                self.since[env] = data.time
            return
        hits = 0
        for history, time, rows, group in self._histories(frames, envs):
            hits += window(history, time, rows, group, self.since, self.everything,
                           self.feet_rings, COLLISION_HISTORY, self.slabs, out["collided"],
                           out["contacts"], out["kind"], self.pending, self.extra)[0]
        if hits:
            self.classify(frames, envs)

    def classify(self, frames: Frames, envs: np.ndarray) -> None:
        """The contact list of the envs whose window held contacts beyond the feet's (the
        rare case, after `window`): in worlds with floor slabs it decides the collision (feet
        on a slab are none), elsewhere it gives the count and class of what is touched now
        (a contact that ended inside the window keeps window's)."""
        out = self.out
        for env in envs[self.extra[envs] > 0].tolist():
            count, kind = self._rule(env, contacts(frames.snapshot(env, full=True))[0])
            if self.slabs[env]:
                out["contacts"][env], out["collided"][env], out["kind"][env] = (
                    count, count > 0, kind)
            elif count:
                out["contacts"][env], out["kind"][env] = count, kind

    def _histories(self, frames: Frames, envs: np.ndarray) -> list[tuple]:
        """(history rows, clocks, each env's row in them, the envs) to run `window` on: the
        one batch group's whole fields, or the envs' rows gathered, one set per row length
        (envs whose models differ)."""
        history = frames.whole("history")
        if history is not None:
            return [(history, frames.whole("time"), envs, envs)]
        rows = [frames.row("history", env) for env in envs.tolist()]
        time = np.array([float(frames.row("time", env)) for env in envs.tolist()])
        by_length: dict[int, list[int]] = {}
        for i, row in enumerate(rows):
            by_length.setdefault(len(row), []).append(i)
        return [(np.stack([rows[i] for i in picked]), time[picked],
                 np.arange(len(picked), dtype=np.int64), envs[picked])
                for picked in by_length.values()]

    def noisy(self, spec: CollisionSpec) -> bool:  # type: ignore[override]
        return False

    def _rule(self, env: int, geom: np.ndarray) -> tuple[int, int]:
        """(colliding contacts, class) of one contact list (geom pairs (n, 2))."""
        mine, feet, floor = self.robot_geoms[env], self.feet[env], self.floor[env]
        a, b = geom[:, 0], geom[:, 1]
        hit = collides(mine[a], mine[b], feet[a], feet[b], floor[a], floor[b])
        if not hit.any():
            return 0, NONE
        other = np.where(mine[a], b, a)[hit]
        return int(hit.sum()), int(self.other_class[env][other].max())


def _classes(model: mujoco.MjModel, scene: Scene) -> np.ndarray:
    """Class per geom as the thing a robot hits: ROBOT for any robot's geoms, PEDESTRIAN for
    the pedestrian pool's capsules, OBSTACLE for movable prims (other mocap bodies), WALL
    for everything else."""
    out = np.full(model.ngeom, WALL, dtype=np.int8)
    movable = model.body_mocapid[model.geom_bodyid] >= 0
    out[movable] = OBSTACLE
    for entity in scene.entities.values():
        if entity.kind == "robot":
            out[robot_geoms(model, model.body(entity.record.root_body).id)] = ROBOT  # type: ignore[attr-defined]
    if scene.pedestrians.built:
        bodies = [model.body(name).id for name in scene.pedestrians.bodies]
        out[np.isin(model.geom_bodyid, bodies)] = PEDESTRIAN
    return out


def floor_geoms(model: mujoco.MjModel, scene: Scene) -> np.ndarray:
    """(ngeom,) bool: the floor surfaces, the ground plane and the spawned floor slabs."""
    static = model.body_weldid[model.geom_bodyid] == 0
    floor = static & (model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE)
    for entity in scene.entities.values():
        if entity.kind == "floor":
            floor |= model.geom_bodyid == model.body(entity.body).id
    return floor


@kernel
def window(history, time, rows, envs, since, everything, feet, ring, slabs, collided,
           contacts, kind, pending, extra):  # pragma: no cover - compiled
    """The collision rule over each env's window, for every i: env e = envs[i], its
    history row history[rows[i]] and clock now = time[rows[i]]. Walks the ring of its
    all-contacts counter (at `everything[e]`: two header slots, the second the cursor,
    `ring` stamps, `ring` values; MuJoCo writes one slot per physics step) from the newest
    slot back while stamps lie in the window since[e] <= stamp < now: a step with more
    contacts than its feet's on the ground (the rings at feet[e], -1 where none) touched
    something. extra[e] = the most such contacts in one step (0: clear, then collided
    False, contacts 0, kind NONE). Without floor slabs a touch is a collision: collided
    True, contacts extra, kind the class the reset sample saw (pending) where the first
    touch came at the window's start, else WALL (the contact list refines both:
    `classify`); with slabs the contact list decides. Then pending[e] = NONE and the next
    window starts: since[e] = now. Returns (envs touched, those of them with slabs)."""
    touched = unsure = 0
    for i in range(envs.shape[0]):
        e, row = envs[i], rows[i]
        now, start, a = time[row], since[e], everything[e]
        cursor = int(history[row, a + 1])
        most, first = 0.0, np.inf
        for j in range(ring):
            slot = cursor - j if cursor >= j else cursor - j + ring
            stamp = history[row, a + 2 + slot]
            if stamp < start:
                break  # written before the window, as is every slot further back
            if stamp >= now:
                continue
            ground = 0.0
            for f in range(feet.shape[1]):
                if feet[e, f] >= 0:
                    ground += history[row, feet[e, f] + 2 + ring + slot]
            over = history[row, a + 2 + ring + slot] - ground
            if over > 0:
                most = max(most, over)
                first = stamp  # the walk goes back in time: the earliest so far
        extra[e] = most
        if most > 0:
            touched += 1
            if slabs[e]:
                unsure += 1
            else:
                collided[e], contacts[e] = True, int(most)
                started = first <= start and pending[e] != NONE
                kind[e] = pending[e] if started else WALL
        else:
            collided[e], contacts[e], kind[e] = False, 0, NONE
        pending[e] = NONE
        since[e] = now
    return touched, unsure
