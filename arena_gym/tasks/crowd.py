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
Both end each step with two constraints: overlapping agents are pushed apart, then anyone
closer than its radius to an obstacle is pushed back out along the obstacle's normal. A step
moves an agent at most `vmax * dt`, less than its radius (checked), so no agent's centre ever
enters a wall and the push-out always returns it to the side it came from: nobody walks
through walls, however the forces add up.

Obstacles are footprints (E, B, 5: x, y, yaw, sx, sy full extents), with a mask (E, B) of
those present (arena_gym.tasks.footprints' convention).

    crowd = Crowd(num_envs=16, capacity=8, model="social_force")
    crowd.place(env, starts, waypoints, modes, rng)
    crowd.step(0.1, boxes, box_mask, robots=robot_xy, robot_radius=0.2)
    crowd.pos, crowd.yaw
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from arena_gym.scene.pedestrians import RADIUS

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
        self.separations = 0  # steps in which the forces left agents overlapping

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
        return np.take_along_axis(self.waypoints, self.target[..., None, None], axis=2)[:, :, 0]

    def step(self, dt: float, boxes: np.ndarray | None = None, box_mask: np.ndarray | None = None,
             robots: np.ndarray | None = None, robot_radius: float = 0.0) -> None:
        """Advance every active agent by `dt` seconds. `robots` (E, 2): each env's robot."""
        if (self.vmax * dt >= self.radius).any():
            raise ValueError(f"crowd step: expected vmax * dt < the radius ({self.radius} m) so "
                             f"that nobody skips through a wall, got dt {dt} s with vmax up to "
                             f"{self.vmax.max():.3g} m/s")
        goal = self.goals()
        walls = boxes is not None and boxes.shape[1] > 0
        if self.model == "waypoints":
            self._walk(dt, goal)
        else:
            self._social(dt, goal, boxes, box_mask, robots, robot_radius)
            for _ in range(CONSTRAINT_ITERATIONS):  # alternate: a push apart may meet a wall
                if not self._separate():
                    break
                if walls:
                    self._push_out(boxes, box_mask)
        if walls:
            self._push_out(boxes, box_mask)  # last: walls win
        moving = np.hypot(self.vel[..., 0], self.vel[..., 1]) > 1e-3
        self.yaw = np.where(moving, np.arctan2(self.vel[..., 1], self.vel[..., 0]), self.yaw)
        self._advance(ARRIVAL if self.model == "social_force" else 1e-9)

    # ------------------------------------------------------------------ models
    def _walk(self, dt: float, goal: np.ndarray) -> None:
        delta = goal - self.pos
        dist = np.hypot(delta[..., 0], delta[..., 1])
        stride = np.minimum(self.vmax * dt, dist)  # land on the waypoint, not past it
        unit = delta / np.maximum(dist, 1e-12)[..., None]
        move = unit * (stride * self.active)[..., None]
        self.vel = move / dt
        self.pos += move

    def _social(self, dt: float, goal: np.ndarray, boxes, box_mask, robots, robot_radius) -> None:
        active = self.active
        delta = goal - self.pos
        dist = np.hypot(delta[..., 0], delta[..., 1])
        heading = delta / np.maximum(dist, 1e-9)[..., None]
        force = np.zeros_like(self.vel)
        if boxes is not None and boxes.shape[1]:
            # the nearest obstacle only (as pedsim): a wall cut into many boxes pushes once
            local = BoxFrames(self.pos, boxes, box_mask)
            k = local.gap.argmin(axis=2)[..., None]
            gap = np.take_along_axis(local.gap, k, axis=2)[..., 0]
            normal = local.normals(lambda a: np.take_along_axis(a, k, axis=2)[..., 0])
            a, b = OBSTACLE
            push = np.where(np.isfinite(gap), a * np.exp((self.radius - gap) / b), 0.0)
            force += (self.factors[2] * push)[..., None] * normal
            heading = _slide(heading, normal, gap < self.radius + SLIDE)
        # an agent at its only waypoint stays there (it stands: desired speed 0)
        speed0 = np.where(self._done(), 0.0, self.vmax)
        force += self.factors[0][..., None] * (speed0[..., None] * heading - self.vel) / TAU
        force += self.factors[1][..., None] * self._social_force(heading)
        if robots is not None:
            away = self.pos - robots[:, None, :2]
            d = np.hypot(away[..., 0], away[..., 1])
            a, b = ROBOT
            push = a * np.exp((self.radius + robot_radius - d) / b)[..., None]
            force += self.factors[3][..., None] * push * away / np.maximum(d, 1e-9)[..., None]
        vel = self.vel + force * dt
        speed = np.hypot(vel[..., 0], vel[..., 1])
        vel *= (np.minimum(speed, self.vmax) / np.maximum(speed, 1e-12))[..., None]
        self.vel = np.where(active[..., None], vel, 0.0)
        self.pos += self.vel * dt

    def _social_force(self, heading: np.ndarray) -> np.ndarray:
        """Sum over the env's other agents j of A exp((2r - d_ij) / B) n_ij w(phi): (E, P, 2)."""
        d = self.pos[:, :, None, :] - self.pos[:, None, :, :]  # i - j
        dist = np.hypot(d[..., 0], d[..., 1])
        pair = self.active[:, :, None] & self.active[:, None, :]
        pair &= ~np.eye(self.capacity, dtype=bool)[None]
        n = d / np.maximum(dist, 1e-9)[..., None]
        # phi: between i's walking direction and the direction toward j (-n)
        cos_phi = -np.einsum("epk,epqk->epq", heading, n)
        weight = ANISOTROPY + (1 - ANISOTROPY) * (1 + cos_phi) / 2
        a, b = SOCIAL
        magnitude = np.where(pair, a * np.exp((2 * self.radius - dist) / b) * weight, 0.0)
        return (magnitude[..., None] * n).sum(axis=2)

    # ------------------------------------------------------------------ constraints
    def _separate(self) -> bool:
        """Push overlapping agents of an env apart, half the overlap each; whether any were."""
        pair = self.active[:, :, None] & self.active[:, None, :]
        pair &= ~np.eye(self.capacity, dtype=bool)[None]
        d = self.pos[:, :, None, :] - self.pos[:, None, :, :]
        dist = np.hypot(d[..., 0], d[..., 1])
        overlap = np.where(pair, np.maximum(2 * self.radius + SKIN - dist, 0.0), 0.0)
        if not overlap.any():
            return False
        self.separations += 1
        n = d / np.maximum(dist, 1e-9)[..., None]
        self.pos += 0.5 * (overlap[..., None] * n).sum(axis=2)
        return True

    def _push_out(self, boxes: np.ndarray, box_mask: np.ndarray | None) -> None:
        """Anyone closer than its radius to an obstacle steps back out along its normal."""
        for _ in range(2):  # a corner between two boxes may take a second push
            local = BoxFrames(self.pos, boxes, box_mask)
            hit = (local.gap < self.radius) & self.active[..., None]
            if not hit.any():
                return
            e, p, b = np.nonzero(hit)  # few: compute normals there only
            normal = local.normals(lambda a, i=(e, p, b): a[i])
            depth = self.radius - local.gap[e, p, b]
            np.add.at(self.pos, (e, p), depth[:, None] * normal)

    def _done(self) -> np.ndarray:
        """Agents with a single waypoint that they reached: nothing left to walk to."""
        return (self.count == 1) & (self.reached > 0)

    def _advance(self, tolerance: float) -> None:
        """Agents at their waypoint turn to the next (loop, or back along the list)."""
        goal = self.goals()
        there = self.active & (np.hypot(*(goal - self.pos).transpose(2, 0, 1)) <= tolerance)
        there &= ~self._done()
        if not there.any():
            return
        self.reached += there
        nxt = self.target + self.direction
        last = self.count - 1
        loop = self.mode == LOOP
        wrap = np.where(loop, nxt % self.count, nxt)
        bounce = ~loop & ((nxt > last) | (nxt < 0))
        self.direction = np.where(there & bounce, -self.direction, self.direction)
        wrap = np.where(bounce, self.target + self.direction, wrap)
        wrap = np.clip(wrap, 0, last)
        self.target = np.where(there, wrap, self.target)


def _slide(heading: np.ndarray, normal: np.ndarray, near: np.ndarray) -> np.ndarray:
    """Near an obstacle, a walking direction into it turns along it (the tangent nearer to
    the goal's side), so an agent whose waypoint lies behind a wall follows the wall instead
    of pressing against it where the forces cancel."""
    into = (heading * normal).sum(axis=-1)
    turn = near & (into < 0)
    tangent = heading - into[..., None] * normal
    length = np.hypot(tangent[..., 0], tangent[..., 1])
    # straight into the wall: no side is nearer; take the left-hand tangent
    left = np.stack([-normal[..., 1], normal[..., 0]], -1)
    tangent = np.where((length > 1e-6)[..., None], tangent / np.maximum(length, 1e-12)[..., None],
                       left)
    return np.where(turn[..., None], tangent, heading)


class BoxFrames:
    """Points (E, P, 2) in the frames of each env's boxes (E, B, 5): `gap` (E, P, B) from
    each point to each box (negative inside, +inf for boxes masked out), and the boxes'
    outward normals where asked (`normals`), which most steps need for few pairs only."""

    def __init__(self, points: np.ndarray, boxes: np.ndarray, mask: np.ndarray | None) -> None:
        d = points[:, :, None, :] - boxes[:, None, :, :2]
        self.c, self.s = np.cos(boxes[..., 2])[:, None], np.sin(boxes[..., 2])[:, None]
        self.lx = self.c * d[..., 0] + self.s * d[..., 1]
        self.ly = self.s * -d[..., 0] + self.c * d[..., 1]
        self.ax = np.abs(self.lx) - boxes[..., 3][:, None] / 2  # > 0: outside along x
        self.ay = np.abs(self.ly) - boxes[..., 4][:, None] / 2
        outside = np.hypot(np.maximum(self.ax, 0.0), np.maximum(self.ay, 0.0))
        self.gap = np.where((self.ax < 0) & (self.ay < 0), np.maximum(self.ax, self.ay), outside)
        if mask is not None:
            self.gap = np.where(mask[:, None, :], self.gap, np.inf)

    def normals(self, pick) -> np.ndarray:
        """Unit normals (..., 2), in the world frame, from the box toward the point (inside:
        out through the nearer face) for the entries `pick(array)` selects of (E, P, B)."""
        lx, ly, ax, ay = pick(self.lx), pick(self.ly), pick(self.ax), pick(self.ay)
        c = pick(np.broadcast_to(self.c, self.lx.shape))
        s = pick(np.broadcast_to(self.s, self.lx.shape))
        inside = (ax < 0) & (ay < 0)
        nx = np.where(inside, (ax >= ay).astype(float), np.maximum(ax, 0.0))
        ny = np.where(inside, (ax < ay).astype(float), np.maximum(ay, 0.0))
        nx, ny = np.where(lx < 0, -nx, nx), np.where(ly < 0, -ny, ny)
        norm = np.maximum(np.hypot(nx, ny), 1e-12)
        nx, ny = nx / norm, ny / norm
        return np.stack([c * nx - s * ny, s * nx + c * ny], -1)


def nearest_on_boxes(points: np.ndarray, boxes: np.ndarray, mask: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """For points (E, P, 2) and each env's boxes (E, B, 5): the unit normal from each box
    toward the point (E, P, B, 2; for a point inside, out through the nearest face) and the
    signed gap to the box (E, P, B; negative inside, +inf for boxes masked out)."""
    frames = BoxFrames(points, boxes, mask)
    return frames.normals(lambda a: a), frames.gap
