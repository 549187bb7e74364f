"""Episode sampling: which pool obstacles stand where, and the robot's start and goal.

Obstacles come from a fixed pool of movable boxes or models per env (the same in every env,
so that all envs keep one model layout and step in one batch); an episode moves some of
them into the world and parks the rest out of sight, without recompiling. Sampling sees a
model as its footprint box.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from arena_gym.assets.obstacle_models import ObstacleModel
from arena_gym.geometry.arrays import hypot, xp
from arena_gym.geometry.footprints import distance_to_boxes
from arena_gym.geometry.rotations import yaw_quat
from arena_gym.scene.requests import Prim

POOL_SEED = 20261130  # pool sizes are part of the world, not of an episode's randomness
PARKED_Z = -5.0  # m: parked pool boxes wait under the ground plane
CANDIDATES = 64  # points tried per draw of start or goal
ATTEMPTS = 40


class NoRoomError(ValueError):
    """A world with no room for an episode: no start and goal where the robot fits (the
    message names the world)."""


def where(layout: object) -> str:
    """How a message names a layout's world: its file, else "the world"."""
    source = getattr(layout, "source", None)
    return f"world {str(source)!r}" if source else "the world"


def no_room(layout: object, what: str) -> NoRoomError:
    """A NoRoomError for `layout` saying `what` was not found; a world with doors or
    elevators says that their sweeps are kept clear."""
    kept = (" (no start or goal lies where its doors and elevators move)"
            if getattr(layout, "mechanisms", None) else "")
    return NoRoomError(f"{where(layout)}: {what}{kept}")


class Layout(Protocol):
    """What episode sampling asks of a world: its bounds and whether points are free with a given
    clearance."""

    def bounds(self) -> tuple[np.ndarray, np.ndarray]: ...
    def free(self, points: np.ndarray, clearance: float) -> np.ndarray: ...


@dataclass(frozen=True)
class ObstaclePool:
    """The movable obstacles every env holds: boxes of `sizes`, or models (`models[j]`)
    whose footprint boxes are `sizes` (centred `offsets` from the model's origin)."""

    sizes: np.ndarray  # (P, 3) full extents
    models: tuple[ObstacleModel, ...] = ()  # per slot, or () for boxes
    bbox: bool = False  # models as their boxes (optim.obstacles: bbox)

    @classmethod
    def make(cls, count: int, size_range: tuple[float, float],
             models: Sequence[ObstacleModel] = (), bbox: bool = False) -> ObstaclePool:
        """`count` boxes with sizes drawn from `size_range`, or `count` models drawn from
        `models` (the same draw in every env and run: POOL_SEED)."""
        rng = np.random.default_rng(POOL_SEED)
        if not models:
            return cls(rng.uniform(size_range[0], size_range[1], size=(count, 3)))
        drawn = tuple(models[i] for i in rng.integers(0, len(models), size=count))
        return cls(np.array([m.box.size for m in drawn], dtype=float), drawn, bbox)

    @property
    def names(self) -> list[str]:
        if self.models:
            return [f"pool/{m.name or 'model'}_{j}" for j, m in enumerate(self.models)]
        return [f"pool/box_{j}" for j in range(len(self.sizes))]

    @property
    def offsets(self) -> np.ndarray:
        """(P, 2): each footprint's centre from its body's origin, in the body frame."""
        if not self.models:
            return np.zeros((len(self.sizes), 2))
        return np.array([m.box.offset for m in self.models], dtype=float)

    def placed_z(self) -> np.ndarray:
        """(P,): a placed body's height: a box's centre, a model's origin on the floor."""
        if self.models and not self.bbox:
            return np.zeros(len(self.sizes))
        return self.sizes[:, 2] / 2

    def prims(self) -> list[Prim]:
        if self.models:
            parked = [Prim.of_model(m, name, movable=True, bbox=self.bbox)
                      for name, m in zip(self.names, self.models, strict=True)]
            return [replace(p, pose=(0.0, 0.0, PARKED_Z, 0.0)) for p in parked]
        return [
            Prim(name, pose=(0.0, 0.0, PARKED_Z, 0.0), scale=tuple(size), movable=True)
            for name, size in zip(self.names, self.sizes, strict=True)
        ]


@dataclass(frozen=True)
class Episode:
    """One sampled episode of one env: the robot's start, the goal and the placed pool boxes."""

    start: tuple[float, float, float]  # x, y, yaw
    goal: tuple[float, float]
    boxes: np.ndarray  # (k, 4): pool index, x, y, yaw

    def footprints(self, pool: ObstaclePool) -> np.ndarray:
        """(k, 5): x, y, yaw, sx, sy of the placed boxes."""
        idx = self.boxes[:, 0].astype(int)
        return np.column_stack([self.boxes[:, 1:4], pool.sizes[idx, :2]])


GOAL_MARGIN = 0.05  # m beyond the robot's radius that a goal keeps from walls and boxes


