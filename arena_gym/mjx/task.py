"""The navigation task on MJX as pure functions: `reset(key) -> State`,
`step(state, action) -> State` for one env, jit-compiled and vmapped over envs by MjxTask.

All envs share one model (arena_gym.mjx.model: the CPU env's, adapted); an episode moves the
robot and the pool boxes (mocap bodies, `State.data.mocap_pos`) without recompiling. One
control step: the twist becomes wheel speeds through the CPU drive's matrix (written to ctrl
once, as the CPU controller does for an open-loop drive), `substeps` MJX steps, a collision
check after each (the CPU's rule: a robot geom touching anything outside the robot except
its feet on the floor), then the lidar through `mjx.ray` (the CPU lidar's frame, beams and
range; REP 117 misses and too-close returns read max range and 0), the observation, the
CPU's reward terms (arena_gym.tasks.rewards) and termination (tasks.termination.classify).

Autoreset is NEXT_STEP, as the CPU vector env: the step after an episode ends samples a new
episode from the env's key (never a cached first state), ignores the action, and returns
the first observation with reward 0 and no termination.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from arena_gym.config import EnvConfig
from arena_gym.geometry.rotations import quat_yaw
from arena_gym.mjx import sampling
from arena_gym.mjx.deps import choose_impl, require
from arena_gym.mjx.model import Layout, build_layout
from arena_gym.sim.divergence import MAXVAL
from arena_gym.tasks.observation import goal_polar
from arena_gym.tasks.rewards import StepOutcome, reward_terms, total
from arena_gym.tasks.sampling import PARKED_Z, placement
from arena_gym.tasks.termination import classify

WALL, OBSTACLE = 1, 2  # arena_gym.sensors.contact's classes, as ints ("wall", "obstacle")
ENV_AXIS = "env"  # the name `reset`/`step` vmap over: under MuJoCo Warp, the env's world index
# MuJoCo Warp's buffers: all worlds' contacts share one (of CONTACTS_PER_ENV x N slots),
# constraint rows are per world. The arena_diffbot against a wall or box makes <= 10
# contacts and 27 rows (measured in C MuJoCo); the margin covers a robot wedged in a corner.
CONTACTS_PER_ENV = 32
CONSTRAINTS_PER_ENV = 128
# what an autoreset replaces: MuJoCo's integration state (mjSTATE_INTEGRATION: the rest
# of mjData is recomputed from it by the next step) and qacc, which the divergence check
# reads. Under MuJoCo Warp the contact buffer is shared by all envs and must not be.
STATE_FIELDS = ("time", "qpos", "qvel", "act", "qacc_warmstart", "ctrl", "qfrc_applied",
                "xfrc_applied", "mocap_pos", "mocap_quat", "qacc")


class State(NamedTuple):
    """One env (a leading axis of num_envs when batched). A JAX pytree."""

    data: Any  # mjx.Data
    key: Any  # the env's PRNG key: each autoreset splits it
    goal: Any  # (2,) world frame
    distance: Any  # m to the goal
    steps: Any  # control steps of the episode
    last_action: Any  # (2,) the last twist
    obs: dict[str, Any]  # "scan", "goal", "last_action", float32
    reward: Any
    terminated: Any
    truncated: Any
    ended: Any  # the last step ended the episode: the next one resets (NEXT_STEP)
    active: Any  # this step stepped the episode (False: it was the autoreset)
    result: Any  # int8: 0 running, 1 goal, 2 collision, 3 timeout, 4 diverged
    hit: Any  # int8: what a collision hit: 0 none, 1 wall, 2 obstacle
    terms: dict[str, Any]  # each reward term
    obstacles: Any  # (2,) int32: the pool boxes' count range of the next autoreset (the
    # curriculum's stage; MjxVectorEnv sets it as its curriculum advances)


@dataclass(frozen=True)
class MjxTask:
    """The navigation task of `cfg` on MJX. `reset(keys)` and `step(state, actions)` are
    batched over the leading axis of their arguments (jit-compiled on first call per shape);
    `reset_one`/`step_one` are the single-env pure functions they vmap."""

    cfg: EnvConfig
    layout: Layout
    impl: str

    @classmethod
    def make(cls, cfg: EnvConfig, impl: str | None = None) -> MjxTask:
        require()
        task = cls(cfg, build_layout(cfg), impl or choose_impl())
        _ = task.model, task._template  # now: built inside a trace they would leak
        return task

    @cached_property
    def model(self) -> Any:
        _, _, mjx = require()
        return mjx.put_model(self.layout.model, impl=self.impl)

    @cached_property
    def _template(self) -> Any:
        return self.template(1)

    def template(self, num_envs: int) -> Any:
        """A fresh mjx.Data for a batch of `num_envs` (MuJoCo Warp sizes its one contact
        buffer for all of them; the JAX implementation's does not depend on it)."""
        _, _, mjx = require()
        if self.impl != "warp":
            return mjx.make_data(self.model)
        return mjx.make_data(self.layout.model, impl="warp",
                             naconmax=CONTACTS_PER_ENV * num_envs, njmax=CONSTRAINTS_PER_ENV)

    def _batched(self, fn: Any) -> Any:
        """`fn(template, *args)` vmapped over the args' leading axis (named ENV_AXIS) and
        jit-compiled, with the template for that many envs."""
        jax, _, _ = require()
        compiled: dict[int, Any] = {}

        def run(*args: Any) -> Any:
            n = len(args[-1])  # every argument has the env axis first
            if n not in compiled:
                template = self.template(n) if self.impl == "warp" else self._template
                compiled[n] = jax.jit(jax.vmap(lambda *a: fn(template, *a),
                                               axis_name=ENV_AXIS))
            return compiled[n](*args)

        return run

    @cached_property
    def reset(self):
        """`reset_one` batched: (keys, obstacles=None), obstacles (num_envs, 2)."""
        run = self._batched(lambda template, key, obst: self.reset_one(key, obst, template))

        def reset(keys: Any, obstacles: Any = None) -> State:
            _, jnp, _ = require()
            if obstacles is None:
                obstacles = jnp.tile(jnp.asarray(self.start_obstacles, jnp.int32),
                                     (len(keys), 1))
            return run(keys, jnp.asarray(obstacles, jnp.int32))

        return reset

    @cached_property
    def step(self):
        jax, _, _ = require()
        return jax.jit(jax.vmap(self.step_one, axis_name=ENV_AXIS))

    @property
    def num_beams(self) -> int:
        return len(self.layout.directions)

    # ---------------------------------------------------------------- pieces
    @property
    def start_obstacles(self) -> tuple[int, int]:
        """The curriculum's start stage's pool box count range."""
        cur = self.cfg.curriculum
        return tuple(cur.stages[min(cur.start_stage, len(cur.stages) - 1)])

    def _episode(self, key: Any, obstacles: Any, template: Any = None) -> tuple[Any, Any]:
        """A fresh MjData of a new episode drawn from `key` with a pool box count in
        `obstacles` (min, max), and its goal."""
        _, jnp, _ = require()
        lay = self.layout
        draw = sampling.sample(key, jnp.asarray(lay.sizes), lay.room, obstacles,
                               lay.radius,
                               self.cfg.start_clearance, self.cfg.min_start_goal_distance)
        return self._place(draw, template), draw.goal

    def _place(self, draw: sampling.Draw, template: Any = None) -> Any:
        """A fresh MjData (from `template`, by default the one-env one) with the robot at
        the draw's start and its pool boxes placed (the rest parked under the floor), as
        the CPU task (tasks.sampling.placement)."""
        _, jnp, _ = require()
        lay = self.layout
        t = self._template if template is None else template
        a = lay.qpos_adr
        robot, pos, quats = placement(draw.start, draw.boxes, jnp.zeros((len(lay.sizes), 2)),
                                      jnp.asarray(lay.placed_z), lay.spawn_z)
        qpos = t.qpos.at[a:a + 7].set(robot)
        placed = draw.placed[:, None]
        parked = jnp.asarray([0.0, 0.0, PARKED_Z])
        mocap_pos = t.mocap_pos.at[lay.mocap].set(jnp.where(placed, pos, parked))
        mocap_quat = t.mocap_quat.at[lay.mocap].set(
            jnp.where(placed, quats, t.mocap_quat[lay.mocap]))
        return t.replace(qpos=qpos, mocap_pos=mocap_pos, mocap_quat=mocap_quat)

    def _pose(self, data: Any) -> Any:
        """(4,) x, y, z, yaw of the robot's free joint (as NavigationCore._read_pose)."""
        _, jnp, _ = require()
        q = data.qpos[self.layout.qpos_adr:self.layout.qpos_adr + 7]
        return jnp.concatenate([q[:3], quat_yaw(q[3:7])[None]])

    def scan(self, data: Any) -> Any:
        """(beams,) ranges in [0, max range] from the robot's lidar (kinematics current)."""
        jax, jnp, mjx = require()
        lay = self.layout
        origin, world = lay.rays(data.qpos[lay.qpos_adr:lay.qpos_adr + 7])

        def cast(v):
            return mjx.ray(self.model, data, origin, v, geomgroup=lay.geomgroup)

        dist, geom = jax.vmap(cast)(world)
        miss = (geom < 0) | (dist > lay.range_max)
        return jnp.where(miss, lay.range_max, jnp.where(dist < lay.range_min, 0.0, dist))

    def _observe(self, data: Any, goal: Any, last_action: Any) -> tuple[dict, Any, Any]:
        _, jnp, mjx = require()
        data = mjx.kinematics(self.model, data)  # reset envs' boxes moved
        ranges = self.scan(data)
        polar = goal_polar(goal[None], self._pose(data)[None])[0]
        scan = ranges / self.layout.range_max if self.cfg.scan.normalize else ranges
        obs = {"scan": scan.astype(jnp.float32), "goal": polar.astype(jnp.float32),
               "last_action": last_action.astype(jnp.float32)}
        return obs, ranges, polar

    def _physics(self, data: Any, twist: Any) -> tuple[Any, Any, Any]:
        """One control step of physics; whether the robot collided at any physics step, and
        whether with a pool box."""
        jax, jnp, mjx = require()
        lay = self.layout
        full = jnp.stack([twist[0], 0.0, twist[-1]])
        data = data.replace(ctrl=data.ctrl.at[lay.actuators].set(jnp.asarray(lay.drive) @ full))
        collision, obstacle = jnp.asarray(lay.collision), jnp.asarray(lay.obstacle)

        def tick(carry, _):
            d, hit, box = carry
            d = mjx.step(self.model, d)
            dist, geom = self._contacts(d)
            touching = (dist < 0) & collision[geom[:, 0], geom[:, 1]]
            on_box = touching & (obstacle[geom[:, 0]] | obstacle[geom[:, 1]])
            return (d, hit | touching.any(), box | on_box.any()), None

        start = (data, jnp.bool_(False), jnp.bool_(False))
        (data, hit, box), _ = jax.lax.scan(tick, start, None, length=self.cfg.substeps)
        return data, hit, box

    # ---------------------------------------------------------------- the task
    def reset_one(self, key: Any, obstacles: Any = None, template: Any = None) -> State:
        """A new episode drawn from `key` with a pool box count in `obstacles` (min, max;
        default the curriculum's start stage's), which its autoresets keep; the state keeps
        a key split from `key` for them. Under MuJoCo Warp, vmap it with
        `template=self.template(n)` and axis_name=ENV_AXIS (as `reset` does)."""
        _, jnp, _ = require()
        key, sub = _split(key)
        obstacles = jnp.asarray(self.start_obstacles if obstacles is None else obstacles,
                                jnp.int32)
        data, goal = self._episode(sub, obstacles, template)
        return self._first(data, goal, key, obstacles)

    def start_one(self, draw: sampling.Draw, key: Any, template: Any = None) -> State:
        """The episode `draw` (a given start, goal and pool placement: the same episode as
        a CPU env's, say); `key` seeds the autoresets after it."""
        _, jnp, _ = require()
        obstacles = jnp.asarray(self.start_obstacles, jnp.int32)
        return self._first(self._place(draw, template), draw.goal, key, obstacles)

    @cached_property
    def start(self):
        """`start_one` batched and jit-compiled: (draws, keys) with a leading env axis."""
        return self._batched(lambda template, draw, key: self.start_one(draw, key, template))

    def _first(self, data: Any, goal: Any, key: Any, obstacles: Any) -> State:
        _, jnp, _ = require()
        zero2 = jnp.zeros(2)
        obs, _, polar = self._observe(data, goal, zero2)
        terms = {name: jnp.float32(0.0) for name in self.term_names}
        false = jnp.bool_(False)
        return State(data, key, goal, polar[0], jnp.int32(0), zero2, obs, jnp.float32(0.0),
                     false, false, false, false, jnp.int8(0), jnp.int8(0), terms, obstacles)

    @cached_property
    def term_names(self) -> tuple[str, ...]:
        probe = np.zeros(1)
        out = StepOutcome(probe, probe, probe > 0, probe > 0, probe, probe, probe)
        return tuple(reward_terms(self.cfg.reward, out))

    def step_one(self, state: State, action: Any) -> State:
        _, jnp, _ = require()
        lay = self.layout
        restart = state.ended
        active = ~restart
        twist = jnp.clip(action, lay.low, lay.high).astype(jnp.float32)
        twist = jnp.where(active, twist, 0.0)  # a restarting env stands still, as on the CPU
        stepped, hit, box = self._physics(state.data, twist)
        key, sub = _split(state.key)
        fresh, fresh_goal = self._episode(sub, state.obstacles)
        data = restarted(restart, fresh, stepped)
        goal = jnp.where(restart, fresh_goal, state.goal)
        last = jnp.where(restart, 0.0, state.last_action)
        q = data.qpos, data.qvel, data.qacc
        diverged = ~jnp.all(jnp.concatenate([jnp.abs(v) <= MAXVAL for v in q]))
        obs, ranges, polar = self._observe(data, goal, jnp.where(active, twist, last))
        distance = polar[0]
        before = jnp.where(restart, distance, state.distance)  # a reset's own distance
        steps = jnp.where(restart, 0, state.steps + 1)
        end = classify(distance, self.cfg.goal_radius, hit, diverged & active, steps,
                       self.cfg.max_episode_steps, active)
        change = (twist - last) / jnp.asarray(lay.high)
        outcome = StepOutcome(before, distance, end.reached, end.collided,
                              ranges.min() - lay.radius, twist[0],
                              jnp.sqrt(jnp.sum(change * change)))
        counted = active & ~end.diverged
        terms = {k: jnp.where(counted, v, 0.0).astype(jnp.float32)
                 for k, v in reward_terms(self.cfg.reward, outcome).items()}
        result = jnp.select([end.reached, end.collided, end.timed_out, end.diverged],
                            [1, 2, 3, 4], 0).astype(jnp.int8)
        kind = jnp.where(end.collided, jnp.where(box, OBSTACLE, WALL), 0).astype(jnp.int8)
        return State(data, key, goal, distance, steps, obs["last_action"].astype(twist.dtype),
                     obs, total(terms).astype(jnp.float32), end.terminated, end.truncated,
                     end.terminated | end.truncated, active, result, kind, terms,
                     state.obstacles)


    def _contacts(self, data: Any) -> tuple[Any, Any]:
        """(dist, geom pairs) of this env's contact slots; a slot that is not one of its
        contacts reads dist 0 (no contact, as the JAX implementation's unused slots)."""
        jax, jnp, _ = require()
        if self.impl != "warp":  # one slot per candidate pair and contact point, per env
            return data._impl.contact.dist, data._impl.contact.geom
        # MuJoCo Warp: one buffer for all envs (not batched under vmap), the first nacon
        # slots used, each tagged with its world: the env's index on the vmapped axis
        w = data._impl
        mine = ((jnp.arange(w.contact__dist.shape[0]) < w.nacon[0])
                & (w.contact__worldid == jax.lax.axis_index(ENV_AXIS)))
        return jnp.where(mine, w.contact__dist, 0.0), w.contact__geom


def restarted(mask: Any, fresh: Any, data: Any) -> Any:
    """`data` with the envs where `mask` holds replaced by `fresh` (mjx.Data, one env or a
    batch with `mask` over its leading axis): their STATE_FIELDS."""
    return data.replace(**{k: _pick(mask, getattr(fresh, k), getattr(data, k))
                           for k in STATE_FIELDS})


def select(mask: Any, fresh: State, state: State) -> State:
    """`state` with the envs where `mask` (num_envs,) holds replaced by `fresh`'s."""
    jax, _, _ = require()
    rest = jax.tree_util.tree_map(lambda f, s: _pick(mask, f, s),
                                  fresh._replace(data=None), state._replace(data=None))
    return rest._replace(data=restarted(mask, fresh.data, state.data))


def _pick(mask: Any, f: Any, s: Any) -> Any:
    _, jnp, _ = require()
    return jnp.where(mask.reshape(mask.shape + (1,) * (f.ndim - mask.ndim)), f, s)


def _split(key: Any) -> tuple[Any, Any]:
    jax, _, _ = require()
    key, sub = jax.random.split(key)
    return key, sub
