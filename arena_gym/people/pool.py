"""The pedestrians of one env: a fixed pool of mocap capsule bodies, taken and returned by
slot, held by the env's scene as its `pedestrians` member.

The first pedestrian of an env adds its pool's mocap bodies (POOL_SIZE, 64, unless the store
says otherwise), parked below the ground, and the scene compiles once for them; from then
on spawning, moving and deleting pedestrians only write `mocap_pos`/`mocap_quat` (state),
so pedestrians never recompile and every env keeps one model layout (envs with pools step
in one Batch). A slot's body is named `<env prefix>pedestrians/slot_<k>`; its capsule
stands on the ground (GROUP_STATIC: lidars see it at leg height, cameras draw it) and
collides like an obstacle; the contact rule classes it "pedestrian"
(arena_gym.sensors.contact). A slot may wear an actor's skin (arena_gym.people.skins),
posed from its walk clip or from joint angles (arena_gym.people.joint_rig).

    pool = store.scene(0).pedestrians
    pool.spawn([Pedestrian("alice", pose=(1.0, 2.0, 0.0))])
    pool.update([Pedestrian("alice", pose=(1.1, 2.0, 0.0))])
    pool.delete(["alice"])
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Protocol

import mujoco
import numpy as np

from arena_gym.assets.meshes import inside
from arena_gym.errors import SceneError, SpawnError, unknown
from arena_gym.geometry import groups
from arena_gym.people.actors import ActorAsset, load_actor
from arena_gym.people.body_joints import angle_rows
from arena_gym.people.joint_rig import joint_rig
from arena_gym.people.pedestrians import (
    HEIGHT,
    POOL_BODY,
    POOL_SIZE,
    RADIUS,
    Pedestrian,
    parked,
    pose_rows,
)
from arena_gym.people.skins import (
    WALK_SPEED,
    add_skin,
    bone_name,
    bone_rows,
    remove_skin,
    world_rows,
)

# a slot's capsule's group: unseen, seen by rays; skinned, unseen, seen (set_detection)
_GROUPS = np.array([groups.GROUP_VISUAL, groups.GROUP_STATIC, groups.GROUP_HIDDEN,
                    groups.GROUP_ROBOT])


class Host(Protocol):
    """What a pool needs of the scene that holds it (arena_gym.scene.scene.Scene)."""

    env_id: int
    prefix: str
    spec: mujoco.MjSpec
    path_roots: tuple[Path, ...] | None

    @property
    def version(self) -> int: ...
    @property
    def model(self) -> mujoco.MjModel: ...  # compiled and synced
    @property
    def data(self) -> mujoco.MjData: ...
    @property
    def compiled(self) -> mujoco.MjModel: ...  # the last compiled model, as it is
    def flush(self) -> None: ...
    def sync(self) -> None: ...
    def edited(self) -> None: ...
    def check_fragment(self, fragment: mujoco.MjSpec, what: str) -> None: ...


class PedestrianPool:
    """The pedestrians of one env's scene (its `pedestrians` member): which pedestrian holds
    which mocap body of the pool, and the requests that take, move and return them."""

    def __init__(self, host: Host, size: int = POOL_SIZE) -> None:
        # weakly: the scene holds its pool, and a scene nobody holds is freed at once (its
        # model and data with it), not when the cyclic collector comes by
        self.host = weakref.proxy(host)
        self.prefix, self.size = host.prefix, size
        self.built = False
        self.slots: dict[str, int] = {}  # pedestrian name -> slot
        self.actors: dict[str, str | None] = {}
        self.free: list[int] = list(range(size - 1, -1, -1))  # pop() takes slot 0 first
        self.cursor = np.zeros(size)  # clip cursor per slot (restarted by a teleport)
        # slots in collision detection: a taken slot is, a free one is not (see
        # set_detection); MuJoCo's broadphase then skips the others entirely
        self.contacts = np.zeros(size, dtype=bool)
        # slots lidars see (GROUP_STATIC); the others sit in GROUP_VISUAL, which cameras
        # draw and rays skip (for people beyond every lidar's range)
        self.rays = np.zeros(size, dtype=bool)
        self.skins: dict[int, str] = {}  # slot -> the actor (SDF path) whose skin it wears
        self.last = np.full((size, 3), np.nan)  # x, y, sim time of each slot's last pose
        # skinned slots posed from joint angles (their last request carried some): the
        # clip is paused until a request without angles
        self.posed = np.zeros(size, dtype=bool)
        self._mocap: tuple[int, np.ndarray] = (-1, np.zeros(0, dtype=np.int64))
        self._bodies: tuple = (None,)  # (the model, body and geom ids, the geoms' bits)
        self._bone_mocap: dict[int, np.ndarray] = {}  # skinned slot -> its bones' mocap ids

    @property
    def bodies(self) -> list[str]:
        """Full body names of every slot, in slot order."""
        return [self.prefix + POOL_BODY.format(k) for k in range(self.size)]

    def _add_bodies(self, spec: mujoco.MjSpec) -> None:
        """Add the pool's bodies to `spec`: mocap capsules, parked."""
        half = HEIGHT / 2 - RADIUS  # capsule half-length between its hemisphere centres
        for k, name in enumerate(self.bodies):
            body = spec.worldbody.add_body(name=name, pos=parked(np.array([k]))[0],
                                          mocap=True)
            body.add_geom(
                name=name + "/capsule",
                type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                size=[RADIUS, half, 0.0],
                pos=[0.0, 0.0, HEIGHT / 2],
                rgba=[0.25, 0.45, 0.8, 1.0],
                group=groups.GROUP_STATIC,
                conaffinity=groups.WORLD_CONAFFINITY,
            )

    def check_new(self, env_id: int, peds: list[Pedestrian]) -> None:
        names = [p.name for p in peds]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise SpawnError(f"env {env_id}: duplicate pedestrian name {twice[0]!r} in the request")
        taken = [n for n in names if n in self.slots]
        if taken:
            raise SpawnError(f"env {env_id}: duplicate name {taken[0]!r}: a pedestrian of that "
                             "name exists")
        if len(peds) > len(self.free):
            raise SpawnError(f"env {env_id}: expected at most {len(self.free)} more pedestrians "
                             f"(the pool holds {self.size}, {len(self.slots)} in use), got "
                             f"{len(peds)}")

    def take(self, ped: Pedestrian, actor: str | None = None) -> int:
        """A free slot for `ped`: one already wearing its actor's skin, else one without a
        skin, else any (lowest first)."""
        order = sorted(self.free)
        slot = next((k for k in order if actor is not None and self.skins.get(k) == actor),
                    next((k for k in order if k not in self.skins), order[0]))
        self.free.remove(slot)
        self.slots[ped.name] = slot
        self.actors[ped.name] = actor
        self.cursor[slot] = 0.0
        self.contacts[slot] = self.rays[slot] = True
        self.last[slot] = np.nan
        self.posed[slot] = False
        return slot

    def slot(self, env_id: int, name: str) -> int:
        if name not in self.slots:
            raise unknown(f"pedestrian in env {env_id}", name, self.slots)
        return self.slots[name]

    def release(self, name: str) -> int:
        slot = self.slots.pop(name)
        self.actors.pop(name, None)
        self.free.append(slot)
        self.contacts[slot] = self.rays[slot] = False
        self.posed[slot] = False
        return slot

    # ---------------------------------------------------------------- ids and flags
    def mocap_ids(self) -> np.ndarray:
        """Mocap ids (pool size,) of the pool's slots, for writing their state directly (an
        env moving many pedestrians per step); empty before the pool exists."""
        if not self.built:
            return np.zeros(0, dtype=np.int64)
        model = self.host.model
        if self._mocap[0] != self.host.version:  # a recompile may renumber mocap bodies
            ids = [model.body_mocapid[model.body(b).id] for b in self.bodies]
            self._mocap = (self.host.version, np.array(ids, dtype=np.int64))
            self._bone_mocap = {}
        return self._mocap[1]

    def _bones(self, slot: int, count: int) -> np.ndarray:
        """Mocap ids of a skinned slot's bones (valid for this compile)."""
        self.mocap_ids()
        if slot not in self._bone_mocap:
            model, body = self.host.compiled, self.bodies[slot]
            self._bone_mocap[slot] = np.array(
                [model.body_mocapid[model.body(bone_name(body, j)).id] for j in range(count)])
        return self._bone_mocap[slot]

    def set_detection(self, slots: np.ndarray, contacts: np.ndarray | None = None,
                                 rays: np.ndarray | None = None) -> None:
        """Whether pool `slots` take part in collision detection (`contacts`) and in ray
        casts (`rays`: a plain capsule in GROUP_STATIC, else in GROUP_VISUAL, which cameras
        still draw; a skinned one in GROUP_ROBOT, else GROUP_HIDDEN). For pedestrians that
        cannot matter before their next move: one far from every robot cannot touch one,
        one beyond every lidar's range cannot be seen. MuJoCo's broadphase then skips their
        bodies and its ray casts their capsules (64 capsules otherwise cost about as much as
        the rest of a small world's step and lidar). Written into the compiled model in
        place (the simulator steps these very models; a layout does not change) and kept
        across recompiles. Spawning turns both on for a slot, deleting turns them off."""
        slots = np.asarray(slots, dtype=np.int64)
        if contacts is not None:
            self.contacts[slots] = contacts
        if rays is not None:
            self.rays[slots] = rays
        self.installed()

    def installed(self) -> None:
        model = self.host.compiled
        if self._bodies[0] is not model:
            bodies = np.array([model.body(b).id for b in self.bodies])
            geoms = model.body_geomadr[bodies]  # each slot's capsule
            self._bodies = (model, bodies, geoms, model.body_contype[bodies].copy(),
                            model.body_conaffinity[bodies].copy())  # its bits as compiled
        _, bodies, geoms, contype, conaffinity = self._bodies
        groups.set_detection(model, bodies, self.contacts, contype, conaffinity)
        kind = self.rays.astype(np.intp)  # _GROUPS' row: seen or not, skinned or not
        if self.skins:
            kind[list(self.skins)] += 2
        model.geom_group[geoms] = _GROUPS[kind]

    # ---------------------------------------------------------------- requests
    def spawn(self, peds: Iterable[Pedestrian]) -> list[int]:
        """Give each pedestrian a pool slot and stand it at its pose; returns the slots.
        The first pedestrian of the env builds the pool (one compile); later ones never
        compile, except the first time a slot wears a given actor's skin."""
        peds = _checked(peds, "spawn")
        self.check_new(self.host.env_id, peds)
        actors = {p.actor: self._actor(p.actor) for p in peds if p.actor is not None}
        for p in peds:
            if p.actor is not None and p.joints is not None:
                joint_rig(actors[p.actor][0])  # a skeleton without a joint table: refused
        if not peds:
            return []
        if not self.built:
            self.host.flush()
            self.host.sync()
            scratch = mujoco.MjSpec()
            self._add_bodies(scratch)
            self.host.check_fragment(scratch, "the pedestrian pool")
            self._add_bodies(self.host.spec)
            self.built = True
            self.host.edited()
            self.host.flush()
        pool = self
        slots = [pool.take(p, _key(p.actor)) for p in peds]
        dress = [(slot, p.actor) for slot, p in zip(slots, peds, strict=True)
                 if p.actor is not None and pool.skins.get(slot) != _key(p.actor)]
        if dress:
            self.host.flush()
            self.host.sync()
            for slot, actor in dress:
                body = pool.bodies[slot]
                if slot in pool.skins:
                    remove_skin(self.host.spec, body)
                add_skin(self.host.spec, body, actors[actor][1], parked(np.array([slot]))[0])
                pool.skins[slot] = _key(actor)  # type: ignore[assignment]
            self.host.edited()
            self.host.flush()  # one compile for the request
        self.installed()
        self._write(slots, *pose_rows(peds), joints=[p.joints for p in peds])
        return slots

    def move(self, peds: Iterable[Pedestrian]) -> None:
        """Teleport pedestrians (their clip restarts)."""
        peds = _checked(peds, "move")
        slots = self._slots_of(peds)
        self._check_rigs(slots, peds)
        self.cursor[slots] = 0.0
        self.last[slots] = np.nan  # no walk between the old pose and the new
        self._write(slots, *pose_rows(peds), joints=[p.joints for p in peds])

    def update(self, peds: Iterable[Pedestrian]) -> None:
        """Continuous pose updates (heading included), e.g. from an outside crowd model; a
        skinned pedestrian moving at WALK_SPEED or more plays its walk clip, the cursor
        advanced by the distance covered over the clip's stride (feet stay planted). One
        whose update carries joint angles (Pedestrian.joints) is posed from them instead
        (arena_gym.people.joint_rig), its clip paused until an update without angles."""
        peds = _checked(peds, "update")
        slots = self._slots_of(peds)
        self._check_rigs(slots, peds)
        self._write(slots, *pose_rows(peds), joints=[p.joints for p in peds])

    def delete(self, names: Iterable[str]) -> list[str]:
        """Return pedestrians' slots to the pool and park their bodies; no compile."""
        names = [names] if isinstance(names, str) else list(names)
        for name in names:
            self.slot(self.host.env_id, name)
        names = list(dict.fromkeys(names))
        if not names:
            return []
        slots = np.array([self.release(n) for n in names])
        self.installed()
        self._write(slots.tolist(), parked(slots),
                                np.tile([1.0, 0, 0, 0], (len(slots), 1)), park=True)
        return names

    def _slots_of(self, peds: list[Pedestrian]) -> list[int]:
        return [self.slot(self.host.env_id, p.name) for p in peds]

    def _check_rigs(self, slots: list[int], peds: list[Pedestrian]) -> None:
        """Refuse joint angles for a skeleton without a joint table, before any write."""
        skins = self.skins
        for key in {skins[s] for s, p in zip(slots, peds, strict=True)
                    if p.joints is not None and s in skins}:
            joint_rig(key)

    def _actor(self, actor: str) -> tuple[str, ActorAsset]:
        path = Path(actor)
        if self.host.path_roots is not None and not inside(path, self.host.path_roots):
            raise SpawnError(f"actor {actor!r}: expected a path inside the allowed roots")
        return str(path.resolve()), load_actor(path)

    def _write(self, slots: list[int], pos: np.ndarray, quat: np.ndarray,
                           park: bool = False,
                           joints: list[Mapping[str, float] | None] | None = None) -> None:
        mocap = self.mocap_ids()[slots]
        data = self.host.data  # synced: the simulator pushes it before the next step
        data.mocap_pos[mocap] = pos
        data.mocap_quat[mocap] = quat
        pool = self
        joints = joints or [None] * len(slots)
        posed: dict[str, list[tuple[int, Mapping[str, float]]]] = {}  # actor -> (row, angles)
        actors: dict[str, ActorAsset] = {}  # load_actor stats its file: once per call
        for row, (slot, p, q) in enumerate(zip(slots, pos, quat, strict=True)):
            if slot not in pool.skins:
                continue  # a plain capsule: nothing to pose, its angles mean nothing
            key, given = pool.skins[slot], joints[row]
            if not park:
                pool.posed[slot] = given is not None
            if not park and given is not None:
                pool.last[slot] = (p[0], p[1], data.time)  # a clip resumes from here
                posed.setdefault(key, []).append((row, given))
                continue
            if key not in actors:
                actors[key] = load_actor(key)
            actor = actors[key]
            bones = self._bones(slot, len(actor.bones))
            if park:
                data.mocap_pos[bones] = p
                continue
            yaw = 2 * np.arctan2(q[3], q[0])
            clip = self._advance_clip(slot, actor, p[0], p[1], data.time)
            data.mocap_pos[bones], data.mocap_quat[bones] = bone_rows(
                (p[0], p[1], yaw), clip, pool.cursor[slot], actor)
        for actor_key, members in posed.items():  # vectorised per actor
            rig = joint_rig(actor_key)
            rows, given = [r for r, _ in members], [g for _, g in members]
            rig.report_missing(set().union(*given))
            poses = np.c_[pos[rows, :2], 2 * np.arctan2(quat[rows, 3], quat[rows, 0])]
            bones = np.array([self._bones(slots[r], len(rig.parents)) for r in rows])
            data.mocap_pos[bones], data.mocap_quat[bones] = world_rows(
                poses, rig.poses(angle_rows(given)))
        mujoco.mj_kinematics(self.host.compiled, data)

    def _advance_clip(self, slot: int, actor: ActorAsset, x: float, y: float, time: float):
        """The clip a skinned slot shows now, its cursor moved on by the distance walked
        since its last pose: the walk clip while walking, else an "idle" clip if the actor
        has one, else the walk clip held where it stopped."""
        pool = self
        clips = actor.clips
        walk = clips.get("walking") or clips.get("walk") or next(iter(clips.values()), None)
        idle = clips.get("idle", walk)
        last = pool.last[slot].copy()
        pool.last[slot] = (x, y, time)
        if walk is None or np.isnan(last).any() or walk.stride <= 0:
            return idle
        moved = float(np.hypot(x - last[0], y - last[1]))
        dt = time - last[2]
        if moved == 0 or (dt > 0 and moved / dt < WALK_SPEED):
            return idle
        pool.cursor[slot] = (pool.cursor[slot] + moved / walk.stride * walk.duration) \
            % walk.duration
        return walk


def _key(actor: str | None) -> str | None:
    return None if actor is None else str(Path(actor).resolve())


def _checked(peds: Iterable[Pedestrian], what: str) -> list[Pedestrian]:
    peds = [peds] if isinstance(peds, Pedestrian) else list(peds)
    for ped in peds:
        if not isinstance(ped, Pedestrian):
            raise SceneError(f"{what}: expected Pedestrian records, got {type(ped).__name__}")
    return peds
