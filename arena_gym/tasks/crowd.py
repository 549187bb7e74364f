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

The social force model finds near pairs and each agent's nearest obstacle through Verlet
lists (`list_margin`: rebuilt from all pairs and boxes once anyone has moved half of it),
which move everyone exactly as screening all pairs and boxes at every step would.

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
from arena_gym.tasks.footprints import BoxFrames

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
# m: the pair list holds pairs this much beyond the forces' reach, so it lasts while nobody
# moves half of it (at 0.5 m/s and 0.1 s steps, 6 steps); 0 screens all pairs every step
LIST_MARGIN = 0.6


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
                 max_waypoints: int = 32, list_margin: float = LIST_MARGIN) -> None:
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
        self._pair_mask: np.ndarray | None = None  # active pairs, cached until place()
        if not list_margin >= 0:
            raise ValueError(f"Crowd.list_margin: expected a distance >= 0 m, got {list_margin}")
        self.list_margin = list_margin
        self._reach = 2 * radius + FADE * SOCIAL[1]  # pairs farther apart push by ~nothing
        # off the lists, a pair was at least reach + margin apart (float32) and a box the
        # margin farther than the nearest one; each agent may move half the margin (less
        # float32 rounding of coordinates, ~1e-5 m) before that may no longer hold
        self._stale_after = list_margin / 2 - 1e-4
        self._listed = False  # whether the lists below hold (place() drops them)
        self._listed_at = self.pos.copy()
        self._boxes_at: tuple[np.ndarray | None, np.ndarray | None] | None = None
        empty = np.zeros(0, dtype=np.int64)
        self._pair_list: tuple[np.ndarray, np.ndarray] = (empty, empty)
        self._box_list: tuple[np.ndarray, np.ndarray] = (np.zeros((*shape, 0), np.int64),
                                                         np.zeros((*shape, 0), bool))
        self._close: tuple[np.ndarray, ...] = (np.zeros(0, dtype=np.int64),) * 2
        self._rows = np.arange(num_envs)[:, None]  # (E, 1) and (1, P): index grids
        self._cols = np.arange(capacity)[None, :]
        self._first_agent = np.arange(num_envs * capacity).reshape(shape)  # flat (E, P) index
        # flat index of each agent's first waypoint in waypoints.reshape(-1, 2)
        self._first_waypoint = self._first_agent * max_waypoints

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
        self._pair_mask, self._listed = None, False
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
        """Advance every active agent by `dt` seconds. `robots` (E, 2): each env's robot."""
        if (self.vmax * dt >= self.radius).any():
            raise ValueError(f"crowd step: expected vmax * dt < the radius ({self.radius} m) so "
                             f"that nobody skips through a wall, got dt {dt} s with vmax up to "
                             f"{self.vmax.max():.3g} m/s")
        goal = self.goals()
        walls = boxes is not None and boxes.shape[1] > 0
        # clearances before the move decide which constraints can be needed after it: no one
        # moves more than `reach`
        reach = float((self.vmax * self.active).max(initial=0.0)) * dt
        if self.model == "waypoints":
            self._walk(dt, goal)
            apart, clear = 0.0, 0.0
            self._wall_gap = np.zeros(self.active.shape)  # unknown: everyone is checked
        else:
            apart, clear = self._social(dt, goal, boxes, box_mask, robots, robot_radius)
        separated = False
        # who may end up within r of an obstacle: those who were within r + reach of one
        near = self.active & (self._wall_gap < self.radius + reach)
        if apart < 2 * self.radius + SKIN + 2 * reach and self.model == "social_force":
            for _ in range(CONSTRAINT_ITERATIONS):  # alternate: a push apart may meet a wall
                if not self._separate():
                    break
                separated = True
                if walls:
                    self._push_out(boxes, box_mask, self.active)
        if walls and (separated or clear < self.radius + reach):
            self._push_out(boxes, box_mask, self.active if separated else near)  # walls win
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

    def _social(self, dt: float, goal: np.ndarray, boxes, box_mask, robots, robot_radius
                ) -> tuple[float, float]:
        """One social force step; returns the smallest distance between two agents and the
        smallest gap from an agent to an obstacle, both before the move."""
        active = self.active
        px, py = self.pos[..., 0], self.pos[..., 1]
        gx, gy = goal[..., 0] - px, goal[..., 1] - py
        inv = 1.0 / np.maximum(np.sqrt(gx * gx + gy * gy), 1e-9)
        heading = np.stack([gx * inv, gy * inv], -1)
        force = np.zeros_like(self.vel)
        clear = np.inf
        self._wall_gap = np.full(active.shape, np.inf)
        self._refresh_lists(boxes, box_mask)
        if boxes is not None and boxes.shape[1]:
            # the nearest obstacle only (as pedsim): a wall cut into many boxes pushes once.
            # Only listed boxes can be nearest (_refresh_lists); their order is the boxes'
            # own, so ties go to the same box as among all of them
            flat, listed = self._box_list  # flat (env, box) indices (E, P, K)
            mask = listed if box_mask is None else listed & np.take(box_mask, flat)
            listed_boxes = np.take(boxes.reshape(-1, 5), flat.ravel(), axis=0)
            local = BoxFrames(px[..., None], py[..., None],
                              listed_boxes.reshape(*flat.shape, 5), mask)  # (E, P, K)
            k = local.gap.shape[2]
            nearest = self._first_agent * k + local.gap.argmin(axis=2)  # flat, (E, P)

            def pick(a: np.ndarray) -> np.ndarray:  # (E, P) of the nearest listed box
                return np.take(np.broadcast_to(a, local.gap.shape), nearest)

            gap = pick(local.gap)
            clear = float(np.where(active, gap, np.inf).min(initial=np.inf))
            self._wall_gap = gap
            normal = local.normals(pick)
            a, b = OBSTACLE
            push = np.where(np.isfinite(gap), a * np.exp((self.radius - gap) / b), 0.0)
            force += (self.factors[2] * push)[..., None] * normal
            heading = _slide(heading, normal, gap < self.radius + SLIDE)
        # an agent at its only waypoint stays there (it stands: desired speed 0)
        speed0 = np.where(self._done(), 0.0, self.vmax)
        force += self.factors[0][..., None] * (speed0[..., None] * heading - self.vel) / TAU
        social, apart = self._social_force(heading)
        force += self.factors[1][..., None] * social
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
        return apart, clear

    def _pairs(self, within: float) -> tuple[float, tuple[np.ndarray, np.ndarray], np.ndarray,
                                             np.ndarray, np.ndarray]:
        """Active pairs i != j of an env closer than `within` (<= the listed reach): the
        smallest distance of any listed pair (inf without any), the pairs' flat (env, i) and
        (env, j) indices into (E * P) and their dx, dy (i - j) and distance. Only near pairs
        matter (the forces fade within metres), and they are few: a float32 screen of the
        listed pairs finds them (the very float32 operations of `_screen`, so the same
        pairs as a screen of all pairs), float64 computes them."""
        ai, aj = self._pair_list
        # (np.take along axis 0: numpy's fancy indexing of rows is ~50x slower here)
        pos32 = self.pos.astype(np.float32).reshape(-1, 2)
        d = np.take(pos32, ai, axis=0) - np.take(pos32, aj, axis=0)
        d *= d
        dist = d[:, 0] + d[:, 1]
        np.sqrt(dist, out=dist)
        near = dist < within
        # float32 rounding: the screen's smallest distance may be off by ~1e-6 m
        apart = float(dist.min(initial=np.inf)) - 1e-4
        ai, aj = ai[near], aj[near]
        pos = self.pos.reshape(-1, 2)
        delta = np.take(pos, ai, axis=0) - np.take(pos, aj, axis=0)
        dx, dy = delta[:, 0], delta[:, 1]
        return apart, (ai, aj), dx, dy, np.sqrt(dx * dx + dy * dy)

    def _screen(self, within: float) -> tuple[np.ndarray, np.ndarray]:
        """Flat (env, i) and (env, j) indices of the active pairs closer than `within`, in
        (env, i, j) order: a float32 screen of all pairs."""
        pos32 = self.pos.astype(np.float32)
        px, py = pos32[..., 0], pos32[..., 1]
        dist = px[:, :, None] - px[:, None, :]
        dist *= dist
        dy = py[:, :, None] - py[:, None, :]
        dy *= dy
        dist += dy
        np.sqrt(dist, out=dist)
        if self._pair_mask is None:  # 0 for active pairs, inf for the others
            pair = self.active[:, :, None] & self.active[:, None, :]
            pair &= ~np.eye(self.capacity, dtype=bool)[None]
            self._pair_mask = np.where(pair, 0.0, np.inf).astype(np.float32)
        dist += self._pair_mask
        flat = np.flatnonzero(dist < within)
        p = self.capacity
        return flat // p, (flat // (p * p)) * p + flat % p

    def _refresh_lists(self, boxes: np.ndarray | None, box_mask: np.ndarray | None) -> None:
        """Verlet lists, rebuilt from all pairs and boxes once anyone has moved half of
        `list_margin` since (or the agents or the boxes changed): the pairs within the
        social force's reach plus the margin, and per agent the boxes within the margin of
        its nearest one. Off the lists, a pair is still beyond the reach, and a box is
        farther than the nearest listed one (gaps change no faster than the agent moves),
        so the lists give what all pairs and boxes would."""
        same_boxes = self._boxes_at is not None and (
            (boxes is None and self._boxes_at[0] is None)
            or (boxes is not None and self._boxes_at[0] is not None
                and np.array_equal(boxes, self._boxes_at[0])
                and np.array_equal(box_mask, self._boxes_at[1])))
        if self._listed and same_boxes:
            d = self.pos - self._listed_at
            if np.sqrt((d * d).sum(axis=-1).max(initial=0.0)) <= self._stale_after:
                return
        self._pair_list = self._screen(self._reach + self.list_margin)
        self._listed_at = self.pos.copy()
        self._listed = True
        self._boxes_at = (None if boxes is None else boxes.copy(),
                          None if box_mask is None else np.array(box_mask, copy=True))
        if boxes is None or not boxes.shape[1]:
            return
        px, py = self.pos[..., 0], self.pos[..., 1]
        gap = BoxFrames(px[:, None], py[:, None], boxes[:, :, None],
                        None if box_mask is None else box_mask[..., None]).gap  # (E, B, P)
        keep = gap <= gap.min(axis=1, keepdims=True) + self.list_margin
        k = max(int(keep.sum(axis=1).max(initial=1)), 1)
        # the kept boxes first, in their own order (a stable sort of "not kept")
        ids = np.argsort(~keep, axis=1, kind="stable")[:, :k].transpose(0, 2, 1)  # (E, P, K)
        listed = np.take_along_axis(keep, ids.transpose(0, 2, 1), axis=1).transpose(0, 2, 1)
        self._box_list = (ids + boxes.shape[1] * self._rows[..., None], listed)

    def _sum_over_j(self, ai: np.ndarray, fx: np.ndarray, fy: np.ndarray) -> np.ndarray:
        """(E, P, 2): per agent i (flat index `ai` of each pair), the sum of the pair terms
        (fx, fy) of its pairs."""
        size = self.active.size
        out = np.stack([np.bincount(ai, fx, size), np.bincount(ai, fy, size)], -1)
        return out.reshape(self.pos.shape)

    def _social_force(self, heading: np.ndarray) -> tuple[np.ndarray, float]:
        """Sum over the env's other agents j of A exp((2r - d_ij) / B) n_ij w(phi): (E, P, 2),
        and the smallest distance between two active agents."""
        a, b = SOCIAL
        apart, (ai, aj), dx, dy, dist = self._pairs(self._reach)
        # who may overlap after this step: moves are < r each (step() checks), and each
        # separation round moves an agent by less than that again
        close = dist < 6 * self.radius + SKIN
        self._close = (ai[close], aj[close])
        inv = 1.0 / np.maximum(dist, 1e-9)
        h = np.take(heading.reshape(-1, 2), ai, axis=0)
        # phi: between i's walking direction and the direction toward j (-n)
        cos_phi = -(h[:, 0] * dx + h[:, 1] * dy) * inv
        weight = ANISOTROPY + (1 - ANISOTROPY) * 0.5 * (1 + cos_phi)
        magnitude = a * np.exp((2 * self.radius - dist) / b) * weight * inv
        return self._sum_over_j(ai, magnitude * dx, magnitude * dy), apart

    # ------------------------------------------------------------------ constraints
    def _separate(self) -> bool:
        """Push overlapping agents of an env apart, half the overlap each; whether any were.
        Only pairs that were close before the step can overlap (`_close`)."""
        ai, aj = self._close
        pos = self.pos.reshape(-1, 2)
        delta = np.take(pos, ai, axis=0) - np.take(pos, aj, axis=0)
        dx, dy = delta[:, 0], delta[:, 1]
        dist = np.sqrt(dx * dx + dy * dy)
        over = dist < 2 * self.radius + SKIN
        if not over.any():
            return False
        self.separations += 1
        dx, dy, dist = dx[over], dy[over], dist[over]
        push = (2 * self.radius + SKIN - dist) * 0.5 / np.maximum(dist, 1e-9)
        self.pos += self._sum_over_j(ai[over], push * dx, push * dy)
        return True

    def _push_out(self, boxes: np.ndarray, box_mask: np.ndarray | None, who: np.ndarray
                  ) -> None:
        """Anyone of `who` (E, P) closer than its radius to an obstacle steps back out along
        its normal."""
        e, p = np.nonzero(who)
        for _ in range(2):  # a corner between two boxes may take a second push
            if not len(e):
                return
            local = BoxFrames(self.pos[e, p, 0][:, None], self.pos[e, p, 1][:, None], boxes[e],
                              None if box_mask is None else box_mask[e])
            hit = local.gap < self.radius
            if not hit.any():
                return
            i, b = np.nonzero(hit)
            normal = local.normals(lambda a, ib=(i, b): a[ib])
            depth = self.radius - local.gap[i, b]
            np.add.at(self.pos, (e[i], p[i]), depth[:, None] * normal)

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


def nearest_on_boxes(points: np.ndarray, boxes: np.ndarray, mask: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """For points (E, P, 2) and each env's boxes (E, B, 5): the unit normal from each box
    toward the point (E, P, B, 2; for a point inside, out through the nearest face) and the
    signed gap to the box (E, P, B; negative inside, +inf for boxes masked out)."""
    frames = BoxFrames(points[..., 0][..., None], points[..., 1][..., None], boxes[:, None],
                       None if mask is None else mask[:, None])
    return frames.normals(lambda a: a), frames.gap
