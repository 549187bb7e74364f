"""Observation wrappers for vector envs: the wrappers of observations.py, batched.

    envs = LidarObservation(envs, "robot/laser", key="scan")   # Box (num_envs, beams)
    envs = ScanStack(envs, key="scan", k=4)                   # Box (num_envs, 4, beams)

Each reads all rows of the env's sensor suite at once. ScanStack follows NEXT_STEP
autoreset: an env whose episode ended in the last step gets its stack refilled with the
reset observation; `reset(options={"reset_mask": m})` refills the masked envs only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv, VectorObservationWrapper, VectorWrapper
from gymnasium.vector.utils import batch_space

from arena_gym.sensors import CameraReading, ImuReading, LidarReading, SensorSpec
from arena_gym.wrappers.observations import dict_space_for, stacked_dict
from arena_gym.wrappers.terms import (
    ContactTerm,
    DepthTerm,
    ImageTerm,
    ImuTerm,
    LidarTerm,
    Term,
    reading_of,
    sensor_suite,
)


class SensorObservation(VectorObservationWrapper):
    """Adds `obs[key]` = the term's values for every env, (num_envs, *term.space.shape)."""

    def __init__(self, env: VectorEnv, key: str, term: Term) -> None:
        super().__init__(env)
        space = dict_space_for(env.single_observation_space, key, "a vector env")
        self.key, self.term = key, term
        self.rows = np.arange(env.num_envs)
        self.single_observation_space = spaces.Dict({**space.spaces, key: term.space})
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    def observations(self, observations: dict) -> dict:
        return {**observations, self.key: self.term.values(self.rows)}


class LidarObservation(SensorObservation):
    """A lidar's ranges for every env: Box(0, 1 or max range, (num_envs, beams) or (num_envs, rings,
    beams), float32)."""

    def __init__(self, env: VectorEnv, source: str | SensorSpec, key: str = "scan",
                 beams: int | None = None, normalize: bool = True) -> None:
        reading = reading_of(sensor_suite(env), source, LidarReading)
        super().__init__(env, key, LidarTerm(reading, beams, normalize))  # type: ignore[arg-type]


class ImageObservation(SensorObservation):
    """A camera's RGB images for every env: Box(0, 255, (num_envs, H, W, 3), uint8)."""

    def __init__(self, env: VectorEnv, source: str | SensorSpec, key: str = "image") -> None:
        reading = reading_of(sensor_suite(env), source, CameraReading)
        super().__init__(env, key, ImageTerm(reading))  # type: ignore[arg-type]


class DepthObservation(SensorObservation):
    """A camera's depth images for every env: Box(0, far or 1, (num_envs, H, W), float32)."""

    def __init__(self, env: VectorEnv, source: str | SensorSpec, key: str = "depth",
                 normalize: bool = False) -> None:
        reading = reading_of(sensor_suite(env), source, CameraReading)
        super().__init__(env, key, DepthTerm(reading, normalize))  # type: ignore[arg-type]


class ImuObservation(SensorObservation):
    """IMU fields concatenated for every env: Box(-inf, inf, (num_envs, n), float32)."""

    def __init__(self, env: VectorEnv, source: str | SensorSpec, key: str = "imu",
                 fields: tuple[str, ...] = ("orientation", "angular_velocity",
                                            "linear_acceleration")) -> None:
        reading = reading_of(sensor_suite(env), source, ImuReading)
        super().__init__(env, key, ImuTerm(reading, fields))  # type: ignore[arg-type]


class ContactObservation(SensorObservation):
    """Contact flags for every env, one per source (collision or contact readings): Box(0, 1,
    (num_envs, n))."""

    def __init__(self, env: VectorEnv, sources: list[str | SensorSpec] | str | SensorSpec,
                 key: str = "contact") -> None:
        suite = sensor_suite(env)
        sources = [sources] if isinstance(sources, (str, SensorSpec)) else list(sources)
        readings = [suite.add(s) if isinstance(s, SensorSpec) else suite[s] for s in sources]
        super().__init__(env, key, ContactTerm(readings))


class ScanStack(VectorWrapper):
    """The last `k` values of `obs[key]` per env, oldest first: (num_envs, k, *shape)."""

    def __init__(self, env: VectorEnv, key: str = "scan", k: int = 4) -> None:
        super().__init__(env)
        inner, self.single_observation_space = stacked_dict(env.single_observation_space, key, k)
        self.key, self.k = key, k
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)
        self._stack = np.zeros((env.num_envs, k, *inner.shape), dtype=inner.dtype)
        self._ended = np.zeros(env.num_envs, dtype=bool)

    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        mask = np.ones(self.num_envs, dtype=bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], dtype=bool)
        self._fill(obs[self.key], mask)
        self._ended[mask] = False
        return {**obs, self.key: self._stack.copy()}, info

    def step(self, actions: Any) -> tuple:
        obs, reward, terminated, truncated, info = self.env.step(actions)
        value = obs[self.key]
        restarted = self._ended.copy()
        self._stack[~restarted] = np.roll(self._stack[~restarted], -1, axis=1)
        self._stack[~restarted, -1] = value[~restarted]
        self._fill(value, restarted)
        self._ended = np.logical_or(terminated, truncated)
        return {**obs, self.key: self._stack.copy()}, reward, terminated, truncated, info

    def _fill(self, value: np.ndarray, mask: np.ndarray) -> None:
        self._stack[mask] = value[mask][:, None]
