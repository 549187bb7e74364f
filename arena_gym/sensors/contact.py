"""Contacts of a link, and the robot-level collision flag and class: the one collision rule.

A link's contacts are those between its colliding geoms and any geom outside its robot's
kinematic tree (the floor included), as the last physics step found them: world position,
the unit normal pointing into the link's geom, and the penetration depth (m, positive when
the geoms overlap). MuJoCo's contact normal points from the contact's first geom to its
second; it is flipped where the link's geom is the first.

Collision (CollisionSpec, `suite[key].collided`, `.kind`): a robot collides when any of
its geoms touches anything outside the robot, except its feet touching a floor surface.
Feet are the robot's wheels (with their rollers) and the bodies resting on the ground in
its reference pose (casters), `RobotInfo.feet`; floor surfaces are the ground plane and
the spawned floor slabs. So a robot lying on its side on the floor collides; wheels on a
floor slab do not. What was hit gives the class (COLLISION_CLASSES, `kind` int8): another
robot ("robot"), else a movable obstacle prim ("obstacle"), else anything static, walls,
static prims and floors ("wall"); "none" without a collision. A pedestrian's capsule (a slot
of the env's pedestrian pool, arena_gym.scene.pedestrians) is "pedestrian", which outranks
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
(`SensorSuite.reset`) applies the rule to the contacts of the current state. The usual
sample, every env clear, is one compiled pass over the rings (contact_kernels, numba).
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np

from arena_gym.kernel_modules import kernels
from arena_gym.scene.robot import COLLISION_HISTORY, RobotInfo, collision_sensor_names
from arena_gym.scene.scene import Scene
from arena_gym.scene.sensor_mounts import SensorMount
from arena_gym.sensors.access import Frames
from arena_gym.sensors.errors import SensorError
from arena_gym.sensors.specs import CollisionSpec, ContactSpec
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


COLLISION_CLASSES = ("none", "wall", "obstacle", "robot", "pedestrian")
NONE, WALL, OBSTACLE, ROBOT, PEDESTRIAN = range(5)


class CollisionUnit(Unit):
    kind = "collision"
    in_place = True  # its samples are written through `out`; `_clear` said what `out` reads

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
        self.layout: list[tuple] = [()] * num_envs  # the addresses, as a grouping key
        self.since = np.full(num_envs, -np.inf)  # env time of the previous sample
        self.pending = np.zeros(num_envs, dtype=np.int8)  # class seen by the reset sample
        self._slots = 32  # history slots read per sample in lockstep (_counts)
        self._all_layouts: dict[tuple, list[int]] | None = None  # _layouts of every env
        self._clear = False  # every env's outputs and pending class read "no collision"

    def describe(self) -> str:
        return f"collision flag of robot {self.robot!r}"

    def find_mount(self, scene: Scene, info: RobotInfo) -> SensorMount | None:
        return None

    def _allocate(self, mount: SensorMount | None) -> None:
        n = self.num_envs
        self.out = {"collided": np.zeros(n, dtype=bool), "contacts": np.zeros(n, dtype=np.int32),
                    "kind": np.zeros(n, dtype=np.int8)}

    def _bind_env(self, env: int, scene: Scene, info: RobotInfo, mount: SensorMount | None) -> None:
        model = scene._model
        root = model.body(info.root_body).id
        mine = robot_geoms(model, root) & colliding(model)
        self.robot_geoms[env] = mine
        feet = np.zeros(model.nbody, dtype=bool)
        feet[[model.body(b).id for b in info.feet]] = True
        self.feet[env] = mine & feet[model.geom_bodyid]
        self.floor[env] = _floor(model, scene)
        self.slabs[env] = any(e.kind == "floor" for e in scene.entities.values())
        self.other_class[env] = _classes(model, scene)
        everything, feet_ground = collision_sensor_names(info)
        adr = model.sensor_historyadr
        self.everything[env] = adr[model.sensor(everything).id]
        self.feet_ground[env] = np.array([adr[model.sensor(n).id] for n in feet_ground],
                                         dtype=np.int64)
        self.layout[env] = (int(self.everything[env]), tuple(self.feet_ground[env].tolist()))
        self._all_layouts = None
        self.since[env] = -np.inf
        self._clear = False

    def _compute(self, frames: Frames, envs: np.ndarray) -> None:
        out = self.out
        if frames.forced:  # the current state's contacts (mj_forward on a snapshot)
            self._clear = False
            for env in envs.tolist():
                data = frames.snapshot(env, full=True)
                count, kind = self._rule(env, contacts(data)[0])
                out["contacts"][env], out["collided"][env] = count, count > 0
                out["kind"][env] = self.pending[env] = kind
                self.since[env] = data.time
            return
        if len(envs) == self.num_envs and self._all_clear(frames, envs):  # the usual sample
            self._mark_clear()
            return
        now = np.asarray(frames.field_rows("time", envs), dtype=float).reshape(-1)
        # per physics step read: all contacts, feet's with the ground
        counts, ground, stamps, since = self._counts(frames, envs)
        over = counts > ground  # anything but feet on the ground plane
        seen = bool(over.any())  # else nothing inside the window either (the usual step)
        extra = over & (stamps >= since[:, None]) & (stamps < now[:, None]) if seen else over
        if len(envs) == self.num_envs and not (seen and extra.any()):  # all clear
            self._mark_clear()
            self.since[:] = now
            return
        self._clear = False
        slabs = self.slabs[envs][:, None]
        certain, unsure = extra & ~slabs, extra & slabs
        out["contacts"][envs], out["collided"][envs], out["kind"][envs] = 0, False, NONE
        for i in np.flatnonzero(certain.any(axis=1) | unsure.any(axis=1)).tolist():
            env = int(envs[i])  # rare: a collision, or feet on a slab: the contact list
            count, kind = self._rule(env, contacts(frames.snapshot(env, full=True))[0])
            if certain[i].any() and not count:  # the contact ended inside the window
                count = int((counts[i] - ground[i])[certain[i]].max())
                started = stamps[i][certain[i]].min() <= self.since[env]
                kind = self.pending[env] if started and self.pending[env] != NONE else WALL
            out["contacts"][env], out["collided"][env], out["kind"][env] = count, count > 0, kind
        self.pending[envs] = NONE
        self.since[envs] = now

    def _moved(self) -> None:
        self._clear = False  # other arrays: written in full at the next all-clear sample

    def _mark_clear(self) -> None:
        """Every env's outputs and pending class read "no collision"."""
        if not self._clear:  # else they read so already
            out = self.out
            out["contacts"][:], out["collided"][:], out["kind"][:] = 0, False, NONE
            self.pending[:] = NONE
            self._clear = True

    def _all_clear(self, frames: Frames, envs: np.ndarray) -> bool:
        """The all-clear sample of every env compiled (contact_kernels.all_clear, the rule
        of _counts and _compute fused): True when no window held a contact beyond the feet
        on the ground, the next windows then started; False where it cannot tell (outputs
        not in one batch, counter layouts that differ, a contact beyond the feet's in a
        window, a window longer than the slots read in lockstep): the numpy path decides,
        as without it."""
        history = frames.whole("history")
        layouts = self._layouts(envs)
        if history is None or len(layouts) != 1:
            return False
        everything, _ = next(iter(layouts))
        return kernels("sensors.contact_kernels").all_clear(
            history, frames.whole("time"), self.since, everything, self.feet_ground[0],
            self._slots, COLLISION_HISTORY, self._clear)

    def _counts(self, frames: Frames, envs: np.ndarray):
        """Per env and history slot read (len(envs), k): the all-contacts and
        feet-on-ground counts and the stamps; and per env the window's start (`since`: a
        slot is in the window when since <= stamp < now). Every counter of a robot is
        written at every step: they share the ring's cursor and stamps. In lockstep every
        env's cursor is the same: then only the newest k slots are read (k kept between
        calls, doubled whenever the oldest slot read is still inside a window), about a
        control step's worth rather than the whole ring."""
        n, n_envs = COLLISION_HISTORY, self.num_envs
        layouts = self._layouts(envs)
        if len(layouts) == 1:  # the usual case (one robot model everywhere): no scatter
            layout = next(iter(layouts))
            since = self.since if len(envs) == n_envs else self.since[envs]
            cursor = frames.columns("history", envs, _cursor_index(layout))[:, 0]
            lockstep = (len(envs) and (cursor == cursor[0]).all()
                        and (self._clear or np.isfinite(since).all()))  # clear: sampled
            while True:
                index, nfeet = (_window_index(layout, int(cursor[0]), self._slots) if lockstep
                                else _gather_index(layout))
                h = frames.columns("history", envs, index).reshape(len(envs), 2 + nfeet, -1)
                stamps, counts, ground = h[:, 0], h[:, 1], h[:, 2:].sum(axis=1)
                if not lockstep or self._slots == n or (stamps[:, -1] < since).all():
                    break
                self._slots = min(n, 2 * self._slots)  # a longer window than read: read more
        else:
            history = frames.field_rows("history", envs)
            shape = (len(envs), n)
            counts, ground, stamps = np.zeros(shape), np.zeros(shape), np.zeros(shape)
            for layout, rows in layouts.items():
                index, nfeet = _gather_index(layout)
                h = history[rows][:, index]
                h = h.reshape(len(rows), 2 + nfeet, n)  # stamps, all, feet on the ground...
                stamps[rows], counts[rows] = h[:, 0], h[:, 1]
                ground[rows] = h[:, 2:].sum(axis=1)
        since = self.since if len(envs) == n_envs else self.since[envs]
        return counts, ground, stamps, since

    def _layouts(self, envs: np.ndarray) -> dict[tuple, list[int]]:
        """Positions in `envs` grouped by counter layout (kept for all envs between binds)."""
        every = len(envs) == self.num_envs
        if every and self._all_layouts is not None:
            return self._all_layouts
        layouts: dict[tuple, list[int]] = {}
        for i, env in enumerate(envs.tolist()):
            layouts.setdefault(self.layout[env], []).append(i)
        if every:  # envs are sorted and unique: all of them, in order
            self._all_layouts = layouts
        return layouts

    def noisy(self, spec: CollisionSpec) -> bool:  # type: ignore[override]
        return False

    def _rule(self, env: int, geom: np.ndarray) -> tuple[int, int]:
        """(colliding contacts, class) of one contact list (geom pairs (n, 2))."""
        mine = self.robot_geoms[env]
        a, b = geom[:, 0], geom[:, 1]
        first, second = mine[a], mine[b]
        ours = first != second  # exactly one side is this robot
        if not ours.any():
            return 0, NONE
        robot_side = np.where(first, a, b)[ours]
        other_side = np.where(first, b, a)[ours]
        other = other_side[~(self.floor[env][other_side] & self.feet[env][robot_side])]
        if not other.size:
            return 0, NONE
        return int(other.size), int(self.other_class[env][other].max())


