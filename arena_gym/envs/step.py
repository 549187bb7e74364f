"""The env's compiled step: one kernel on each side of the two C calls of a control step
(MuJoCo's batch step and its ray cast), each composing the layers' own functions on the
arrays each layer hands out for its usual case (sim/fused.py's StepArrays, sensors/fused.py's
TickArrays, tasks/step.py's records).

    before_physics   the actions checked (envs: clip_into), staged and written into ctrl
                     (sim: control.write), the state about to step checked (sim: bad_rows)
    [batch step]
    before_cast      the stepped state and clocks checked (sim: bad_rows, clock_checks), the
                     lidar's frames (sensors: frames_into), the robots' poses (tasks: read_poses)
    [ray cast]
    after_cast       REP 117 ranges, the collision window, both readings shown (sensors:
                     ranges_into, window, shown); the observation, flags, terms, metrics and
                     counts (tasks: evaluate)

The crowd's step (people/crowd_step.py) runs before the physics where people walk. Each function
is the one its layer uses in every case; NavigationCore decides when this usual case holds
and otherwise goes the general way, through the same functions.
"""

from __future__ import annotations

from arena_gym.compiled import kernel
from arena_gym.envs.validation import clip_into
from arena_gym.sensors.channel import shown
from arena_gym.sensors.contact import window
from arena_gym.sensors.lidar import frames_into, ranges_into
from arena_gym.sim.control import write
from arena_gym.sim.divergence import bad_rows, clock_checks
from arena_gym.tasks.step import evaluate, read_poses


@kernel
def before_physics(actions, low, high, active, twist, sim):  # pragma: no cover - compiled
    """Box actions (n, k) checked finite and clipped into [low, high] as the twists (zero
    for envs not `active`), staged as the controller's ((v, omega) as (v, 0, omega)) and
    written into ctrl, the clocks kept, the state about to step checked. Returns (the flat
    index of the first action that is not finite, else -1; how many envs' state is bad)."""
    bad = clip_into(actions, low, high, twist)
    if bad >= 0:
        return bad, 0
    k = twist.shape[1]
    for e in range(twist.shape[0]):
        if not active[e]:
            for j in range(k):
                twist[e, j] = 0.0
        sim.twists[e, 0] = twist[e, 0]
        sim.twists[e, 1] = twist[e, 1] if k == 3 else 0.0
        sim.twists[e, 2] = twist[e, k - 1]
        sim.dirty[e] = False  # written just below
        sim.time_before[e] = sim.time[e]
    write(sim.twists, sim.matrix, sim.actuators, sim.bases, sim.ctrl, sim.envs, sim.envs)
    return -1, bad_rows(sim.before_a, sim.before_b, sim.before_c, sim.bad)


@kernel
def before_cast(sim, nstep, active, tick, adr, pose):  # pragma: no cover - compiled
    """After `nstep` physics steps: the state and clocks of the `active` envs checked (the
    others restarted since; returns how many envs' state is bad, how many clocks fell behind
    and how many started at 0), the lidar's frames, and each robot's pose from its free
    joint at qpos address `adr`."""
    bad = bad_rows(sim.after_a, sim.after_b, sim.after_c, sim.bad)
    lagging, fresh = clock_checks(sim.time_before, sim.time, sim.dt, nstep, active, sim.lag,
                                  sim.fresh)
    frames_into(tick.qpos, tick.rows, tick.adr, tick.offset, tick.rotation, tick.local,
                tick.origins, tick.ray_origins, tick.directions)
    read_poses(tick.qpos, tick.rows, adr, pose)
    return bad, lagging, fresh


@kernel
def after_cast(tick, dist, geomid, clock, task, inputs, out):  # pragma: no cover - compiled
    """The cast's readings (dist, geomid (n, R)), shown as taken at sim time `clock`, then
    the task's step, unless a collision flag waits for its contact list (floor slabs).
    Returns (envs touching something, those with slabs, episodes ended, collided, diverged)."""
    ranges_into(dist, geomid, tick.range_min, tick.range_max, tick.envs, tick.ranges)
    touched, unsure = window(tick.history, tick.time, tick.envs, tick.envs, tick.since,
                             tick.everything, tick.feet, tick.ring, tick.slabs, tick.collided,
                             tick.contacts, tick.kind, tick.pending, tick.extra)
    shown(tick.scan_valid, tick.scan_stamp, tick.scan_count, tick.scan_fresh, clock, tick.envs)
    shown(tick.hit_valid, tick.hit_stamp, tick.hit_count, tick.hit_fresh, clock, tick.envs)
    if unsure:
        return touched, unsure, 0, 0, 0
    ended, collided, diverged = evaluate(task, inputs, out)
    return touched, unsure, ended, collided, diverged
