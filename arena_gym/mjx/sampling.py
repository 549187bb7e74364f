"""Episode sampling in JAX: the CPU sampler's draw (arena_gym.tasks.sampling) for the room
world, as a pure function of a key.

The same distribution as `sample_episode`: k pool boxes (k from the curriculum's range, one
less every 10 failed attempts) at uniform positions and yaws in [0, pi), then a start with
`start_clearance` around the robot's footprint, then a goal `min_distance` away where the
robot fits, each the first free point of CANDIDATES uniform ones; up to ATTEMPTS attempts.
The free-space tests are the CPU's own definitions (tasks.sampling.start_free and
goal_free over the room's `free`). Not the same numbers: JAX's counter-based keys are not
numpy's stream. A room so full that no attempt succeeds (the CPU raises) keeps the last
attempt here (no exceptions under jit).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from arena_gym.tasks.sampling import ATTEMPTS, CANDIDATES, goal_free, start_free


class Draw(NamedTuple):
    """One episode drawn on the device: the robot's start, the goal and where each pool box goes (or
    whether it stays parked)."""

    start: Any  # (3,) x, y, yaw
    goal: Any  # (2,)
    boxes: Any  # (P, 3) x, y, yaw of each pool box (its footprint's centre)
    placed: Any  # (P,) bool: in the world this episode (else parked)


def sample(key: Any, sizes: Any, room: Any, count: tuple[int, int], radius: float,
           start_clearance: float, min_distance: float) -> Draw:
    """One episode of the room world (a RoomLayout) for a pool of boxes of full extents
    `sizes` (P, 3)."""
    import jax
    import jax.numpy as jnp

    pool = sizes.shape[0]
    key, kk, kyaw = jax.random.split(key, 3)
    k0 = jax.random.randint(kk, (), count[0], count[1] + 1)
    low, high = room.bounds()
    lo, hi = float(low[0]), float(high[0])  # the room is square: one span for x and y

    def first(points, ok):
        i = jnp.argmax(ok)
        return points[i], ok[i]

    def attempt(carry):
        n, key, _ = carry
        key, korder, kxy, kyaw_b, ks, kg = jax.random.split(key, 6)
        k = jnp.maximum(k0 - n // 10, 0)
        order = jax.random.permutation(korder, pool)
        placed = jnp.zeros(pool, bool).at[order].set(jnp.arange(pool) < k)
        xy = jax.random.uniform(kxy, (pool, 2), minval=lo, maxval=hi)
        yaw = jax.random.uniform(kyaw_b, (pool,), minval=0.0, maxval=math.pi)
        foot = jnp.concatenate([xy, yaw[:, None], sizes[:, :2]], axis=1)
        points = jax.random.uniform(ks, (CANDIDATES, 2), minval=lo, maxval=hi)
        start, ok_s = first(points, start_free(room, points, foot, placed, radius,
                                               start_clearance))
        points = jax.random.uniform(kg, (CANDIDATES, 2), minval=lo, maxval=hi)
        goal, ok_g = first(points, goal_free(room, points, foot, placed, radius, start,
                                             min_distance))
        draw = Draw(jnp.concatenate([start, jnp.zeros(1)]), goal, foot[:, :3], placed)
        return n + 1, key, (draw, ok_s & ok_g)

    def searching(carry):
        n, _, (_, ok) = carry
        return (n < ATTEMPTS) & ~ok

    empty = Draw(jnp.zeros(3), jnp.zeros(2), jnp.zeros((pool, 3)), jnp.zeros(pool, bool))
    start = (jnp.int32(0), key, (empty, jnp.bool_(False)))
    _, _, (draw, _) = jax.lax.while_loop(searching, attempt, start)
    yaw0 = jax.random.uniform(kyaw, (), minval=-math.pi, maxval=math.pi)
    return draw._replace(start=draw.start.at[2].set(yaw0))
