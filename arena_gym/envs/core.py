"""N envs of the navigation task in lockstep: reset and step selected envs, no autoreset.

ArenaVectorEnv (autoreset, Gymnasium's vector API) and ArenaEnv (one env) both drive this.
It builds each env's world (the robot, the world's layout, the obstacle pool) into one
SceneStore, steps it with a Simulator, senses through a SensorSuite and hands the task
(arena_gym.tasks.task.NavigationTask: episodes, observation, rewards, termination, metrics,
curriculum, people, paths) one inputs record per step. One way through the step, for one
env and for many alike: Simulator.step, SensorSuite.update, NavigationTask.evaluate, each on
its layer's compiled functions.

The suite ("scan": the robot's declared lidar, its URDF `<sensor>` or model_params.yaml's
laser at its `robot_sensor_frame` link, with the config's `scan.num_beams` and
`scan.max_range` overriding the declaration; "collision": the sensors' one collision rule over
every physics step of the control step) samples once per control step, at its end, and envs
that start an episode are sampled at once (`SensorSuite.reset`). Sensor noise: env e draws
from `np.random.default_rng([episode_seed, 1])` (fresh entropy without a seed), re-seeded at
every seeded reset.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_gym.assets.obstacle_models import load_model
from arena_gym.assets.robot_params import load_robot_params
from arena_gym.config import EnvConfig
from arena_gym.envs.extensions import Extensions
from arena_gym.envs.robots import resolve_robot
from arena_gym.envs.validation import check_actions
from arena_gym.scene.store import SceneStore
from arena_gym.sensors import (
    COLLISION_CLASSES,
    CollisionSpec,
    LidarReading,
    LidarSpec,
    SensorSuite,
)
from arena_gym.sim.mechanism_tick import Mechanisms
from arena_gym.sim.simulator import Simulator
from arena_gym.tasks.observation import clipped_range
from arena_gym.tasks.sampling import Episode, ObstaclePool
from arena_gym.tasks.task import NavigationTask, StepResult, World
from arena_gym.worlds.layouts import env_layouts

ROBOT = "robot"

__all__ = ["ROBOT", "NavigationCore", "StepResult"]


class NavigationCore:
    """N envs of the navigation task. Arrays are (num_envs, ...)."""

    def __init__(self, num_envs: int, cfg: EnvConfig) -> None:
        self.cfg, self.n = cfg, num_envs
        urdf, packages, params_file = resolve_robot(cfg)
        self.params = params = load_robot_params(params_file)
        bbox = cfg.optim.obstacles == "bbox"
        # env e's world: worlds[e % len] (or `world`)
        self.layouts = env_layouts(cfg.worlds or (cfg.world,), num_envs, cfg.scenario,
                                   cfg.room_size, params.radius, cfg.model_paths, bbox)
        self.layout = self.layouts[0]
        models = [load_model(name, cfg.model_paths) for name in cfg.obstacles]
        self.pool = ObstaclePool.make(cfg.obstacle_pool, cfg.obstacle_size, models, bbox)
        self.store = SceneStore(num_envs, timestep=cfg.timestep,
                                pedestrian_pool=cfg.pedestrian_slots)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a robot's dropped meshes warn once per env
            for env in range(num_envs):
                # its IMU's MuJoCo sensors only once a reading asks for them: the task
                # reads none, and MuJoCo computes an accelerometer at every physics step
                info = self.store[env].spawn_urdf(ROBOT, urdf, package_paths=packages,
                                                  model_params=params_file, base=cfg.base,
                                                  imu=False)
                self.robot = info if env == 0 else self.robot
                self.layouts[env].build(self.store, env)
                self.store[env].spawn_prims(self.pool.prims())
        self.sim = Simulator(self.store)
        # a world's doors and elevators (none: no tick hook, the step costs what it did)
        # (a plugin's world source may declare none: no attribute at all)
        declared = getattr(self.layout, "mechanisms", None)
        self.mechanisms = Mechanisms(self.sim, declared) if declared else None
        model = self.store[0].model  # envs share one layout: ids are the same in every env
        self.qpos_adr = int(model.joint(self.robot.root_joint).qposadr[0])
        # the base's height: a free joint's z at rest; a planar base rides at its spawn height
        self.spawn_z = float(model.qpos0[self.qpos_adr + 2] if self.robot.base == "wheeled"
                             else model.body_pos[model.body(self.robot.root_body).id, 2])
        mocap = np.array([model.body_mocapid[model.body(f"env_0/{name}").id]
                          for name in self.pool.names])
        world = World(params, ROBOT, self.qpos_adr, self.spawn_z, self.layouts, self.pool,
                      mocap, COLLISION_CLASSES, self.robot.root_width)
        self.task = NavigationTask(cfg, self.sim, world)  # the people's one compile: here
        scan = LidarSpec(ROBOT, key="scan", num_beams=cfg.scan.num_beams or None,
                         range_max=cfg.scan.max_range or None)
        self._suite = SensorSuite(self.sim, [scan, CollisionSpec(ROBOT, key="collision")],
                                  seed=0, hook=False)  # sampled once per control step
        self._sampled_at = -1.0  # sim clock of the suite's last update
        self.extensions = Extensions(cfg, self._suite, ROBOT)  # config's sensors, plugins
        self.task.sensors = self._suite  # what a plugin's term reads (outcome.sensors)
        lidar = self._suite["scan"]
        self._scan, self._hit = lidar, self._suite["collision"]  # the readings (kept objects)
        self._substeps = cfg.substeps
        beams = lidar.ranges.shape[1]
        self.max_range = float(lidar.range_max)
        self.scan_angles = lidar.angle_min + lidar.angle_increment * np.arange(beams)
        self.task.use_lidar(beams, self.max_range)
        self.action_space = self.task.action_space
        self.observation_space = self.task.observation_space
        for key, space in self.extensions.spaces.items():
            self.observation_space[key] = space
        self._box = spaces.Box(*(np.tile(b, (num_envs, 1)) for b in (
            self.action_space.low, self.action_space.high))) if cfg.action == "continuous" else None
        k = len(params.low)
        self._no_action = np.zeros((num_envs, k))
        self._idle = np.zeros(num_envs, dtype=bool)  # `active` of an observation
        self._no_divergence = np.zeros(num_envs, dtype=bool)  # (never written: the type of
        self._diverged = np.zeros(num_envs, dtype=bool)  # _diverged, for one compile)
        self._seeds: list[int | None] = list(range(num_envs))
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

    def seed(self, env: int, seed: int | None) -> None:
        self.task.seed(env, seed)
        self._seeds[env] = seed
        self._seed_suite(env, seed)

    # ------------------------------------------------------------------ reset, observe
    def reset_envs(self, envs: list[int]) -> list[Episode]:
        """Start new episodes in `envs`; returns their episodes. Call observe() after."""
        self.sim.reset_envs(envs)
        if self.mechanisms is not None:  # doors shut, cabins home, after the state reset
            self.mechanisms.reset(envs)
        episodes = self.task.reset(envs)
        self._suite.reset(envs)  # reset observations of the sensors are current
        self.extensions.reset(self, envs)
        return episodes

    def _sample(self) -> None:
        """Sample the suite once per control step (after the physics, or a reset moved the
        clock); resets sample their envs themselves."""
        if self.sim.clock != self._sampled_at:
            self._suite.update()
            self._sampled_at = self.sim.clock

    def scan_ranges(self) -> np.ndarray:
        """(num_envs, beams) float64 metres the policy sees: the suite's "scan" reading with
        REP 117's +inf (no return within range) at max_range and -inf (closer than the
        lidar's min range) at 0."""
        self._sample()
        return clipped_range(self._suite["scan"].ranges.astype(float), self.max_range)

    def observe(self) -> dict[str, np.ndarray]:
        """Every env's observation as it stands (after a reset)."""
        self._sample()
        scan, hit = self._scan, self._hit
        inputs = self.task.inputs(scan.ranges, hit.collided, self._no_divergence,
                                  self._no_action, self._idle, step=False)
        obs = self.task.observe(inputs)
        self.extensions.observe(obs)
        return obs

    # ------------------------------------------------------------------ step
    def step(self, actions: Any, active: np.ndarray, restarting: list[int] = ()) -> StepResult:
        """One control step: `actions` (checked here: wrong shapes and NaN raise before
        anything moves) drive the `active` envs, the others stand still; the envs of
        `restarting` start new episodes after the physics (NEXT_STEP autoreset: their
        observation is the reset's). Episodes that end here are finished: their result and
        metrics are in the result, and (unless paused) the curriculum counted them."""
        result = self._step(actions, active, restarting)
        self.extensions.observe(result.obs)  # the config's observed sensors
        return result

    def _step(self, actions: Any, active: np.ndarray, restarting: list[int]) -> StepResult:
        """The simulator's step, the suite's update and the task's step, in that order."""
        space = self._box if self._box is not None else spaces.MultiDiscrete(
            [self.action_space.n] * self.n)
        twist = self.task.twist(check_actions(actions, space, self.n))
        self._people()
        # staged for all envs at once, inactive ones standing still; the controller writes
        # ctrl at the step's ticks
        every = np.count_nonzero(active) == len(active)
        self.sim.controller.set_twists(ROBOT, twist if every else np.where(
            active[:, None], twist, 0.0))
        self.sim.step(self._substeps)
        self.extensions.step(self)
        if restarting:
            self.reset_envs(restarting)
        self._sample()
        task = self.task
        task.read_poses()
        scan, hit = self._scan, self._hit
        inputs = task.inputs(scan.ranges, hit.collided, self._divergence(), twist, active)
        return task.evaluate(inputs, hit.kind)

    def _divergence(self) -> np.ndarray:
        """(num_envs,) bool: the envs whose physics diverged in the last step."""
        diverged = self.sim.diverged
        if not diverged:
            return self._no_divergence
        self._diverged[:] = False
        self._diverged[diverged] = True
        return self._diverged

    def _people(self) -> None:
        """The people's step of the control step (before the physics), where there are
        people: those beyond the longest range of the suite's lidars (wrappers may add
        some) skip ray casts."""
        if self.task.walkers is not None:
            self.task.before_physics(max((float(ch.reading.range_max)
                                          for ch in self._suite.channels.values()
                                          if isinstance(ch.reading, LidarReading)),
                                         default=0.0))

    def close(self) -> None:
        self.extensions.close()
        self._suite.close()
        self.sim.close()
