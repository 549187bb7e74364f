"""Small real Gymnasium envs around SceneStore + Simulator + SensorSuite, for the wrapper
tests: the probe robot in the test room (1 m west of its east wall), driven by a planar base
velocity (SPEED m/s per unit of action), an episode ends on a collision (terminated) or after
MAX_STEPS (truncated)."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from arena_gym.sensors import CollisionSpec, LidarSpec, SensorSuite
from arena_gym.sim import Simulator
from tests.sensors.worlds import camera_block, imu_block, lidar_block, room_store

MAX_STEPS = 20
TICKS = 2  # ticks (of 10 physics steps) per env step
SPEED = 3.0  # m/s per unit of action
START = (2.0, 0.0, 0.0)
URDF_BLOCKS = (lidar_block(samples=360, max_range=2.8), imu_block(),
               camera_block(width=32, height=24))


class _Core:
    def __init__(self, num_envs: int) -> None:
        self.store = room_store(num_envs, *URDF_BLOCKS, poses=(START,))
        self.sim = Simulator(self.store)
        self.suite = SensorSuite(self.sim, specs=[LidarSpec("probe"), CollisionSpec("probe")],
                                 seed=0)
        self.steps = np.zeros(num_envs, dtype=np.int64)

    def reset(self, envs: list[int]) -> None:
        self.sim.reset_envs(envs)
        self.steps[envs] = 0
        self.suite.reset(envs)

    def step(self, velocities: np.ndarray, envs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        for env in envs:
            self.sim.state(int(env), "qvel")[:2] = SPEED * velocities[env]
        self.sim.step(10 * TICKS)
        self.steps[envs] += 1
        terminated = self.suite["probe/collision"].collided.copy()
        return terminated, self.steps >= MAX_STEPS

    def obs(self) -> dict[str, np.ndarray]:
        return {"steps": self.steps.astype(np.float32)[:, None]}


SPACE = spaces.Dict({"steps": spaces.Box(0.0, float(MAX_STEPS), (1,), np.float32)})


class ProbeEnv(gym.Env):
    metadata: ClassVar[dict] = {"render_modes": []}
    observation_space = SPACE
    action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)

    def __init__(self) -> None:
        self.core = _Core(1)
        self.sensor_suite = self.core.suite

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.core.reset([0])
        return {k: v[0] for k, v in self.core.obs().items()}, {}

    def step(self, action: Any):
        terminated, truncated = self.core.step(np.asarray(action)[None], np.array([0]))
        obs = {k: v[0] for k, v in self.core.obs().items()}
        return obs, 0.0, bool(terminated[0]), bool(truncated[0]), {}


class ProbeVectorEnv(VectorEnv):
    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 3) -> None:
        self.num_envs = num_envs
        self.core = _Core(num_envs)
        self.sensor_suite = self.core.suite
        self.single_observation_space = SPACE
        self.single_action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = batch_space(SPACE, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._ended = np.zeros(num_envs, dtype=bool)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        mask = np.ones(self.num_envs, dtype=bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], dtype=bool)
        self.core.reset(list(np.flatnonzero(mask)))
        self._ended[mask] = False
        return self.core.obs(), {}

    def step(self, actions: np.ndarray):
        restart = np.flatnonzero(self._ended)
        if restart.size:
            self.core.reset(list(restart))
        active = np.flatnonzero(~self._ended)
        terminated, truncated = self.core.step(np.asarray(actions), active)
        terminated[restart], truncated[restart] = False, False
        self._ended = terminated | truncated
        return self.core.obs(), np.zeros(self.num_envs), terminated, truncated, {}
