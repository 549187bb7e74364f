"""Walking pedestrians in a simulator: a Crowd's motion written into each env's pedestrian
pool through state (mocap_pos/mocap_quat), never recompiling.

`Walkers` spawns `capacity` pedestrians per env once (`crowd/p<k>`: the pool's first
pedestrians, so the pool's one compile happens here), then each episode places some of them
(`place`) and parks the rest; `step` moves all of them, in all envs, in one vectorised
Crowd step and writes their poses. Obstacles are footprints: the world's walls and statics
(the same in every env) and each env's per-episode boxes (`set_boxes`).

    walkers = Walkers(sim, capacity=8, walls=layout_footprints(layout))
    walkers.place(env, starts, waypoints, modes, rng)
    walkers.step(0.1, robots=robot_xy, robot_radius=0.2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from arena_gym.compiled import kernel
from arena_gym.geometry.footprints import distance_to_boxes
from arena_gym.people.crowd import AgentRanges, Crowd
from arena_gym.people.pedestrians import RADIUS, Pedestrian, parked

NAME = "crowd/p{}"
# m beyond touching distance (or the lidar's range) within which people stay in collision
# detection (ray casts): more than a robot and a person can close in one control step
# (0.05 m + 0.022 m for the reference robot)
CONTACT_MARGIN = 0.5


class Driven(Protocol):
    """What Walkers need of the simulator that steps their envs (arena_gym.sim.Simulator):
    its store's scenes, where their state lives, and when their layout changes."""

    store: Any  # arena_gym.scene.SceneStore

    @property
    def layout_version(self) -> tuple[int, ...]: ...
    def state(self, env_id: int | None, field: str) -> np.ndarray | None: ...
    def scatter(self, field: str, cols: np.ndarray, values: np.ndarray) -> None: ...


