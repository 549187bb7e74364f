"""One control step of the navigation task for every env, compiled: the observation (the
scan, the goal's and subgoal's distance and bearing, the last action), how episodes end
(tasks/termination.py), every built-in reward term and their sum (tasks/rewards.py), the
metrics record and the step counts, from one inputs record.

    read_poses(qpos, rows, adr, width, height, task.pose)  # the robots' planar poses
    inputs = StepInputs(pose, ranges, collided, diverged, twist, active, before, after, subgoal)
    ended, collided, diverged = evaluate(task.arrays, inputs, task.outputs)

`NavigationTask.evaluate` calls it, for one env and for many alike. Nothing here defines the
task: it calls the shared definitions (rotations.yaw, observation.polar and clipped_range,
termination.end_flags and ends, rewards.builtin_terms, metrics.record_step) as numba
compiles them. An env not `active`
(restarting, or an observation only) gets its observation and nothing else: no flags, no
terms, no count; one whose physics diverged ends with reward 0.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from arena_gym.compiled import kernel
from arena_gym.geometry.rotations import yaw
from arena_gym.tasks.metrics import record_step
from arena_gym.tasks.observation import clipped_range, polar
from arena_gym.tasks.rewards import (
    Outcome,
    PeopleOutcome,
    Weights,
    builtin_terms,
    pedestrian_terms,
)
from arena_gym.tasks.termination import end_flags, ends

FLAGS = ("reached", "collided", "timed_out", "diverged", "terminated", "truncated", "ended")


class StepInputs(NamedTuple):
    """What the task reads of one control step, (num_envs, ...) arrays."""

    pose: np.ndarray  # (n, 4) x, y, z, yaw of each robot (read_poses)
    ranges: np.ndarray  # (n, beams) float32: the robot's lidar, REP 117 ranges
    collided: np.ndarray  # (n,) bool: the collision rule over the step
    diverged: np.ndarray  # (n,) bool: the env's physics diverged in the step
    twist: np.ndarray  # (n, k) float: the step's command (k: the action's dims)
    active: np.ndarray  # (n,) bool: stepped (else restarting, or an observation only)
    before: np.ndarray  # (n,) progress's distance before the step
    after: np.ndarray  # (n,) and after it, where the task's paths give it (path progress)
    subgoal: np.ndarray  # (n, 2) the point obs["subgoal"] points to (paths)


class TaskArrays(NamedTuple):
    """The task's state and constants the step reads and writes."""

    goal: np.ndarray  # (n, 2) world frame
    distance: np.ndarray  # (n,) the goal's distance, written each step
    steps: np.ndarray  # (n,) int64: control steps of the episode
    max_steps: np.ndarray  # (n,) int64: the time limit of each env's episode
    last_action: np.ndarray  # (n, k) the last twist
    action_high: np.ndarray  # (k,) scales the action change
    weights: Any  # rewards.Weights
    goal_radius: float
    radius: float  # the robot's footprint: the clearance is the nearest range less it
    max_range: float  # the scan's ranges are clipped into [0, max_range]
    scan_scale: float  # and divided by this (max_range when normalised, else 1)
    path_progress: bool  # progress from inputs.after, else from the goal's distance now
    subgoals: bool  # the observation has a subgoal
    trajectory: np.ndarray  # (n, capacity, 3) the episode metrics' record
    hits: np.ndarray  # (n, capacity) bool
    recorded: np.ndarray  # (n,) int64


class StepOutputs(NamedTuple):
    """What the step writes for every env."""

    polar: np.ndarray  # (n, 2) float64: the goal's distance and bearing
    flags: np.ndarray  # (7, n) bool: FLAGS
    terms: np.ndarray  # (len(BUILTIN), n): each built-in term (0 where not counted)
    reward: np.ndarray  # (n,) their sum
    change: np.ndarray  # (n,) |(twist - last action) / action high|
    clearance: np.ndarray  # (n,) m from the footprint to the nearest return
    scan: np.ndarray  # (n, beams) float32: obs["scan"]
    goal: np.ndarray  # (n, 2) float32: obs["goal"]
    last_action: np.ndarray  # (n, k) float32: obs["last_action"]
    subgoal: np.ndarray  # (n, 2) float32: obs["subgoal"] (paths)
    values: np.ndarray  # (len(BUILTIN),) scratch: one env's terms


