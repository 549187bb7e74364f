"""Pedestrians of one env: a fixed pool of mocap capsule bodies, taken and returned by slot.

The first pedestrian of an env adds its pool's mocap bodies (POOL_SIZE, 64, unless the store
says otherwise), parked below the ground, and the scene compiles once for them; from then
on spawning, moving and deleting pedestrians only write `mocap_pos`/`mocap_quat` (state),
so pedestrians never recompile and every env keeps one model layout (envs with pools step
in one Batch). A slot's body is named `<env prefix>pedestrians/slot_<k>`; its capsule
stands on the ground (GROUP_STATIC: lidars see it at leg height, cameras draw it) and
collides like an obstacle; the contact rule classes it "pedestrian"
(arena_gym.sensors.contact).

    store.spawn_pedestrians([Pedestrian("env_0/alice", pose=(1.0, 2.0, 0.0))])
    store.update_pedestrians([Pedestrian("env_0/alice", pose=(1.1, 2.0, 0.0))])
    store.delete_pedestrians(["env_0/alice"])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.scene import builders
from arena_gym.scene.body_joints import checked_joints
from arena_gym.scene.errors import SceneError, SpawnError, unknown
from arena_gym.scene.records import _floats
from arena_gym.scene.rotations import yaw_quat

# pedestrians an env can hold at once. Each pooled body costs MuJoCo time at every physics
# step, walking or parked (about 0.1 us: 64 add ~6 us to a small robot world's 7 us step),
# so a store can size its pools (SceneStore(pedestrian_pool=...)) to what its envs use.
POOL_SIZE = 64
RADIUS = 0.25  # m, the capsule's radius (shoulder half-width)
HEIGHT = 1.75  # m, the capsule's full height, standing on z = 0
PARKED_Z = -10.0  # m: free slots wait below the ground (and below parked pool boxes)
PARKED_STEP = 2.0  # m between parked capsules (> HEIGHT: they never touch)
POOL_BODY = "pedestrians/slot_{}"


@dataclass(frozen=True)
class Pedestrian:
    """A pedestrian request: `name` (an `env_<id>/` prefix names its env when the request
    carries no env id), `pose` (x, y, yaw; yaw is the heading), optionally the actor it
    wears (an SDF path with a skinned mesh: arena_gym.scene.skins) and, for such an actor,
    `joints`: ROS4HRI joint angles (name -> rad, arena_gym.scene.body_joints), as Arena's
    task generator sends them. A request with joints poses the skeleton from them; one
    without plays the actor's clips again.

    >>> Pedestrian("env_2/visitor", pose=(1.0, -0.5, 1.57))
    >>> Pedestrian("env_0/w", pose=(0.0, 0.0, 0.0), actor=sdf, joints={"l_knee": -1.2})
    """

    name: str
    pose: tuple[float, float, float] = (0.0, 0.0, 0.0)
    actor: str | None = None
    joints: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or self.name.endswith("/"):
            raise SceneError(f"Pedestrian.name: expected a non-empty name not ending in '/', "
                             f"got {self.name!r}")
        object.__setattr__(self, "pose", _floats(f"Pedestrian {self.name!r} pose", self.pose, 3))
        object.__setattr__(self, "joints",
                           checked_joints(f"Pedestrian {self.name!r}", self.joints))


def split_env(name: str) -> tuple[int | None, str]:
    """(env id, rest) of an `env_<id>/rest` name; (None, name) without such a prefix."""
    head, sep, rest = name.partition("/")
    if sep and head.startswith("env_") and head[4:].isdigit() and rest:
        return int(head[4:]), rest
    return None, name


class PedestrianPool:
    """The slots of one env's pool: which pedestrian holds which mocap body."""

    def __init__(self, prefix: str, size: int = POOL_SIZE) -> None:
        self.prefix, self.size = prefix, size
        self.built = False
        self.slots: dict[str, int] = {}  # pedestrian name -> slot
        self.actors: dict[str, str | None] = {}
        self.free: list[int] = list(range(size - 1, -1, -1))  # pop() takes slot 0 first
        self.cursor = np.zeros(size)  # clip cursor per slot (restarted by a teleport)
        # slots in collision detection: a taken slot is, a free one is not (see Scene.
        # set_pedestrian_contacts); MuJoCo's broadphase then skips the others entirely
        self.contacts = np.zeros(size, dtype=bool)
        # slots lidars see (GROUP_STATIC); the others sit in GROUP_VISUAL, which cameras
        # draw and rays skip (for people beyond every lidar's range)
        self.rays = np.zeros(size, dtype=bool)
        self.skins: dict[int, str] = {}  # slot -> the actor (SDF path) whose skin it wears
        self.last = np.full((size, 3), np.nan)  # x, y, sim time of each slot's last pose
        # skinned slots posed from joint angles (their last request carried some): the
        # clip is paused until a request without angles
        self.posed = np.zeros(size, dtype=bool)

    @property
    def bodies(self) -> list[str]:
        """Full body names of every slot, in slot order."""
        return [self.prefix + POOL_BODY.format(k) for k in range(self.size)]

    def build(self, spec: mujoco.MjSpec) -> None:
        """Add the pool's bodies to the env's spec (once): mocap capsules, parked."""
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
                group=builders.GROUP_STATIC,
                conaffinity=builders.WORLD_CONAFFINITY,
            )
        self.built = True

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


def pose_rows(peds: list[Pedestrian]) -> tuple[np.ndarray, np.ndarray]:
    """mocap_pos (n, 3) and mocap_quat (n, 4) rows of pedestrians standing on the ground."""
    pos = np.array([(p.pose[0], p.pose[1], 0.0) for p in peds]).reshape(-1, 3)
    quat = np.array([yaw_quat(p.pose[2]) for p in peds]).reshape(-1, 4)
    return pos, quat


def parked(slots: np.ndarray) -> np.ndarray:
    """mocap_pos rows of free slots: one below the other, so no two parked capsules touch."""
    slots = np.asarray(slots, dtype=float)
    return np.column_stack([np.zeros_like(slots), np.zeros_like(slots),
                            PARKED_Z - PARKED_STEP * slots])

