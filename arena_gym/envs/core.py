"""The navigation task over N lockstep envs: reset and step selected envs, no autoreset.

ArenaVectorEnv (autoreset, Gymnasium vector API) and ArenaEnv (one env) both drive this.
It is wiring: the task's pieces live in arena_gym.tasks (observation, reward terms,
termination, episode sampling, metrics, curriculum). Episodes move the robot, the pool
obstacles and the walking people (`num_pedestrians`, tasks/walkers.py: each env's
pedestrian pool, moved by the social force model once per control step, before the
physics) through state; nothing recompiles.

The env senses through its SensorSuite (built with the env, `sensor_suite`): "scan" is
the robot's declared lidar (its URDF `<sensor>`, else model_params.yaml's laser at its
`robot_sensor_frame` link, as the scene mounts it) with the config's `scan.num_beams` and
`scan.max_range` overriding the declaration when set; "collision" is the sensors' one
collision rule (arena_gym.sensors.contact), over every physics step of the control step.
The suite samples once per control step, at its end (built with hook=False; `observe`
calls `update()` when the sim clock moved), and envs that start an episode are sampled at
once (`SensorSuite.reset`). Readings other wrappers add are sampled likewise.
Observation scan: REP 117's +inf (no return within range) reads the observation's max
range, -inf (closer than the lidar's min range) reads 0; then divided by max range when
`scan.normalize`. Sensor noise seeding: env e draws its noise from
`np.random.default_rng([episode_seed, 1])` (fresh entropy when the episode seed is None),
re-seeded at every seeded reset, so the same seed gives the same readings.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_gym.config import EnvConfig
from arena_gym.envs.extensions import Extensions
from arena_gym.envs.robots import resolve_robot
from arena_gym.kernel_modules import kernels
from arena_gym.scene.obstacle_models import load_model
from arena_gym.scene.rotations import yaw_quat
from arena_gym.scene.store import SceneStore
from arena_gym.sensors import (
    COLLISION_CLASSES,
    CollisionSpec,
    LidarReading,
    LidarSpec,
    SensorSuite,
)
from arena_gym.sensors.contact import PEDESTRIAN
from arena_gym.sim.mechanisms import Mechanisms
from arena_gym.sim.simulator import Simulator
from arena_gym.tasks import observation, step
from arena_gym.tasks.curriculum import Curriculum
from arena_gym.tasks.episodes import PARKED_Z, Episode, EpisodeSampler, ObstaclePool
from arena_gym.tasks.global_paths import GlobalPaths
from arena_gym.tasks.layouts import env_layouts
from arena_gym.tasks.metrics import EpisodeMetrics
from arena_gym.tasks.rewards import StepOutcome, total
from arena_gym.tasks.robot_params import load_robot_params
from arena_gym.tasks.termination import Termination
from arena_gym.tasks.walkers import Walkers, sample_walks

ROBOT = "robot"
_CLASSES = np.asarray(COLLISION_CLASSES, dtype=object)  # index -> "wall", "obstacle", ...


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


class NavigationCore:
    """N envs of the navigation task. Arrays are (num_envs, ...)."""

    def __init__(self, num_envs: int, cfg: EnvConfig) -> None:
        self.cfg, self.n = cfg, num_envs
        urdf, packages, params = resolve_robot(cfg)
        self.params = load_robot_params(params)
        bbox = cfg.optim.obstacles == "bbox"
        # env e's world: worlds[e % len] (or `world`)
        self.layouts = env_layouts(cfg.worlds or (cfg.world,), num_envs, cfg.scenario,
                                   cfg.room_size, self.params.radius, cfg.model_paths, bbox)
        self.layout = self.layouts[0]
        models = [load_model(name, cfg.model_paths) for name in cfg.obstacles]
        self.pool = ObstaclePool.make(cfg.obstacle_pool, cfg.obstacle_size, models, bbox)
        samplers = {id(layout): EpisodeSampler(layout, self.pool, self.params.radius,
                                               cfg.start_clearance, cfg.min_start_goal_distance)
                    for layout in self.layouts}
        self._sampler_of = [samplers[id(layout)] for layout in self.layouts]
        self.sample = self._sampler_of[0]
        self.paths = GlobalPaths(num_envs, cfg, self.layouts, self.params.radius
                                 ) if cfg.paths.subgoal else None
        self.store = SceneStore(num_envs, timestep=cfg.physics_dt,
                                pedestrian_pool=cfg.pedestrian_pool)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a robot's dropped meshes warn once per env
            for env in range(num_envs):
                info = self.store.spawn_urdf(env, ROBOT, urdf, package_paths=packages,
                                             model_params=params)
                self.robot = info if env == 0 else self.robot
                self.layouts[env].build(self.store, env)
                self.store.spawn_prims(env, self.pool.prims())
        self.sim = Simulator(self.store)
        # a world's doors and elevators (none: no tick hook, the step costs what it did)
        # (a plugin's world source may declare none: no attribute at all)
        declared = getattr(self.layout, "mechanisms", None)
        self.mechanisms = Mechanisms(self.sim, declared) if declared else None
        # before the sensors bind: the pedestrian pool's one compile happens here
        self.walkers = Walkers(self.sim, cfg.num_pedestrians, self.layout.footprints(),
                               model=cfg.pedestrian_model, max_boxes=cfg.obstacle_pool
                               ) if cfg.num_pedestrians else None
        scan = LidarSpec(ROBOT, key="scan", num_beams=cfg.scan.num_beams or None,
                         range_max=cfg.scan.max_range or None)
        self._suite = SensorSuite(self.sim, [scan, CollisionSpec(ROBOT, key="collision")],
                                  seed=0, hook=False)  # sampled once per control step
        self._sampled_at = -1.0  # sim clock of the suite's last update
        self.extensions = Extensions(cfg, self._suite, ROBOT)  # config's sensors, plugins
        self.curriculum = Curriculum(cfg.curriculum)
        self.max_steps: int | np.ndarray = cfg.max_episode_steps  # per env with paths
        if self.paths is not None:
            self.max_steps = np.full(num_envs, cfg.max_episode_steps, np.int64)
        self.metrics = EpisodeMetrics(num_envs, cfg.max_episode_steps,
                                      pedestrians=self.walkers is not None,
                                      personal_space=cfg.reward.pedestrian_safety_m)
        self._setup_spaces()
        self._setup_model()
        self.goal = np.zeros((num_envs, 2))
        self.distance = np.zeros(num_envs)
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.last_action = np.zeros((num_envs, self.action_dim))
        self.pose = np.zeros((num_envs, 4))  # x, y, z, yaw
        self.rngs = [np.random.default_rng(i) for i in range(num_envs)]
        self._seeds: list[int | None] = list(range(num_envs))
        self._views_version: tuple[int, ...] | None = None
        for e, seed in enumerate(self._seeds):
            self._seed_suite(e, seed)
        self.extensions.load_plugins(self)

    @property
    def plugins(self) -> list:
        """Handles of the config's runtime plugins (arena_gym.plugins.PluginHandle)."""
        return self.extensions.plugins

    @property
    def sensor_suite(self) -> SensorSuite:
        """The env's SensorSuite: "scan" and "collision", and what the observation wrappers
        of arena_gym.wrappers add (images, depth, IMU, contact), sampled once per step."""
        return self._suite

    def _seed_suite(self, env: int, seed: int | None) -> None:
        # sensor noise draws from its own stream, derived from the episode seed
        self._suite.rngs[env] = np.random.default_rng(None if seed is None else [seed, 1])

    # ------------------------------------------------------------------ setup
    def _setup_spaces(self) -> None:
        p = self.params
        lidar = self._suite["scan"]
        beams = lidar.ranges.shape[1]
        self.max_range = float(lidar.range_max)
        self.action_dim = len(p.low)
        self._action_high = np.array(p.high)  # scales the action change (abrupt_velocity)
        self._no_hits = np.full(self.n, "", dtype=object)  # StepResult.hit without collisions
        self._no_hits.flags.writeable = False
        self._no_divergence = np.zeros(self.n, bool)  # a step in which no env diverged
        self._no_divergence.flags.writeable = False
        if self.cfg.action == "discrete":
            self.action_space = spaces.Discrete(len(p.discrete))
            self.action_dim = 3 if p.holonomic else 2
        else:
            self.action_space = spaces.Box(np.array(p.low, np.float32),
                                           np.array(p.high, np.float32))
        high_scan = 1.0 if self.cfg.scan.normalize else self.max_range
        self.observation_space = observation.observation_space(beams, high_scan, p.low, p.high)
        if self.cfg.paths.subgoal:
            self.observation_space["subgoal"] = self.observation_space["goal"]
        if self.cfg.observe_pedestrians:
            self.observation_space["pedestrians"] = observation.pedestrians_space(
                self.cfg.observe_pedestrians)
        for key, space in self.extensions.spaces.items():
            self.observation_space[key] = space

    def _setup_model(self) -> None:
        model = self.store.model(0)
        lidar = self._suite["scan"]
        beams = np.arange(lidar.ranges.shape[1])
        self.scan_angles = lidar.angle_min + lidar.angle_increment * beams
        # envs share one layout, so ids are the same in every env
        self.qpos_adr = model.joint(self.robot.prefix + "root").qposadr[0]
        self.spawn_z = model.qpos0[self.qpos_adr + 2]
        self.mocap = np.array([model.body_mocapid[model.body(f"env_0/{name}").id]
                               for name in self.pool.names])
        self._pool_offsets, self._pool_z = self.pool.offsets, self.pool.placed_z()
        self._pose_cols = slice(self.qpos_adr, self.qpos_adr + 7)  # (a view: read at once)

    def _views(self) -> None:
        version = self.sim.layout_version
        if version == self._views_version:
            return
        self._qpos = [self.sim.state(e, "qpos") for e in range(self.n)]
        self._mocap_pos = [self.sim.state(e, "mocap_pos") for e in range(self.n)]
        self._mocap_quat = [self.sim.state(e, "mocap_quat") for e in range(self.n)]
        self._views_version = self.sim.layout_version

    # ------------------------------------------------------------------ state
    def _read_pose(self) -> None:
        kernels("tasks.step_kernels").pose_into(self.sim.gather("qpos", self._pose_cols),
                                                self.pose)

    def _sample(self) -> None:
        """Sample the suite once per control step (after the physics, or a reset moved the
        clock); resets sample their envs themselves."""
        if self.sim.clock != self._sampled_at:
            self._suite.update()
            self._sampled_at = self.sim.clock

    def _goal_obs(self) -> np.ndarray:
        return observation.goal_polar(self.goal, self.pose)

    def scan_ranges(self) -> np.ndarray:
        """(num_envs, beams) float64 metres the policy sees: the suite's "scan" reading with
        REP 117's +inf (no return within range) at max_range and -inf (closer than the
        lidar's min range) at 0."""
        self._sample()
        return observation.scan(self._suite["scan"].ranges, self.max_range, False)[0]

    def observe(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Observations of every env, and each env's nearest scan range (for clearance)."""
        scan, nearest = self._scan()
        return self._observation(scan, self._goal_obs()), nearest

    def _scan(self) -> tuple[np.ndarray, np.ndarray]:
        """The observation's scan (float32) and each env's nearest range, from the suite."""
        self._sample()
        _, scan, nearest = observation.scan(self._suite["scan"].ranges, self.max_range,
                                            self.cfg.scan.normalize, ranges=False)
        return scan, nearest

    def _observation(self, scan: np.ndarray, goal_polar: np.ndarray) -> dict[str, np.ndarray]:
        self.goal_polar = goal_polar  # float64, for rewards and termination
        obs = {
            "scan": scan,
            "goal": goal_polar.astype(np.float32),
            "last_action": self.last_action.astype(np.float32),
        }
        if self.paths is not None:
            obs["subgoal"] = observation.goal_polar(self.paths.follower.subgoal(),
                                                    self.pose).astype(np.float32)
        if self.cfg.observe_pedestrians:
            crowd = self.walkers.crowd  # type: ignore[union-attr]
            obs["pedestrians"] = observation.nearest_pedestrians(
                crowd.pos, crowd.vel, crowd.active, self.pose,
                self.cfg.observe_pedestrians).astype(np.float32)
        self.extensions.observe(obs)
        return obs

    # ------------------------------------------------------------------ reset
    def seed(self, env: int, seed: int | None) -> None:
        self.rngs[env] = np.random.default_rng(seed)
        self._seeds[env] = seed
        self._seed_suite(env, seed)

    def reset_envs(self, envs: list[int]) -> list[Episode]:
        """Start new episodes in `envs`; returns their episodes. Call observe() after."""
        self._views()
        self.sim.reset_envs(envs)
        if self.mechanisms is not None:  # doors shut, cabins home, after the state reset
            self.mechanisms.reset(envs)
        episodes = []
        for e in envs:
            if self.paths is not None:
                ep = self.paths.sample(e, self.rngs[e], self.curriculum.obstacles,
                                       self.layouts[e], self.pool)
                self.max_steps[e] = self.paths.time_limit(e)  # type: ignore[index]
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
        self._read_pose()
        self.metrics.reset(mask, self.pose)
        self.distance[mask] = observation.goal_polar(self.goal[mask], self.pose[mask])[:, 0]
        if self.paths is not None:
            self.paths.reset(mask, self.pose)
        self._suite.reset(envs)  # reset observations of the sensors are current
        self.extensions.reset(self, envs)
        return episodes

    def _place(self, e: int, ep: Episode) -> None:
        a = self.qpos_adr
        x, y, yaw = ep.start
        self._qpos[e][a : a + 7] = [x, y, self.spawn_z, *yaw_quat(yaw)]
        self._mocap_pos[e][self.mocap] = (0.0, 0.0, PARKED_Z)
        for j, bx, by, byaw in ep.boxes:
            j = int(j)
            m = self.mocap[j]
            # the sampled point is the footprint's centre; the body's origin is off it
            ox, oy = self._pool_offsets[j]
            c, s = math.cos(byaw), math.sin(byaw)
            self._mocap_pos[e][m] = (bx - (c * ox - s * oy), by - (s * ox + c * oy),
                                     self._pool_z[j])
            self._mocap_quat[e][m] = yaw_quat(byaw)
        self.goal[e] = ep.goal

    def _lidar_reach(self) -> float:
        """The longest range of the suite's lidars (wrappers may add some): people beyond
        it skip ray casts (Walkers)."""
        return max((float(ch.reading.range_max) for ch in self._suite.channels.values()
                    if isinstance(ch.reading, LidarReading)), default=0.0)

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

    # ------------------------------------------------------------------ step
    def twist(self, action: np.ndarray) -> np.ndarray:
        """Actions (num_envs, dim) or discrete indices (num_envs,) -> twists (num_envs, dim)."""
        if self.cfg.action == "discrete":
            table = np.array(self.params.discrete)
            twist = table[np.asarray(action, dtype=int)]
            return twist if self.params.holonomic else twist[:, [0, 2]]
        return np.asarray(action, dtype=float)

    def advance(self, twist: np.ndarray, active: np.ndarray) -> None:
        """Physics for one control step; inactive envs get a zero command."""
        self._views()
        if self.walkers is not None:  # their speed term needs where the robot was
            self._prev_pose = self.pose.copy()
        if active.all() and twist.shape[1] == self.action_dim:  # the usual: as they are
            full = twist  # (v, omega) or (vx, vy, omega) rows: set_twists takes either
        else:
            full = np.zeros((self.n, 3))  # (vx, vy, omega); inactive envs stand still
            full[:, 0], full[:, 2] = twist[:, 0], twist[:, -1]
            if self.action_dim == 3:
                full[:, 1] = twist[:, 1]
            full[~active] = 0.0
        if self.walkers is not None:  # people take their step of the control step too
            self.walkers.lidar_range = self._lidar_reach()
            self.walkers.step(self.cfg.control_dt, self.pose[:, :2], self.params.radius)
        # staged for all envs at once; the controller writes ctrl at the step's ticks
        self.sim.controller.set_twists(ROBOT, full)
        self.sim.step(self.cfg.substeps)
        self.extensions.step(self)

    def evaluate(self, twist: np.ndarray, active: np.ndarray) -> StepResult:
        """Observation, reward terms, termination after advance() (and any resets since).
        Episodes that end here are finished: their result and metrics are in the result,
        and (unless paused) the curriculum has counted them."""
        to_go = None
        if self.paths is not None:  # (step.evaluate reads the poses again, the same)
            self._read_pose()
            to_go = self.paths.update(self.pose, active)  # re-plans
        scan, nearest = self._scan()
        diverged = self._no_divergence
        if self.sim.diverged:  # the envs whose physics blew up in advance()
            diverged = np.zeros(self.n, bool)
            diverged[self.sim.diverged] = True
        before, after = self.distance, None  # None: the goal's distance now
        if to_go is not None and self.cfg.paths.progress == "path":
            before, after = to_go
        ev = step.evaluate(self.cfg.reward, self.sim.gather("qpos", self._pose_cols),
                           self.pose, self.goal, before, after,
                           self.cfg.goal_radius, self._suite["collision"].collided, diverged,
                           self.steps, self.max_steps, active, twist, self.last_action,
                           self._action_high, nearest, self.params.radius)
        end, distance = ev.termination, ev.distance
        # a diverged step's motion is not the policy's (none diverged: the active envs)
        counted = active if diverged is self._no_divergence else active & ~end.diverged
        terms, reward = self._terms(ev, before, distance if after is None else after,
                                    twist, counted)
        self.metrics.update(self.pose, end.collided, active, counted)
        self.distance = distance  # (steps and last_action counted the step in evaluate)
        obs = self._observation(scan, ev.polar)
        hit = self._no_hits
        if ev.num_collided:
            hit = np.full(self.n, "", dtype=object)
            hit[end.collided] = _CLASSES[self._suite["collision"].kind[end.collided]]
        episodes = {int(e): self._finish(int(e), end.result(int(e)), hit[e])
                    for e in end.ended.nonzero()[0]} if ev.num_ended else {}
        diverging = 0 if diverged is self._no_divergence else int(end.diverged.sum())
        return StepResult(obs, reward, end, terms, episodes, active.copy(), hit,
                          ev.num_collided, diverging)

    def _terms(self, ev: step.Evaluation, before: np.ndarray, after: np.ndarray,
               twist: np.ndarray, counted: np.ndarray
               ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The step's reward terms and reward: the built-ins as evaluated, the others (and
        all where a built-in was replaced) from a StepOutcome; 0 where not `counted`."""
        intact, others = step.remaining_terms(self.cfg.reward, self.walkers is not None)
        terms = ev.terms() if intact else {}
        if not others and self.walkers is None:
            return terms, ev.reward
        end = ev.termination
        outcome = StepOutcome(before, after, end.reached, end.collided, ev.clearance,
                              twist[:, 0], ev.change, sensors=self._suite)
        if self.walkers is not None:
            outcome.pedestrian_distance = self.walkers.distances(self.pose).min(axis=1)
            outcome.hit_pedestrian = end.collided & (self._suite["collision"].kind == PEDESTRIAN)
            moved = np.hypot(*(self.pose[:, :2] - self._prev_pose[:, :2]).T) * counted
            outcome.speed = moved / self.cfg.control_dt
            self.metrics.update_pedestrians(outcome.pedestrian_distance, outcome.speed,
                                            outcome.hit_pedestrian, counted)
        every = counted.all()
        for name, fn in others:
            value = fn(self.cfg.reward, outcome)
            terms[name] = value if every else np.where(counted, value, 0.0)
        return terms, total(terms)

    def step_envs(self, twist: np.ndarray, active: np.ndarray) -> StepResult:
        self.advance(twist, active)
        return self.evaluate(twist, active)

    def _finish(self, e: int, result: str, hit: str) -> dict[str, Any]:
        """The episode's result and metrics, and what a collision hit ("" for other
        results); the curriculum counts the policy's outcomes (a divergence is none)."""
        self.curriculum.count(result)
        out = {**self.metrics.episode(e, result, self.cfg.control_dt), "hit": hit,
               "goal": self.goal[e].copy()}
        if self.paths is not None:
            out.update(self.paths.episode(e))
        return out

    def close(self) -> None:
        self.extensions.close()
        self._suite.close()
        self.sim.close()
