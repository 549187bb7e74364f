"""NavigationTask: the navigation task over N envs of a simulator, from episode to episode.

It owns what the task is: episodes (sampled, then placed through state: the robot, the pool
obstacles, the walking people), the observation, the reward terms, how episodes end, their
metrics, the curriculum, the walkers and the global paths. It reads the world through one
inputs record per step (tasks/step.py: the robots' poses, the lidar's ranges, the collision
flags, what diverged, the command) and never reaches into the sensors.

    task = NavigationTask(cfg, sim, world)           # world: the robot, layouts, pool
    task.use_lidar(beams, max_range)                 # the scan the observation carries
    episodes = task.reset([0, 1])                    # after sim.reset_envs
    result = task.evaluate(inputs)                   # a StepResult: obs, reward, terms...

`evaluate` runs the compiled `tasks.step.evaluate` on `task.arrays`, then `finish`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_gym.assets.robot_params import RobotParams
from arena_gym.config import EnvConfig
from arena_gym.geometry.groups import set_detection
from arena_gym.people.walkers import Walkers, sample_walks
from arena_gym.registry import REWARD_TERMS
from arena_gym.sim.simulator import Simulator
from arena_gym.tasks import observation
from arena_gym.tasks.curriculum import Curriculum
from arena_gym.tasks.global_paths import GlobalPaths
from arena_gym.tasks.metrics import EpisodeMetrics
from arena_gym.tasks.rewards import (
    BUILTIN,
    PEDESTRIAN,
    StepOutcome,
    applying,
    checked_term,
    total,
    weights,
)
from arena_gym.tasks.sampling import PARKED_Z, Episode, EpisodeSampler, ObstaclePool, placement
from arena_gym.tasks.step import (
    FLAGS,
    WEIGHTS_AT,
    StepInputs,
    StepOutputs,
    TaskArrays,
    evaluate_plain,
    people_step,
    plain,
    read_poses,
)
from arena_gym.tasks.termination import Termination

_NAMES = tuple(name for name, _ in BUILTIN)


@dataclass(frozen=True)
class World:
    """What the task runs in, as the env built it: the robot (its params, its base's qpos
    address, width and spawn height, its name in the scene), each env's layout and the
    obstacle pool (its mocap ids), and the names of the collision classes the inputs' `kind`
    indexes."""

    params: RobotParams
    robot: str
    qpos_adr: int
    spawn_z: float
    layouts: list[Any]
    pool: ObstaclePool
    mocap: np.ndarray
    classes: tuple[str, ...]
    root_width: int = 7  # qpos of the base: 7 (free joint) or 3 (planar: x, y, yaw)


@dataclass
class StepResult:
    """One control step of every env. Arrays are (num_envs,) unless noted."""

    obs: dict[str, np.ndarray]  # (num_envs, ...) per key
    reward: np.ndarray
    termination: Termination  # how (and whether) each env's episode ended
    terms: dict[str, np.ndarray]  # each named reward term; reward is their sum
    episodes: dict[int, dict[str, Any]]  # env -> result and metrics, for episodes that ended
    active: np.ndarray  # envs that stepped (the others were restarting)
    hit: np.ndarray  # object: what a collision that ended the episode hit, else ""
    num_collided: int = 0  # envs whose episode ended in a collision
    num_diverged: int = 0  # envs whose physics diverged

    @property
    def terminated(self) -> np.ndarray:
        return self.termination.terminated

    @property
    def truncated(self) -> np.ndarray:
        return self.termination.truncated

    @property
    def diverged(self) -> np.ndarray:
        return self.termination.diverged


class NavigationTask:
    """The navigation task of `cfg` in every env of `sim` (see the module docstring)."""

    def __init__(self, cfg: EnvConfig, sim: Simulator, world: World) -> None:
        self.cfg, self.sim, self.world = cfg, sim, world
        self.n = n = sim.store.num_envs
        self.params = params = world.params
        self.layouts, self.pool = world.layouts, world.pool
        samplers = {id(layout): EpisodeSampler(layout, world.pool, params.radius,
                                               cfg.start_clearance, cfg.min_start_goal_distance)
                    for layout in world.layouts}
        self._sampler_of = [samplers[id(layout)] for layout in world.layouts]
        self.paths = GlobalPaths(n, cfg, world.layouts, params.radius
                                 ) if cfg.paths.subgoal else None
        # the people of every env (their pool's one compile happens here)
        self.walkers = Walkers(sim, cfg.num_pedestrians, world.layouts[0].footprints(),
                               model=cfg.pedestrian_model, max_boxes=cfg.obstacle_pool
                               ) if cfg.num_pedestrians else None
        self.curriculum = Curriculum(cfg.curriculum)
        self.metrics = EpisodeMetrics(n, cfg.max_episode_steps, pedestrians=bool(self.walkers),
                                      personal_space=cfg.reward.pedestrian_safety_m)
        self.goal = np.zeros((n, 2))
        self.distance = np.zeros(n)
        self.steps = np.zeros(n, dtype=np.int64)
        self.max_steps = np.full(n, cfg.max_episode_steps, dtype=np.int64)
        self.last_action = np.zeros((n, len(params.low)))
        self.pose = np.zeros((n, 4))  # x, y, z, yaw
        self._prev_pose = self.pose.copy()  # before the step (the people's speed term)
        self.rngs = [np.random.default_rng(i) for i in range(n)]
        self._pool_offsets, self._pool_z = world.pool.offsets, world.pool.placed_z()
        self._pool_bodies: list[tuple] = [(None,)] * n  # per env: its model's (_detect_pool)
        self._all = np.arange(n, dtype=np.int64)
        self._views_version: tuple[int, ...] | None = None
        self._others_of: tuple[Any, list] = (None, [])  # _others', per registry version
        self._people_only: list | None = None  # _others' list where it is PEDESTRIAN's
        self._people_values = np.zeros(3)  # people_step's scratch: one env's terms
        # people_step's compiled function, looked up on first use: its arguments are this
        # task's, the crowd's and the metrics' arrays, and arrays made alike at every step
        # (numba's typing of its 18 arguments at each call costs more than one env's terms)
        self._people_call: Any = None
        self._pedestrian_kind = world.classes.index("pedestrian") if (
            "pedestrian" in world.classes) else -1
        self.sensors: Any = None  # what a plugin's term reads as outcome.sensors (env's)
        self._no_hits = np.full(n, "", dtype=object)  # StepResult.hit without collisions
        self._no_hits.flags.writeable = False

    # ------------------------------------------------------------------ setup
    def use_lidar(self, beams: int, max_range: float) -> None:
        """The scan the observation carries: `beams` ranges of a lidar reaching `max_range`
        m (normalised by it when cfg.scan.normalize). Makes the spaces and the step's
        arrays."""
        cfg, p, n = self.cfg, self.params, self.n
        self.max_range = float(max_range)
        if cfg.action == "discrete":
            self.action_space: spaces.Space = spaces.Discrete(len(p.discrete))
        else:
            self.action_space = spaces.Box(np.array(p.low, np.float32),
                                           np.array(p.high, np.float32))
        high_scan = 1.0 if cfg.scan.normalize else self.max_range
        self.observation_space = observation.observation_space(beams, high_scan, p.low, p.high)
        if self.paths is not None:
            self.observation_space["subgoal"] = self.observation_space["goal"]
        if cfg.observe_pedestrians:
            self.observation_space["pedestrians"] = observation.pedestrians_space(
                cfg.observe_pedestrians)
        k = len(p.low)
        m = self.metrics
        self.arrays = TaskArrays(
            self.goal, self.distance, self.steps, self.max_steps, self.last_action,
            np.array(p.high, dtype=float), weights(cfg.reward), float(cfg.goal_radius),
            float(p.radius), self.max_range, self.max_range if cfg.scan.normalize else 1.0,
            self.paths is not None and cfg.paths.progress == "path", self.paths is not None,
            m.pose, m.collided, m.steps)
        self.outputs = StepOutputs(
            np.zeros((n, 2)), np.zeros((len(FLAGS), n), bool), np.zeros((len(BUILTIN), n)),
            np.zeros(n), np.zeros(n), np.zeros(n), np.zeros((n, beams), np.float32),
            np.zeros((n, 2), np.float32), np.zeros((n, k), np.float32),
            np.zeros((n, 2), np.float32), np.zeros(len(BUILTIN)))
        self._subgoal = np.zeros((n, 2))
        self._task_plain, _, self._out_plain = plain(self.arrays, (), self.outputs)
        # evaluate_plain's compiled function, looked up on the first step: its arguments are
        # the task's arrays above and a step's inputs, arrays of the same kinds at every step
        # (`inputs`; numba's typing of every argument at each call costs more than the
        # evaluation of one env)
        self._evaluate: Any = None

    def seed(self, env: int, seed: int | None) -> None:
        self.rngs[env] = np.random.default_rng(seed)

    def twist(self, action: np.ndarray) -> np.ndarray:
        """Actions (num_envs, dim) or discrete indices (num_envs,) -> twists (num_envs, dim):
        (v, omega), or (vx, vy, omega) for a holonomic robot."""
        if self.cfg.action == "discrete":
            table = np.array(self.params.discrete)
            twist = table[np.asarray(action, dtype=int)]
            return twist if self.params.holonomic else twist[:, [0, 2]]
        return np.asarray(action, dtype=float)

    # ------------------------------------------------------------------ episodes
    def _views(self) -> None:
        version = self.sim.layout_version
        if version == self._views_version:
            return
        sim = self.sim
        self._qpos = [sim.state(e, "qpos") for e in range(self.n)]
        self._mocap_pos = [sim.state(e, "mocap_pos") for e in range(self.n)]
        self._mocap_quat = [sim.state(e, "mocap_quat") for e in range(self.n)]
        self._views_version = sim.layout_version

    def reset(self, envs: list[int]) -> list[Episode]:
        """Start new episodes in `envs` (after the simulator reset them): each drawn from
        the env's generator, placed through state. Returns their episodes."""
        self._views()
        episodes = []
        for e in envs:
            if self.paths is not None:
                ep = self.paths.sample(e, self.rngs[e], self.curriculum.obstacles,
                                       self.layouts[e], self.pool)
                self.max_steps[e] = self.paths.time_limit(e)
            else:
                ep = self._sampler_of[e](self.rngs[e], self.curriculum.obstacles)
            self._place(e, ep)
            if self.walkers is not None:
                self._place_walkers(e, ep)
            episodes.append(ep)
        mask = np.zeros(self.n, bool)
        mask[envs] = True
        self.steps[mask] = 0
        self.last_action[mask] = 0.0
        self.read_poses()
        self.metrics.reset(mask, self.pose)
        self.distance[mask] = observation.goal_polar(self.goal[mask], self.pose[mask])[:, 0]
        if self.paths is not None:
            self.paths.reset(mask, self.pose)
        return episodes

    def _place(self, e: int, ep: Episode) -> None:
        """The episode into env e's state: the robot at its start, the pool bodies it
        places (`placement`), the others parked out of sight."""
        a, mocap = self.world.qpos_adr, self.world.mocap
        index = ep.boxes[:, 0].astype(int)
        robot, pos, quat = placement(np.asarray(ep.start, dtype=float), ep.boxes[:, 1:4],
                                     self._pool_offsets[index], self._pool_z[index],
                                     self.world.spawn_z)
        if self.world.root_width == 7:
            self._qpos[e][a : a + 7] = robot
        else:  # a planar base's joints: its pose itself
            self._qpos[e][a : a + 3] = ep.start
        self._mocap_pos[e][mocap] = (0.0, 0.0, PARKED_Z)
        self._mocap_pos[e][mocap[index]] = pos
        self._mocap_quat[e][mocap[index]] = quat
        self.goal[e] = ep.goal
        self._detect_pool(e, index)

    def _detect_pool(self, e: int, index: np.ndarray) -> None:
        """Only the pool slots `index` env e's episode placed in collision detection: a
        parked one waits under the ground, where it touches nothing, and MuJoCo's broadphase
        bounds every collidable body at every physics step. A recompile's model has them all in
        until the env's next episode."""
        scene = self.sim.store.scene(e)
        model = scene.compiled
        if self._pool_bodies[e][0] is not model:  # its bits as compiled
            slot = np.full(model.nbody, -1)
            slot[[model.body(scene.prefix + name).id for name in self.pool.names]] = \
                np.arange(len(self.pool.names))
            bodies = np.flatnonzero(slot[model.body_rootid] >= 0)  # with what hangs on them
            self._pool_bodies[e] = (model, bodies, slot[model.body_rootid[bodies]],
                                    model.body_contype[bodies].copy(),
                                    model.body_conaffinity[bodies].copy())
        _, bodies, slots, contype, conaffinity = self._pool_bodies[e]
        set_detection(model, bodies, np.isin(slots, index), contype, conaffinity)

    def _place_walkers(self, e: int, ep: Episode) -> None:
        """This episode's walking people, drawn after the episode (same stream)."""
        rng = self.rngs[e]
        lo, hi = self.curriculum.pedestrians or (self.cfg.num_pedestrians,) * 2
        count = int(rng.integers(lo, hi + 1))
        boxes = ep.footprints(self.pool)
        starts, waypoints = sample_walks(rng, self.layouts[e], count, boxes, ep.start[:2],
                                         self.params.radius)
        self.walkers.set_boxes(e, boxes)  # type: ignore[union-attr]
        self.walkers.place(e, starts, waypoints, [0] * len(starts), rng)  # type: ignore[union-attr]

    # ------------------------------------------------------------------ stepping
    def read_poses(self) -> np.ndarray:
        """The robots' planar poses (x, y, z, yaw) from their bases' joints, into `pose`."""
        a, width = self.world.qpos_adr, self.world.root_width
        qpos = self.sim.gather("qpos", slice(a, a + width))
        read_poses(qpos, self._all, 0, width, self.world.spawn_z, self.pose)
        return self.pose

    def before_physics(self, lidar_range: float) -> None:
        """What moves before the physics of a control step: the people (who skip ray casts
        beyond `lidar_range` of the robot)."""
        if self.walkers is not None:
            self._prev_pose[:] = self.pose
            self.walkers.lidar_range = lidar_range
            self.walkers.step(self.cfg.control_dt, self.pose[:, :2], self.params.radius)

    def inputs(self, ranges: np.ndarray, collided: np.ndarray, diverged: np.ndarray,
               twist: np.ndarray, active: np.ndarray, step: bool = True) -> StepInputs:
        """The inputs record of a step (`step`: the paths advance, re-planning where a robot
        strayed) or of an observation, for poses read (`read_poses`) since the physics."""
        before = after = self.distance
        subgoal = self._subgoal
        if self.paths is not None:
            if step:
                to_go = self.paths.update(self.pose, active)
                if self.cfg.paths.progress == "path":
                    before, after = to_go
            subgoal = self.paths.follower.subgoal()
        return StepInputs(self.pose, ranges, collided, diverged, twist, active, before, after,
                          subgoal)

    def observe(self, inputs: StepInputs) -> dict[str, np.ndarray]:
        """Every env's observation (inputs.active all False: nothing counts)."""
        evaluate_plain(*plain(self.arrays, inputs, self.outputs))
        return self._observation()

    def evaluate(self, inputs: StepInputs, kind: np.ndarray) -> StepResult:
        """One control step of every env (`kind`: the collision class of each env's
        contact, an index into world.classes)."""
        args = (self._task_plain, tuple(inputs), self._out_plain)
        if self._evaluate is None:
            self._evaluate = evaluate_plain.entry(*args)
        counts = self._evaluate(*args)
        return self.finish(inputs, kind, *counts)

    def finish(self, inputs: StepInputs, kind: np.ndarray, num_ended: int,
               num_collided: int, num_diverged: int) -> StepResult:
        """After `tasks.step.evaluate`: the terms computed apart (the people's, plugins',
        a replaced built-in's), the observation, and the episodes that ended: their result
        and metrics (the curriculum counts them)."""
        out, active = self.outputs, inputs.active
        end = Termination.from_rows(out.flags.copy())  # (written again next step)
        terms, reward = self._terms(inputs, end, kind)
        hit = self._no_hits
        if num_collided:
            hit = np.full(self.n, "", dtype=object)
            hit[end.collided] = np.asarray(self.world.classes, dtype=object)[kind[end.collided]]
        episodes = {int(e): self._finish(int(e), end.result(int(e)), hit[e])
                    for e in end.ended.nonzero()[0]} if num_ended else {}
        return StepResult(self._observation(), reward, end, terms, episodes, active.copy(),
                          hit, num_collided, num_diverged)

    def _observation(self) -> dict[str, np.ndarray]:
        out = self.outputs
        obs = {"scan": out.scan.copy(), "goal": out.goal.copy(),
               "last_action": out.last_action.copy()}
        if self.paths is not None:
            obs["subgoal"] = out.subgoal.copy()
        if self.cfg.observe_pedestrians:
            crowd = self.walkers.crowd  # type: ignore[union-attr]
            obs["pedestrians"] = np.empty((self.n, self.cfg.observe_pedestrians, 5), np.float32)
            observation.nearest_pedestrians(crowd.pos, crowd.vel, crowd.active, self.pose,
                                            obs["pedestrians"])
        return obs

    def _terms(self, inputs: StepInputs, end: Termination, kind: np.ndarray
               ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The step's reward terms and reward: the built-ins as compiled, and the terms that
        apply besides (the people's, plugins', a built-in the registry replaced) from a
        StepOutcome; 0 where not counted (an env inactive or diverged)."""
        out = self.outputs
        terms = dict(zip(_NAMES, out.terms.copy(), strict=False))  # a row per name
        others = self._others()
        if not others and self.walkers is None:
            return terms, out.reward.copy()
        counted = inputs.active & ~end.diverged
        if others is self._people_only:  # the people's own terms, no one else's: compiled
            return self._people_terms(terms, counted, end, kind)
        after = inputs.after if self.arrays.path_progress else out.polar[:, 0]
        outcome = StepOutcome(inputs.before, after, end.reached, end.collided, out.clearance,
                              inputs.twist[:, 0], out.change, sensors=None)
        if self.walkers is not None:
            outcome.pedestrian_distance = self.walkers.distances(self.pose).min(axis=1)
            pedestrian = self.world.classes.index("pedestrian")
            outcome.hit_pedestrian = end.collided & (kind == pedestrian)
            moved = np.hypot(*(self.pose[:, :2] - self._prev_pose[:, :2]).T) * counted
            outcome.speed = moved / self.cfg.control_dt
            self.metrics.update_pedestrians(outcome.pedestrian_distance, outcome.speed,
                                            outcome.hit_pedestrian, counted)
        outcome.sensors = self.sensors
        every = counted.all()
        for name, fn in others:
            value = checked_term(name, fn, self.cfg.reward, outcome, self.n)
            terms[name] = value if every else np.where(counted, value, 0.0)
        return terms, total(terms)

    def _people_terms(self, terms: dict[str, np.ndarray], counted: np.ndarray,
                      end: Termination, kind: np.ndarray
                      ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """`_terms` in worlds with people whose terms are only the people's own: the
        compiled `people_step` (the nearest person, what the collision hit, the speed, the
        social metrics, each pedestrian term and the reward)."""
        crowd, m, out = self.walkers.crowd, self.metrics, self.outputs  # type: ignore[union-attr]
        values = np.zeros((len(PEDESTRIAN), self.n))
        reward = out.reward.copy()
        args = (self._task_plain[WEIGHTS_AT], crowd.pos, crowd.active, self.pose,
                self._prev_pose, end.collided, kind, self._pedestrian_kind, counted,
                float(self.cfg.control_dt), m.personal_space, m.in_space, m.speed_in_space,
                m.min_distance, m.pedestrian_collisions, self._people_values, values, reward)
        if self._people_call is None:
            self._people_call = people_step.entry(*args)
        self._people_call(*args)
        terms.update(zip((name for name, _ in PEDESTRIAN), values, strict=True))
        return terms, reward

    def _others(self) -> list[tuple[str, Any]]:
        """(name, fn) of the terms that apply besides the compiled built-ins: those after
        them, and a built-in the registry replaced (kept until the registry changes). Where
        they are exactly the pedestrian terms as registered, the list is `_people_only`."""
        version = (REWARD_TERMS.version, id(self.cfg.reward))
        if self._others_of[0] != version:
            terms = applying(self.cfg.reward, self.walkers is not None)
            builtin = dict(BUILTIN)
            others = [(name, fn) for name, fn in terms if builtin.get(name) is not fn]
            self._others_of = (version, others)
            self._people_only = others if others == list(PEDESTRIAN) else None
        return self._others_of[1]

    def _finish(self, e: int, result: str, hit: str) -> dict[str, Any]:
        """The episode's result and metrics, and what a collision hit ("" for other
        results); the curriculum counts the policy's outcomes (a divergence is none)."""
        self.curriculum.count(result)
        out = {**self.metrics.episode(e, result, self.cfg.control_dt), "hit": hit,
               "goal": self.goal[e].copy()}
        if self.paths is not None:
            out.update(self.paths.episode(e))
        return out