def start_free(layout: Layout, points: Any, boxes: Any, placed: Any, radius: float,
               clearance: float) -> Any:
    """Whether the robot may start at each point (P, 2): `clearance` around its footprint
    (radius) from the layout's walls and the boxes (B, 5) that `placed` keeps (None: all).
    numpy or JAX arrays (the MJX backend samples its episodes with it)."""
    keep = radius + clearance
    return layout.free(points, keep) & (distance_to_boxes(points, boxes, placed) >= keep)


def goal_free(layout: Layout, points: Any, boxes: Any, placed: Any, radius: float,
              start: Any, min_distance: float) -> Any:
    """Whether each point (P, 2) may be the goal of an episode from `start` (2,): the robot
    fits there (GOAL_MARGIN around its footprint) and it is `min_distance` from the start."""
    fit = radius + GOAL_MARGIN
    far = hypot(points[:, 0] - start[0], points[:, 1] - start[1]) >= min_distance
    return layout.free(points, fit) & (distance_to_boxes(points, boxes, placed) >= fit) & far


def placement(start: Any, boxes: Any, offsets: Any, placed_z: Any, spawn_z: float
              ) -> tuple[Any, Any, Any]:
    """Where an episode puts things: the robot's free joint (7,) at start (x, y, yaw) and
    spawn_z, and each pool body's position (k, 3) and quaternion (k, 4) for its footprint at
    boxes (k, 3: x, y, yaw of the footprint's centre, which sits `offsets` (k, 2) from the
    body's origin in its frame; the body at height placed_z (k,)). numpy or JAX arrays."""
    space = xp(boxes)
    robot = space.concatenate([space.stack([start[0], start[1], spawn_z]), yaw_quat(start[2])])
    c, s = space.cos(boxes[:, 2]), space.sin(boxes[:, 2])
    ox, oy = offsets[:, 0], offsets[:, 1]
    pos = space.stack([boxes[:, 0] - (c * ox - s * oy), boxes[:, 1] - (s * ox + c * oy),
                       placed_z], axis=1)
    return robot, pos, yaw_quat(boxes[:, 2])


def _pick(rng: np.random.Generator, layout: Layout, ok) -> np.ndarray | None:
    lo, hi = layout.bounds()
    points = rng.uniform(lo, hi, size=(CANDIDATES, 2))
    good = np.flatnonzero(ok(points))
    return points[good[0]] if len(good) else None


def sample_episode(
    rng: np.random.Generator,
    layout: Layout,
    pool: ObstaclePool,
    count: tuple[int, int],
    radius: float,
    start_clearance: float,
    min_distance: float,
) -> Episode:
    """Boxes, then a start with `start_clearance` around the robot's footprint, then a goal
    at least `min_distance` away where the robot fits. Fewer boxes if the room is too full."""
    k = int(rng.integers(count[0], count[1] + 1))
    lo, hi = layout.bounds()
    for attempt in range(ATTEMPTS):
        if attempt and attempt % 10 == 0 and k > 0:
            k -= 1
        idx = rng.choice(len(pool.sizes), size=k, replace=False)
        xy = rng.uniform(lo, hi, size=(k, 2))
        yaw = rng.uniform(0.0, math.pi, size=k)
        boxes = np.column_stack([idx, xy, yaw]).reshape(k, 4)
        inside = layout.free(xy, 0.0) if k else np.zeros(0, bool)
        boxes = boxes[inside]
        foot = np.column_stack([boxes[:, 1:4], pool.sizes[boxes[:, 0].astype(int), :2]])
        start = _pick(rng, layout, lambda p, foot=foot: start_free(
            layout, p, foot, None, radius, start_clearance))
        if start is None:
            continue
        goal = _pick(rng, layout, lambda p, foot=foot, start=start: goal_free(
            layout, p, foot, None, radius, start, min_distance))
        if goal is None:
            continue
        yaw0 = float(rng.uniform(-math.pi, math.pi))
        return Episode((float(start[0]), float(start[1]), yaw0),
                       (float(goal[0]), float(goal[1])), boxes)
    raise no_room(layout, f"no collision-free start and goal {min_distance} m apart after "
                  f"{ATTEMPTS} attempts; expected a world with more free space or fewer "
                  "obstacles")


@dataclass(frozen=True)
class EpisodeSampler:
    """Draws each env's next episode: a scenario's fixed start and goal (no pool boxes), else
    a random one in the layout with the curriculum's obstacle count."""

    layout: Layout
    pool: ObstaclePool
    radius: float  # the robot's footprint
    start_clearance: float
    min_distance: float  # between start and goal

    def __call__(self, rng: np.random.Generator, obstacles: tuple[int, int]) -> Episode:
        task = getattr(self.layout, "task", None)
        if task is not None:
            start, goal = task
            return Episode(start, goal, np.zeros((0, 4)))
        return sample_episode(rng, self.layout, self.pool, obstacles, self.radius,
                              self.start_clearance, self.min_distance)