class Walkers:
    """`capacity` pedestrians in every env of `sim`, moved by one Crowd."""

    def __init__(self, sim: Driven, capacity: int, walls: np.ndarray,
                 model: str = "social_force", ranges: AgentRanges | None = None,
                 max_boxes: int = 0, lidar_range: float = np.inf) -> None:
        self.sim, self.store = sim, sim.store
        self.lidar_range = lidar_range  # m: people beyond it (and a margin) skip ray casts
        n = self.store.num_envs
        self.crowd = Crowd(n, capacity, model=model, ranges=ranges or AgentRanges())
        walls = np.asarray(walls, dtype=float).reshape(-1, 5)
        self.boxes = np.zeros((n, len(walls) + max_boxes, 5))
        self.boxes[:, : len(walls)] = walls
        self.box_mask = np.zeros((n, len(walls) + max_boxes), dtype=bool)
        self.box_mask[:, : len(walls)] = True
        self.num_walls = len(walls)
        slots = self.store.spawn_pedestrians(
            [Pedestrian(f"env_{e}/" + NAME.format(k), parked(np.array([k]))[0])
             for e in range(n) for k in range(capacity)])
        self.slots = np.array([slots[e] for e in range(n)], dtype=np.int64).reshape(n, capacity)
        self._version: tuple[int, ...] | None = None
        self._contacts = np.ones((n, capacity), dtype=bool)  # spawned: detected
        self._rays = np.ones((n, capacity), dtype=bool)
        self._changed = np.zeros(n, dtype=bool)  # poses_and_reach's: whose flags changed
        self._detect(np.zeros((n, capacity), dtype=bool), np.zeros((n, capacity), dtype=bool))
        self._parked = parked(self.slots.ravel()).reshape(n, capacity, 3)
        self._poses = (np.zeros((n, capacity, 3)), np.zeros((n, capacity, 4)))  # written
        self._all = np.arange(capacity, dtype=np.int64)  # the scratch poses' rows
        # poses_and_reach's compiled function, looked up once per (layout version, into the
        # scratch poses or not): it is given these arrays, the crowd's and the state's of that
        # layout, and arrays made alike at every step (numba's typing of its 15 arguments at
        # each call costs more than one env's poses)
        self._reach: tuple[tuple, Any] = ((), None)

    def _views(self) -> None:
        if self._version == self.sim.layout_version:
            return
        n = self.store.num_envs
        self._mocap = [self.store.scene(e).pedestrians.mocap_ids()[self.slots[e]] for e in range(n)]
        self._pos = [self.sim.state(e, "mocap_pos") for e in range(n)]
        self._quat = [self.sim.state(e, "mocap_quat") for e in range(n)]
        # the usual layout: every env's pool on the same mocap rows, written in one go
        same = all(np.array_equal(m, self._mocap[0]) for m in self._mocap)
        self._shared = self._mocap[0] if same else None
        self._version = self.sim.layout_version

    def place(self, env: int, starts: np.ndarray, waypoints: Sequence[np.ndarray],
              modes: Sequence[int] | np.ndarray, rng: np.random.Generator,
              vmax: Sequence[float | None] | None = None) -> None:
        """Env `env`'s next walk: the first len(starts) pedestrians at starts (x, y, yaw) with
        their waypoints (Crowd.place); the others parked."""
        self.crowd.place(env, starts, waypoints, modes, rng, vmax)
        self.write([env])
        contacts, rays = self._contacts.copy(), self._rays.copy()
        contacts[env] = rays[env] = self.crowd.active[env]  # until a step knows the robot
        self._detect(contacts, rays)

    def set_boxes(self, env: int, footprints: np.ndarray) -> None:
        """Env `env`'s movable obstacles (k, 5) for this episode (at most max_boxes)."""
        footprints = np.asarray(footprints, dtype=float).reshape(-1, 5)
        extra = self.boxes.shape[1] - self.num_walls
        if len(footprints) > extra:
            raise ValueError(f"env {env}: expected at most {extra} boxes, got {len(footprints)}")
        w = self.num_walls
        self.box_mask[env, w:] = False
        self.boxes[env, w : w + len(footprints)] = footprints
        self.box_mask[env, w : w + len(footprints)] = True

    def step(self, dt: float, robots: np.ndarray | None = None, robot_radius: float = 0.0,
             ) -> None:
        """Move every env's pedestrians by `dt` and write their poses. With `robots` (E, 2),
        only people within reach of their env's robot take part in collision detection
        until the next step (Scene.set_pedestrian_contacts); the rest cannot touch it."""
        if robots is not None:  # (E, 2) as the crowd's step and the poses' kernel take it
            robots = np.ascontiguousarray(np.asarray(robots)[:, :2], dtype=float)
        self.crowd.step(dt, self.boxes, self.box_mask, robots, robot_radius)
        if robots is None:
            self.write()
            return
        self._views()
        c = self.crowd
        contacts, rays = np.empty_like(self._contacts), np.empty_like(self._rays)
        # the usual: every env's pool on the same mocap rows of one batch group, written
        # in place; else into the scratch poses, then scattered
        pos = self.sim.state(None, "mocap_pos") if self._shared is not None else None
        quat = self.sim.state(None, "mocap_quat") if pos is not None else None
        rows = self._shared if quat is not None else self._all
        args = (c.pos, c.yaw, c.active, self._parked, robots,
                float(robot_radius + RADIUS + CONTACT_MARGIN),
                float(self.lidar_range + RADIUS + CONTACT_MARGIN),
                *((pos, quat) if quat is not None else self._poses), rows, contacts, rays,
                self._contacts, self._rays, self._changed)
        key = (self._version, quat is None)
        if self._reach[0] != key:
            self._reach = (key, poses_and_reach.entry(*args))
        changed = self._reach[1](*args)
        if quat is None:
            self._scatter(*self._poses, None)
        if changed:
            self._detect(contacts, rays, self._changed)
        else:
            self._contacts, self._rays = contacts, rays

    def _detect(self, contacts: np.ndarray, rays: np.ndarray,
                changed: np.ndarray | None = None) -> None:
        """Collision detection and ray casts for the (E, P) pedestrians where each is True
        (PedestrianPool.set_detection), written in the envs whose flags changed (`changed`
        (E,) where known)."""
        if changed is None:
            changed = (contacts != self._contacts).any(axis=1) | (rays != self._rays).any(
                axis=1)
        for e in np.flatnonzero(changed).tolist():
            self.store.scene(e).pedestrians.set_detection(self.slots[e], contacts[e], rays[e])
        self._contacts, self._rays = contacts, rays

    def write(self, envs: Sequence[int] | None = None) -> None:
        """Pedestrians' poses into the envs' state: active ones where the crowd has them
        (standing on the ground, facing their heading), the others parked."""
        self._views()
        c = self.crowd
        pos, quat = self._poses
        poses_and_reach(c.pos, c.yaw, c.active, self._parked, np.zeros((0, 2)), 0.0, 0.0,
                        pos, quat, self._all, self._contacts, self._rays, self._contacts,
                        self._rays, self._changed)
        self._scatter(pos, quat, envs)

    def _scatter(self, pos: np.ndarray, quat: np.ndarray, envs: Sequence[int] | None) -> None:
        if envs is None and self._shared is not None:
            self.sim.scatter("mocap_pos", self._shared, pos)
            self.sim.scatter("mocap_quat", self._shared, quat)
            return
        for e in range(self.store.num_envs) if envs is None else envs:
            self._pos[e][self._mocap[e]] = pos[e]
            self._quat[e][self._mocap[e]] = quat[e]

    def distances(self, points: np.ndarray) -> np.ndarray:
        """(E, P) distance from each env's point (E, 2) to its pedestrians' centres (inf for
        those not walking)."""
        d = np.hypot(*(self.crowd.pos - points[:, None, :2]).transpose(2, 0, 1))
        return np.where(self.crowd.active, d, np.inf)


