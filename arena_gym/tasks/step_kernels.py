"""One control step's evaluation for every env, compiled (tasks/step.py calls it): the
goal's distance and bearing, classify's flags, the built-in reward terms and their sum, in
one call instead of some forty numpy calls on the caches MuJoCo's step leaves cold; and
the robots' planar poses from their free joints.

Nothing here defines the task: the kernels call the shared definitions (rotations.yaw,
observation.polar, termination.end_flags and ends, the terms of tasks/rewards.py) as numba
compiles them (tasks/array_kernels.py)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import types
from numba.extending import overload

from arena_gym.jit import numba
from arena_gym.scene.rotations import yaw
from arena_gym.tasks.array_kernels import SHARED  # noqa: F401 - compilable from here on
from arena_gym.tasks.observation import polar
from arena_gym.tasks.rewards import (
    abrupt_velocity,
    collision,
    goal,
    progress,
    reverse,
    safe_distance,
    time,
)
from arena_gym.tasks.step import WEIGHTS
from arena_gym.tasks.termination import end_flags, ends

# the built-in terms the kernel computes (rewards.BUILTIN's, in order; a test pins it), and
# the weights they read, passed as an array (tasks/step.py: WEIGHTS)
TERMS = (goal, collision, progress, safe_distance, reverse, abrupt_velocity, time)
Weights = namedtuple("Weights", WEIGHTS)
# StepOutcome's fields the built-in terms read, for one env
Outcome = namedtuple("Outcome", ("distance_before", "distance_after", "reached", "collided",
                                 "min_clearance", "forward_speed", "action_change"))


@numba.njit(cache=True)
def evaluate(qpos, pose, goal_xy, before, after, goal_radius, collided, diverged, steps,
             max_steps, active, twist, last_action, action_high, nearest,
             radius, weights, polar_out, distance_out, flags, terms, reward,
             change_out, clearance_out):  # pragma: no cover
    """For n envs: `pose` (n, 4) from `qpos` (n, 7) (pose_into's), `polar_out` (n, 2) the
    goal's distance and bearing from it (the distance in `distance_out` (n,) too: a
    contiguous array, as next step's `before`);
    `flags` (7, n) classify's reached, collided, timed_out, diverged (end_flags, with
    steps + active as the step count) and their terminated, truncated, ended (ends);
    `terms` (7, n) the built-in terms of TERMS (0 where an env is not counted: inactive or
    diverged), `reward` (n,) their sum in that order, `change_out` (n,) the action change
    |(twist - last_action) / action_high|, `clearance_out` (n,) each env's `nearest`
    range less the robot's `radius`. Progress is from `before` to `after` (None: the
    goal's distance now). Then counts the step: each active env's `steps` + 1 and its
    `last_action` the twist, in place. Returns how many envs ended and collided."""
    cfg = Weights(weights[0], weights[1], weights[2], weights[3], weights[4], weights[5],
                  weights[6], weights[7], weights[8])
    ended = collisions = 0
    for e in range(pose.shape[0]):  # env by env, on scalars: no array expressions to compile
        _pose(qpos, pose, e)
        distance, bearing = polar(goal_xy[e, 0] - pose[e, 0], goal_xy[e, 1] - pose[e, 1],
                                  pose[e, 3])
        polar_out[e, 0], polar_out[e, 1] = distance, bearing
        distance_out[e] = distance
        reached, hit, timed_out, div = end_flags(distance, goal_radius, collided[e],
                                                 diverged[e], steps[e] + active[e],
                                                 _limit(max_steps, e), active[e])
        terminated, truncated, over = ends(reached, hit, timed_out, div)
        for row, flag in enumerate((reached, hit, timed_out, div, terminated, truncated,
                                    over)):
            flags[row, e] = flag
        ended += over
        collisions += hit
        change = 0.0
        for j in range(twist.shape[1]):
            c = (twist[e, j] - last_action[e, j]) / action_high[j]
            change += c * c
        change_out[e] = np.sqrt(change)
        clearance_out[e] = nearest[e] - radius
        out = Outcome(before[e], distance if after is None else after[e], reached, hit,
                      clearance_out[e], twist[e, 0], change_out[e])
        values = (goal(cfg, out), collision(cfg, out), progress(cfg, out),
                  safe_distance(cfg, out), reverse(cfg, out), abrupt_velocity(cfg, out),
                  time(cfg, out))
        counted = active[e] and not div
        total = 0.0
        for k in range(len(values)):
            value = values[k] if counted else 0.0
            terms[k, e] = value
            total = value if k == 0 else total + value
        reward[e] = total
        if active[e]:  # the step counted: the env's step count and last action
            steps[e] += 1
            for j in range(twist.shape[1]):
                last_action[e, j] = twist[e, j]
    return ended, collisions


def _limit(max_steps, env):
    """The time limit of `env`: one for all (an int) or per env (an array)."""
    return max_steps if isinstance(max_steps, (int, np.integer)) else max_steps[env]


@overload(_limit)
def _limit_compiled(max_steps, env):
    if isinstance(max_steps, types.Array):
        return lambda max_steps, env: max_steps[env]
    return lambda max_steps, env: max_steps


@numba.njit(cache=True)
def pose_into(q, pose):  # pragma: no cover - compiled
    """pose (n, 4): x, y, z and quat_yaw of each row of q (n, 7): a free joint's qpos."""
    for e in range(q.shape[0]):
        _pose(q, pose, e)


@numba.njit(cache=True)
def _pose(q, pose, e):  # pragma: no cover - compiled
    pose[e, 0], pose[e, 1], pose[e, 2] = q[e, 0], q[e, 1], q[e, 2]
    pose[e, 3] = yaw(q[e, 3], q[e, 4], q[e, 5], q[e, 6])
