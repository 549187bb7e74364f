"""A scene's pedestrian operations (Scene inherits them): the pool's slots, their poses in
state, which of them collision detection and ray casts consider, and skinned actors.

See arena_gym.scene.pedestrians for the pool and arena_gym.scene.skins for the skins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import mujoco
import numpy as np

from arena_gym.scene import builders
from arena_gym.scene.actors import ActorAsset, load_actor
from arena_gym.scene.body_joints import angle_rows
from arena_gym.scene.errors import SceneError, SpawnError
from arena_gym.scene.joint_rig import joint_rig
from arena_gym.scene.meshes import inside
from arena_gym.scene.names import check_clashes, element_names
from arena_gym.scene.pedestrians import Pedestrian, PedestrianPool, parked, pose_rows
from arena_gym.scene.skins import (
    WALK_SPEED,
    add_skin,
    bone_name,
    bone_rows,
    remove_skin,
    world_rows,
)


class PedestrianOps:
    """Mixed into Scene; uses its spec, model, data, flush and sync."""

    # ---------------------------------------------------------------- ids and flags
    def pedestrian_mocap(self) -> np.ndarray:
        """Mocap ids (pool size,) of the pool's slots, for writing their state directly (an
        env moving many pedestrians per step); empty before the pool exists."""
        if not self.pedestrians.built:
            return np.zeros(0, dtype=np.int64)
        model = self.model
        if self._ped_mocap[0] != self.version:  # a recompile may renumber mocap bodies
            ids = [model.body_mocapid[model.body(b).id] for b in self.pedestrians.bodies]
            self._ped_mocap = (self.version, np.array(ids, dtype=np.int64))
            self._bone_mocap = {}
        return self._ped_mocap[1]

    def _bones(self, slot: int, count: int) -> np.ndarray:
        """Mocap ids of a skinned slot's bones (valid for this compile)."""
        self.pedestrian_mocap()
        if slot not in self._bone_mocap:
            model, body = self._model, self.pedestrians.bodies[slot]
            self._bone_mocap[slot] = np.array(
                [model.body_mocapid[model.body(bone_name(body, j)).id] for j in range(count)])
        return self._bone_mocap[slot]

    def set_pedestrian_detection(self, slots: np.ndarray, contacts: np.ndarray | None = None,
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
            self.pedestrians.contacts[slots] = contacts
        if rays is not None:
            self.pedestrians.rays[slots] = rays
        self._apply_pedestrian_contacts()

    def _apply_pedestrian_contacts(self) -> None:
        model = self._model
        if self._ped_bodies[0] is not model:
            bodies = np.array([model.body(b).id for b in self.pedestrians.bodies])
            geoms = model.body_geomadr[bodies]
            self._ped_bodies = (model, bodies, geoms, model.geom_contype[geoms].copy(),
                                model.geom_conaffinity[geoms].copy())
        _, bodies, geoms, contype, conaffinity = self._ped_bodies
        pool = self.pedestrians
        on, seen = pool.contacts, pool.rays
        skinned = np.zeros(pool.size, dtype=bool)
        skinned[list(pool.skins)] = True
        model.body_contype[bodies] = np.where(on, contype, 0)
        model.body_conaffinity[bodies] = np.where(on, conaffinity, 0)
        model.geom_group[geoms] = np.where(
            skinned, np.where(seen, builders.GROUP_ROBOT, builders.GROUP_HIDDEN),
            np.where(seen, builders.GROUP_STATIC, builders.GROUP_VISUAL))

    # ---------------------------------------------------------------- requests
    def spawn_pedestrians(self, peds: Iterable[Pedestrian]) -> list[int]:
        """Give each pedestrian a pool slot and stand it at its pose; returns the slots.
        The first pedestrian of the env builds the pool (one compile); later ones never
        compile, except the first time a slot wears a given actor's skin."""
        peds = _checked(peds, "spawn_pedestrians")
        self.pedestrians.check_new(self.env_id, peds)
        actors = {p.actor: self._actor(p.actor) for p in peds if p.actor is not None}
        for p in peds:
            if p.actor is not None and p.joints is not None:
                joint_rig(actors[p.actor][0])  # a skeleton without a joint table: refused
        if not peds:
            return []
        if not self.pedestrians.built:
            self.flush()
            self._sync()
            scratch = mujoco.MjSpec()
            PedestrianPool(self.prefix, self.pedestrians.size).build(scratch)
            check_clashes(self.env_id, lambda _: "the pedestrian pool", element_names(scratch),
                          element_names(self.spec), self._owner)
            self.pedestrians.build(self.spec)
            self._dirty = True
            self.flush()
        pool = self.pedestrians
        slots = [pool.take(p, _key(p.actor)) for p in peds]
        dress = [(slot, p.actor) for slot, p in zip(slots, peds, strict=True)
                 if p.actor is not None and pool.skins.get(slot) != _key(p.actor)]
        if dress:
            self.flush()
            self._sync()
            for slot, actor in dress:
                body = pool.bodies[slot]
                if slot in pool.skins:
                    remove_skin(self.spec, body)
                add_skin(self.spec, body, actors[actor][1], parked(np.array([slot]))[0])
                pool.skins[slot] = _key(actor)  # type: ignore[assignment]
            self._dirty = True
            self.flush()  # one compile for the request
        self._apply_pedestrian_contacts()
        self._write_pedestrians(slots, *pose_rows(peds), joints=[p.joints for p in peds])
        return slots

    def move_pedestrians(self, peds: Iterable[Pedestrian]) -> None:
        """Teleport pedestrians (their clip restarts)."""
        peds = _checked(peds, "move_pedestrians")
        slots = self._pedestrian_slots(peds)
        self._check_rigs(slots, peds)
        self.pedestrians.cursor[slots] = 0.0
        self.pedestrians.last[slots] = np.nan  # no walk between the old pose and the new
        self._write_pedestrians(slots, *pose_rows(peds), joints=[p.joints for p in peds])

    def update_pedestrians(self, peds: Iterable[Pedestrian]) -> None:
        """Continuous pose updates (heading included), e.g. from an outside crowd model; a
        skinned pedestrian moving at WALK_SPEED or more plays its walk clip, the cursor
        advanced by the distance covered over the clip's stride (feet stay planted). One
        whose update carries joint angles (Pedestrian.joints) is posed from them instead
        (arena_gym.scene.joint_rig), its clip paused until an update without angles."""
        peds = _checked(peds, "update_pedestrians")
        slots = self._pedestrian_slots(peds)
        self._check_rigs(slots, peds)
        self._write_pedestrians(slots, *pose_rows(peds), joints=[p.joints for p in peds])

    def delete_pedestrians(self, names: Iterable[str]) -> list[str]:
        """Return pedestrians' slots to the pool and park their bodies; no compile."""
        names = [names] if isinstance(names, str) else list(names)
        for name in names:
            self.pedestrians.slot(self.env_id, name)
        names = list(dict.fromkeys(names))
        if not names:
            return []
        slots = np.array([self.pedestrians.release(n) for n in names])
        self._apply_pedestrian_contacts()
        self._write_pedestrians(slots.tolist(), parked(slots),
                                np.tile([1.0, 0, 0, 0], (len(slots), 1)), park=True)
        return names

    def _pedestrian_slots(self, peds: list[Pedestrian]) -> list[int]:
        return [self.pedestrians.slot(self.env_id, p.name) for p in peds]

    def _check_rigs(self, slots: list[int], peds: list[Pedestrian]) -> None:
        """Refuse joint angles for a skeleton without a joint table, before any write."""
        skins = self.pedestrians.skins
        for key in {skins[s] for s, p in zip(slots, peds, strict=True)
                    if p.joints is not None and s in skins}:
            joint_rig(key)

    def _actor(self, actor: str) -> tuple[str, ActorAsset]:
        path = Path(actor)
        if self.path_roots is not None and not inside(path, self.path_roots):
            raise SpawnError(f"actor {actor!r}: expected a path inside the allowed roots")
        return str(path.resolve()), load_actor(path)

    def _write_pedestrians(self, slots: list[int], pos: np.ndarray, quat: np.ndarray,
                           park: bool = False,
                           joints: list[Mapping[str, float] | None] | None = None) -> None:
        mocap = self.pedestrian_mocap()[slots]
        data = self.data  # synced: the simulator pushes it before the next step
        data.mocap_pos[mocap] = pos
        data.mocap_quat[mocap] = quat
        pool = self.pedestrians
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
        mujoco.mj_kinematics(self._model, data)

    def _advance_clip(self, slot: int, actor: ActorAsset, x: float, y: float, time: float):
        """The clip a skinned slot shows now, its cursor moved on by the distance walked
        since its last pose: the walk clip while walking, else an "idle" clip if the actor
        has one, else the walk clip held where it stopped."""
        pool = self.pedestrians
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