@functools.lru_cache(maxsize=64)
def _cursor_index(layout: tuple) -> np.ndarray:
    """The history column of the all-contacts ring's cursor (its header's second slot)."""
    return np.array([layout[0] + 1])


@functools.lru_cache(maxsize=64)
def _gather_index(layout: tuple) -> tuple[np.ndarray, int]:
    """History columns of a counter layout, one gather: the stamps, then the values of the
    all-contacts counter and of each foot's on the ground (n slots each)."""
    return _columns(layout, np.arange(COLLISION_HISTORY))


@functools.lru_cache(maxsize=256)
def _window_index(layout: tuple, cursor: int, k: int) -> tuple[np.ndarray, int]:
    """As _gather_index, but only the k newest slots, newest first: the header's second
    slot is the ring's cursor, the slot written last."""
    n = COLLISION_HISTORY
    return _columns(layout, (cursor - np.arange(min(k, n))) % n)


def _columns(layout: tuple, slots: np.ndarray) -> tuple[np.ndarray, int]:
    """The columns of `slots` of each ring of the layout (stamps, all contacts, each foot's),
    and the number of feet. Layout per scalar sensor (MuJoCo 4): two header slots, n stamps,
    n values."""
    everything, feet_ground = layout
    n = COLLISION_HISTORY
    starts = [everything + 2] + [a + 2 + n for a in (everything, *feet_ground)]
    return np.concatenate([s + slots for s in starts]), len(feet_ground)


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


def _floor(model: mujoco.MjModel, scene: Scene) -> np.ndarray:
    static = model.body_weldid[model.geom_bodyid] == 0
    floor = static & (model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE)
    for entity in scene.entities.values():
        if entity.kind == "floor":
            floor |= model.geom_bodyid == model.body(entity.body).id
    return floor