@kernel
def poses_and_reach(xy, yaw, active, parked_pos, robots, contact_reach, ray_reach, pos, quat,
                    rows, contacts, rays, was_contacts, was_rays, changed):  # pragma: no cover
    """Each env's pedestrians' mocap poses, pedestrian p's into pos[e, rows[p]] and
    quat[e, rows[p]]: an active one standing at xy (z 0) facing its yaw, the others at
    their parked rows; with robots (E, 2) given (else none),
    whether each is within `contact_reach` of its env's robot (collision detection) and
    within `ray_reach` (ray casts), an inactive one neither. Each env's flags that differ
    from was_contacts / was_rays set changed[e]; returns how many."""
    count = 0
    for e in range(xy.shape[0]):
        differs = False
        for p in range(xy.shape[1]):
            r = rows[p]
            if active[e, p]:
                pos[e, r, 0], pos[e, r, 1], pos[e, r, 2] = xy[e, p, 0], xy[e, p, 1], 0.0
            else:
                pos[e, r, 0], pos[e, r, 1] = parked_pos[e, p, 0], parked_pos[e, p, 1]
                pos[e, r, 2] = parked_pos[e, p, 2]
            half = yaw[e, p] / 2
            quat[e, r, 0], quat[e, r, 1] = math.cos(half), 0.0
            quat[e, r, 2], quat[e, r, 3] = 0.0, math.sin(half)
            if robots.shape[0]:
                d = math.hypot(xy[e, p, 0] - robots[e, 0], xy[e, p, 1] - robots[e, 1])
                near = active[e, p] and d < contact_reach
                seen = active[e, p] and d < ray_reach
                contacts[e, p], rays[e, p] = near, seen
                differs = differs or near != was_contacts[e, p] or seen != was_rays[e, p]
        changed[e] = differs
        count += differs
    return count


def spaced(points: np.ndarray, gap: float, count: int) -> np.ndarray:
    """Indices of up to `count` of `points` (n, 2), greedily in order: each at least
    `gap` from every one taken before it."""
    taken = np.empty(min(count, len(points)), dtype=np.int64)
    return taken[:take_spaced(np.ascontiguousarray(points, dtype=np.float64), float(gap),
                              taken)]


@kernel
def take_spaced(points, gap, taken):  # pragma: no cover - compiled
    """spaced's greedy pass: the indices into `taken` (as many as it holds at most);
    returns how many."""
    k = 0
    for i in range(points.shape[0]):
        if k == taken.shape[0]:
            break
        apart = True
        for j in range(k):
            q = taken[j]
            if np.hypot(points[i, 0] - points[q, 0], points[i, 1] - points[q, 1]) < gap:
                apart = False
                break
        if apart:
            taken[k] = i
            k += 1
    return k


WALK_POINTS = 2  # waypoints per sampled walk, visited in a loop
CANDIDATES = 256
ROBOT_KEEP = 1.0  # m: no one starts this close to the robot's start (centres)


def sample_walks(rng: np.random.Generator, layout, count: int, boxes: np.ndarray,
                 robot: tuple[float, float], robot_radius: float
                 ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Up to `count` walkers for an episode: starts (k, 3) on free ground (clear of walls,
    the episode's boxes (n, 5), each other and the robot's start) and WALK_POINTS free
    waypoints each, walked in a loop. Fewer where the room is too full."""
    lo, hi = layout.bounds()
    keep = RADIUS + 0.05

    def free(points: np.ndarray) -> np.ndarray:
        return layout.free(points, keep) & (distance_to_boxes(points, boxes) >= keep)

    points = rng.uniform(lo, hi, size=(CANDIDATES, 2))
    ok = free(points) & (np.hypot(*(points - np.asarray(robot)).T) >= ROBOT_KEEP + robot_radius)
    usable = points[ok]
    starts = usable[spaced(usable, 2 * RADIUS + 0.1, count)]  # apart from each other
    goals = rng.uniform(lo, hi, size=(CANDIDATES, 2))
    goals = goals[free(goals)]
    if len(goals) == 0:
        goals = np.array(starts).reshape(-1, 2)
    picks = rng.integers(0, len(goals), size=(len(starts), WALK_POINTS)) if len(goals) else \
        np.zeros((0, WALK_POINTS), dtype=int)
    yaw = rng.uniform(-np.pi, np.pi, size=len(starts))
    out = np.column_stack([np.array(starts).reshape(-1, 2), yaw])
    return out, [goals[row] for row in picks]
