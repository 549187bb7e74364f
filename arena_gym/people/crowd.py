"""Pedestrian motion for all pedestrians of all envs at once: (E envs, P agents) arrays.

Two models, as Arena's pedsim offers them:
- "waypoints": walk straight at the agent's `vmax` to its current waypoint; on arrival, the
  next one. `mode` LOOP starts over after the last waypoint, PING_PONG walks the list back.
- "social_force" (Helbing & Molnar 1995): the velocity relaxes toward `vmax` along the way
  to the current waypoint (time `TAU`), pushed by exponential repulsions from the other
  pedestrians of the env (anisotropic: what lies ahead weighs more), from the nearest
  obstacle (walls and boxes, as footprints) and from the robot; speed is capped at `vmax`.
  Each agent scales the four forces by its own factors (Arena's force_factor_desired,
  _social, _obstacle, _robot), drawn per agent from ranges like `vmax`.
Each step ends with constraints: overlapping agents are pushed apart (social force model),
then anyone closer than its radius to an obstacle is pushed back out along the obstacle's
normal (both models). A step
moves an agent at most `vmax * dt`, less than its radius (checked), so no agent's centre ever
enters a wall and the push-out always returns it to the side it came from: nobody walks
through walls, however the forces add up.

Obstacles are footprints (E, B, 5: x, y, yaw, sx, sy full extents), with a mask (E, B) of
those present (arena_gym.geometry.footprints' convention).

The step is one compiled loop over envs and agents (arena_gym.people.crowd_step, compiled on
first use and cached on disk): all pairs of an env and all boxes, every step.

    crowd = Crowd(num_envs=16, capacity=8, model="social_force")
    crowd.place(env, starts, waypoints, modes, rng)
    crowd.step(0.1, boxes, box_mask, robots=robot_xy, robot_radius=0.2)
    crowd.pos, crowd.yaw
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from arena_gym.geometry.footprints import BoxFrames
from arena_gym.people import crowd_step
from arena_gym.people.pedestrians import RADIUS

LOOP, PING_PONG = 0, 1
MODELS = ("waypoints", "social_force")
TAU = 0.5  # s, relaxation time of the desired velocity
SOCIAL = (2.1, 0.2)  # (A m/s^2, B m) between pedestrians: Helbing & Molnar's A, a shorter B
ANISOTROPY = 0.35  # weight of what lies behind (1 = isotropic)
OBSTACLE = (2.0, 0.1)  # (A, B): repulsion from the nearest wall or box
ROBOT = (4.0, 0.3)  # (A, B): repulsion from the robot
ARRIVAL = 0.3  # m: a waypoint within this distance counts as reached (social force)
CONSTRAINT_ITERATIONS = 4
SLIDE = 0.3  # m: within this gap of an obstacle, walking into it turns along it
SKIN = 1e-3  # m kept between agents pushed apart
FADE = 10  # pairs farther apart than 2 r + FADE * B push each other by < 5e-5 A: skipped
# the kernel's model constants, in crowd_step.step's order
_PARAMS = (TAU, *SOCIAL, ANISOTROPY, *OBSTACLE, *ROBOT, SLIDE, float(FADE))


@dataclass(frozen=True)
class AgentRanges:
    """Per-agent parameters are drawn uniformly from these (min, max) ranges, as Arena's
    pedsim config gives them (VMAX 0.3-0.5 m/s)."""

    vmax: tuple[float, float] = (0.3, 0.5)  # m/s
    desired: tuple[float, float] = (1.0, 1.0)  # force factors
    social: tuple[float, float] = (1.0, 1.0)
    obstacle: tuple[float, float] = (1.0, 1.0)
    robot: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        for name in ("vmax", "desired", "social", "obstacle", "robot"):
            lo, hi = getattr(self, name)
            if not 0 <= lo <= hi:
                raise ValueError(f"AgentRanges.{name}: expected 0 <= min <= max, got {(lo, hi)}")


class Crowd:
    """Pedestrians of `num_envs` envs, up to `capacity` per env; see the module docstring."""

    def __init__(self, num_envs: int, capacity: int, model: str = "social_force",
                 ranges: AgentRanges = AgentRanges(), radius: float = RADIUS,
                 max_waypoints: int = 32) -> None:
        if model not in MODELS:
            raise ValueError(f"crowd model: expected one of {MODELS}, got {model!r}")
        self.model, self.ranges, self.radius = model, ranges, radius
        shape = (num_envs, capacity)
        self.pos = np.zeros((*shape, 2))
        self.vel = np.zeros((*shape, 2))
        self.yaw = np.zeros(shape)
        self.active = np.zeros(shape, dtype=bool)
        self.waypoints = np.zeros((*shape, max_waypoints, 2))
        self.count = np.ones(shape, dtype=np.int64)  # waypoints per agent
        self.target = np.zeros(shape, dtype=np.int64)  # index of the current waypoint
        self.direction = np.ones(shape, dtype=np.int64)  # +1 / -1 along the list (ping-pong)
        self.mode = np.zeros(shape, dtype=np.int64)
        self.vmax = np.zeros(shape)
        self.factors = np.zeros((4, *shape))  # desired, social, obstacle, robot
        self.reached = np.zeros(shape, dtype=np.int64)  # waypoints reached so far
        self.separations = 0  # constraint rounds that found agents overlapping
        self._no_boxes = (np.zeros((num_envs, 0, 5)), np.zeros((num_envs, 0), dtype=bool))
        self._no_robots = np.zeros((num_envs, 2))
        # flat index of each agent's first waypoint in waypoints.reshape(-1, 2)
        self._first_waypoint = np.arange(num_envs * capacity).reshape(shape) * max_waypoints
        # (shape, crowd_step.Scratch, the kernel's compiled entry) of the last step: the step's
        # argument types never change (checked or made so in `step`), so numba's typing of
        # its 26 arguments at every call is done once
        self._scratch: tuple | None = None

    @property
    def num_envs(self) -> int:
        return self.pos.shape[0]

    @property
    def capacity(self) -> int:
        return self.pos.shape[1]

    def place(self, env: int, starts: np.ndarray, waypoints: Sequence[np.ndarray],
              modes: Sequence[int] | np.ndarray, rng: np.random.Generator,
              vmax: Sequence[float | None] | None = None) -> None:
        """Start env `env`'s first k = len(starts) agents at starts (k, 3: x, y, yaw) with their
        waypoint lists (each (w, 2), w >= 1; an agent without waypoints walks to its start);
        the others leave. Parameters are drawn from `rng`; a given `vmax` overrides."""
        starts = np.asarray(starts, dtype=float).reshape(-1, 3)
        k = len(starts)
        if k > self.capacity:
            raise ValueError(f"env {env}: expected at most {self.capacity} pedestrians, got {k}")
        if len(waypoints) != k or len(modes) != k:
            raise ValueError(f"env {env}: expected {k} waypoint lists and modes, got "
                             f"{len(waypoints)} and {len(modes)}")
        self.active[env] = False
        self.active[env, :k] = True
        self.pos[env, :k] = starts[:, :2]
        self.yaw[env, :k] = starts[:, 2]
        self.vel[env] = 0.0
        self.target[env], self.direction[env], self.reached[env] = 0, 1, 0
        for p, points in enumerate(waypoints):
            points = np.asarray(points, dtype=float).reshape(-1, 2)
            if len(points) == 0:
                points = starts[p : p + 1, :2]
            if len(points) > self.waypoints.shape[2]:
                raise ValueError(f"env {env}: pedestrian {p}: expected at most "
                                 f"{self.waypoints.shape[2]} waypoints, got {len(points)}")
            self.waypoints[env, p, : len(points)] = points
            self.count[env, p] = len(points)
        modes = np.asarray(modes, dtype=np.int64)
        if not np.isin(modes, (LOOP, PING_PONG)).all():
            raise ValueError(f"env {env}: expected waypoint modes {LOOP} (loop) or {PING_PONG} "
                             f"(ping-pong), got {modes.tolist()}")
        self.mode[env, :k] = modes
        r = self.ranges
        self.vmax[env, :k] = rng.uniform(*r.vmax, size=k)
        for i, span in enumerate((r.desired, r.social, r.obstacle, r.robot)):
            self.factors[i, env, :k] = rng.uniform(*span, size=k)
        if vmax is not None:
            given = np.array([np.nan if v is None else v for v in vmax], dtype=float)
            self.vmax[env, :k] = np.where(np.isnan(given), self.vmax[env, :k], given)

    def goals(self) -> np.ndarray:
        """(E, P, 2): each agent's current waypoint."""
        # a flat take: numpy's fancy indexing with three index arrays is several times slower
        flat = self._first_waypoint + self.target
        return np.take(self.waypoints.reshape(-1, 2), flat.ravel(), axis=0).reshape(self.pos.shape)

    def step(self, dt: float, boxes: np.ndarray | None = None, box_mask: np.ndarray | None = None,
             robots: np.ndarray | None = None, robot_radius: float = 0.0) -> None:
        """Advance every active agent by `dt` seconds among the footprints `boxes` (E, B, 5)
        that `box_mask` (E, B) keeps (None: all). `robots` (E, 2): each env's robot."""
        if boxes is None:
            boxes, box_mask = self._no_boxes
        else:
            boxes = np.ascontiguousarray(boxes, dtype=float)
            box_mask = (np.ones(boxes.shape[:2], dtype=bool) if box_mask is None
                        else np.ascontiguousarray(box_mask, dtype=bool))
        has_robots = robots is not None
        robots = (self._no_robots if robots is None
                  else np.ascontiguousarray(np.asarray(robots)[:, :2], dtype=float))
        e = self.num_envs
        if (boxes.ndim != 3 or boxes.shape[::2] != (e, 5) or box_mask.shape != boxes.shape[:2]
                or robots.shape != (e, 2)):
            raise ValueError(f"crowd step: expected boxes ({e}, B, 5), box_mask ({e}, B) and "
                             f"robots ({e}, 2+), got shapes {boxes.shape}, {box_mask.shape} "
                             f"and {robots.shape}")
        shape = (self.num_envs, self.capacity, boxes.shape[1])
        args = (self.pos, self.vel, self.yaw, self.active, self.waypoints, self.count,
                self.target, self.direction, self.mode, self.vmax, self.factors, self.reached,
                boxes, box_mask, robots, has_robots, float(robot_radius), float(dt),
                float(self.radius), self.model == "social_force", _PARAMS, float(ARRIVAL),
                int(CONSTRAINT_ITERATIONS), float(SKIN), int(PING_PONG))
        if self._scratch is None or self._scratch[0] != shape:
            scratch = crowd_step.Scratch.make(*shape)
            self._scratch = (shape, scratch, crowd_step.step.entry(*args, scratch))
        rounds = self._scratch[2](*args, self._scratch[1])
        if rounds < 0:  # (checked before anyone moved)
            raise ValueError(f"crowd step: expected vmax * dt < the radius ({self.radius} m) so "
                             f"that nobody skips through a wall, got dt {dt} s with vmax up to "
                             f"{self.vmax[self.active].max():.3g} m/s")
        self.separations += rounds


def nearest_on_boxes(points: np.ndarray, boxes: np.ndarray, mask: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """For points (E, P, 2) and each env's boxes (E, B, 5): the unit normal from each box
    toward the point (E, P, B, 2; for a point inside, out through the nearest face) and the
    signed gap to the box (E, P, B; negative inside, +inf for boxes masked out)."""
    frames = BoxFrames(points[..., 0][..., None], points[..., 1][..., None], boxes[:, None],
                       None if mask is None else mask[:, None])
    return frames.normals(lambda a: a), frames.gap