@kernel
def evaluate(task, inputs, out):  # pragma: no cover - compiled
    """The step of every env (see the module docstring); returns how many envs' episodes
    ended, how many collided and how many diverged. Counts the step in place: each active
    env's steps + 1, its last action the twist, its metrics record; every env's `distance`
    the goal's now."""
    ended = collisions = divergences = 0
    pose, ranges, twist, active = inputs.pose, inputs.ranges, inputs.twist, inputs.active
    for e in range(pose.shape[0]):
        x, y, heading = pose[e, 0], pose[e, 1], pose[e, 3]
        nearest = np.inf
        for b in range(ranges.shape[1]):
            r = clipped_range(ranges[e, b], task.max_range)
            out.scan[e, b] = r / task.scan_scale
            if r < nearest or r != r:  # the smallest, NaN where any is (as np.min)
                if nearest == nearest:
                    nearest = r
        distance, bearing = polar(task.goal[e, 0] - x, task.goal[e, 1] - y, heading)
        out.polar[e, 0], out.polar[e, 1] = distance, bearing
        out.goal[e, 0], out.goal[e, 1] = distance, bearing
        if task.subgoals:
            near, angle = polar(inputs.subgoal[e, 0] - x, inputs.subgoal[e, 1] - y, heading)
            out.subgoal[e, 0], out.subgoal[e, 1] = near, angle
        stepped = active[e]
        reached, hit, timed_out, div = end_flags(
            distance, task.goal_radius, inputs.collided[e], inputs.diverged[e],
            task.steps[e] + stepped, task.max_steps[e], stepped)
        terminated, truncated, over = ends(reached, hit, timed_out, div)
        for row, flag in enumerate((reached, hit, timed_out, div, terminated, truncated, over)):
            out.flags[row, e] = flag
        ended += over
        collisions += hit
        divergences += div
        change = 0.0
        for j in range(twist.shape[1]):
            c = (twist[e, j] - task.last_action[e, j]) / task.action_high[j]
            change += c * c
        out.change[e] = math.sqrt(change)
        out.clearance[e] = nearest - task.radius
        after = inputs.after[e] if task.path_progress else distance
        outcome = Outcome(inputs.before[e], after, reached, hit, out.clearance[e], twist[e, 0],
                          out.change[e])
        counted = stepped and not div
        total = builtin_terms(task.weights, outcome, out.values)
        for k in range(out.values.shape[0]):
            out.terms[k, e] = out.values[k] if counted else 0.0
        out.reward[e] = total if counted else 0.0
        if stepped:  # the step counted: the metrics, the step count and the last action
            record_step(e, x, y, heading, hit, counted, task.recorded, task.trajectory,
                        task.hits)
            task.steps[e] += 1
            for j in range(twist.shape[1]):
                task.last_action[e, j] = twist[e, j]
        for j in range(twist.shape[1]):
            out.last_action[e, j] = task.last_action[e, j]
        task.distance[e] = distance
    return ended, collisions, divergences


@kernel
def read_poses(qpos, rows, adr, width, height, pose):  # pragma: no cover - compiled
    """pose[i] = x, y, z and yaw of the base whose joints' qpos start at qpos[rows[i], adr]:
    a free joint's (width 7: position, quaternion), or a planar base's (width 3: x, y, yaw,
    at `height`)."""
    for i in range(rows.shape[0]):
        q = qpos[rows[i], adr:adr + width]
        if width == 3:
            pose[i, 0], pose[i, 1], pose[i, 2], pose[i, 3] = q[0], q[1], height, q[2]
        else:
            pose[i, 0], pose[i, 1], pose[i, 2] = q[0], q[1], q[2]
            pose[i, 3] = yaw(q[3], q[4], q[5], q[6])


WEIGHTS_AT = TaskArrays._fields.index("weights")  # where a plain TaskArrays holds them


def plain(task: TaskArrays, inputs: StepInputs, out: StepOutputs) -> tuple[tuple, ...]:
    """The three records as plain tuples (the weights too), for `evaluate_plain`: numba
    types a plain tuple of arrays from its fingerprint, in C, and a named one in Python."""
    return ((*task[:WEIGHTS_AT], tuple(task.weights), *task[WEIGHTS_AT + 1:]), tuple(inputs),
            tuple(out))


@kernel
def evaluate_plain(task, inputs, out):  # pragma: no cover - compiled
    """`evaluate` of the records given as plain tuples (`plain`): the step's one call."""
    records = TaskArrays(task[0], task[1], task[2], task[3], task[4], task[5],
                         Weights(*task[6]), task[7], task[8], task[9], task[10], task[11],
                         task[12], task[13], task[14], task[15])
    return evaluate(records, StepInputs(*inputs), StepOutputs(*out))


@kernel
def people_step(weights, crowd_pos, crowd_active, pose, before, collided, kind, pedestrian,
                counted, dt, personal_space, in_space, speed_in_space, min_distance, hits,
                values, terms, reward):  # pragma: no cover - compiled
    """The people's part of a step in every env e (`weights`: rewards.Weights as a plain
    tuple, which numba types at C speed): the nearest walking person (centres),
    whether the collision hit a person (kind == pedestrian), the speed the robot moved at
    since `before` (its pose before the step) over `dt`; the social metrics of a counted
    step (EpisodeMetrics.update_pedestrians); each pedestrian term into terms[:, e] (0 where
    not counted) and added to reward[e] in order (as `rewards.total` sums them)."""
    for e in range(pose.shape[0]):
        nearest = np.inf
        for p in range(crowd_pos.shape[1]):
            if crowd_active[e, p]:
                d = math.hypot(crowd_pos[e, p, 0] - pose[e, 0], crowd_pos[e, p, 1] - pose[e, 1])
                nearest = min(nearest, d)
        hit = collided[e] and kind[e] == pedestrian
        c = counted[e]
        speed = math.hypot(pose[e, 0] - before[e, 0], pose[e, 1] - before[e, 1]) * c / dt
        inside = nearest < personal_space and c
        in_space[e] += inside
        speed_in_space[e] += abs(speed) if inside else 0.0
        if c:
            min_distance[e] = min(min_distance[e], nearest)
        hits[e] += hit and c
        pedestrian_terms(Weights(*weights), PeopleOutcome(nearest, hit, speed), values)
        total = reward[e]
        for k in range(values.shape[0]):
            terms[k, e] = values[k] if c else 0.0
            total += terms[k, e]
        reward[e] = total
