"""Observation wrappers for one env: each adds one key to the env's Dict observation.

    env = LidarObservation(env, "robot/laser", key="scan", beams=90)   # Box (90,) in [0, 1]
    env = ScanStack(env, key="scan", k=4)                             # Box (4, 90)
    env = ImageObservation(env, CameraSpec("robot", outputs=("rgb",)), key="image")

A source is the key of a reading of the env's sensor suite, or a spec the wrapper adds to
it (a camera renders only once some spec asks for it). See terms.py for the env contract.
Vector envs: arena_gym.wrappers.vector has the same wrappers.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from arena_gym.sensors import (
    CameraReading,
    ImuReading,
    LidarReading,
    SensorError,
    SensorSpec,
)
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


def dict_space_for(space: spaces.Space, key: str, what: str = "an env") -> spaces.Dict:
    """`space` as a Dict that has no `key` yet, or a SensorError naming what came."""
    if not isinstance(space, spaces.Dict):
        raise SensorError(
            f"expected {what} with a Dict observation space, got {type(space).__name__}")
    if key in space.spaces:
        raise SensorError(f"key {key!r}: the observation already has it; expected a new key")
    return space


class SensorObservation(gym.ObservationWrapper):
    """Adds `obs[key]` = the term's values for this env's row of the sensor suite."""

    def __init__(self, env: gym.Env, key: str, term: Term) -> None:
        super().__init__(env)
        space = dict_space_for(env.observation_space, key)
        self.key, self.term = key, term
        self.row = np.array([int(getattr(env.unwrapped, "sensor_env", 0))])
        self.observation_space = spaces.Dict({**space.spaces, key: term.space})

    def observation(self, observation: dict) -> dict:
        return {**observation, self.key: self.term.values(self.row)[0]}


class LidarObservation(SensorObservation):
    """A lidar's ranges: Box(0, 1 or max range, (beams,) or (rings, beams), float32)."""

    def __init__(self, env: gym.Env, source: str | SensorSpec, key: str = "scan",
                 beams: int | None = None, normalize: bool = True) -> None:
        reading = reading_of(sensor_suite(env), source, LidarReading)
        super().__init__(env, key, LidarTerm(reading, beams, normalize))  # type: ignore[arg-type]


class ImageObservation(SensorObservation):
    """A camera's RGB image: Box(0, 255, (H, W, 3), uint8)."""

    def __init__(self, env: gym.Env, source: str | SensorSpec, key: str = "image") -> None:
        reading = reading_of(sensor_suite(env), source, CameraReading)
        super().__init__(env, key, ImageTerm(reading))  # type: ignore[arg-type]


class DepthObservation(SensorObservation):
    """A camera's depth image: Box(0, far or 1, (H, W), float32)."""

    def __init__(self, env: gym.Env, source: str | SensorSpec, key: str = "depth",
                 normalize: bool = False) -> None:
        reading = reading_of(sensor_suite(env), source, CameraReading)
        super().__init__(env, key, DepthTerm(reading, normalize))  # type: ignore[arg-type]


class ImuObservation(SensorObservation):
    """IMU fields concatenated: Box(-inf, inf, (n,), float32)."""

    def __init__(self, env: gym.Env, source: str | SensorSpec, key: str = "imu",
                 fields: tuple[str, ...] = ("orientation", "angular_velocity",
                                            "linear_acceleration")) -> None:
        reading = reading_of(sensor_suite(env), source, ImuReading)
        super().__init__(env, key, ImuTerm(reading, fields))  # type: ignore[arg-type]


class ContactObservation(SensorObservation):
    """Contact flags, one per source (collision or contact readings): Box(0, 1, (n,))."""

    def __init__(self, env: gym.Env, sources: list[str | SensorSpec] | str | SensorSpec,
                 key: str = "contact") -> None:
        suite = sensor_suite(env)
        sources = [sources] if isinstance(sources, (str, SensorSpec)) else list(sources)
        readings = [suite.add(s) if isinstance(s, SensorSpec) else suite[s] for s in sources]
        super().__init__(env, key, ContactTerm(readings))


class ScanStack(gym.ObservationWrapper):
    """The last `k` values of `obs[key]` (oldest first): Box of shape (k, *shape); a reset
    fills the stack with the first observation."""

    def __init__(self, env: gym.Env, key: str = "scan", k: int = 4) -> None:
        super().__init__(env)
        inner, self.observation_space = stacked_dict(env.observation_space, key, k)
        self.key, self.k = key, k
        self._stack = np.zeros((k, *inner.shape), dtype=inner.dtype)

    def reset(self, **kwargs: Any) -> tuple[dict, dict]:
        obs, info = self.env.reset(**kwargs)
        self._stack[:] = obs[self.key]
        return {**obs, self.key: self._stack.copy()}, info

    def observation(self, observation: dict) -> dict:
        self._stack[:-1] = self._stack[1:]
        self._stack[-1] = observation[self.key]
        return {**observation, self.key: self._stack.copy()}


def stacked_dict(space: spaces.Space, key: str, k: int) -> tuple[spaces.Box, spaces.Dict]:
    """`space` (a Dict holding a Box at `key`) with that Box stacked k deep: (the Box, the
    new Dict). Single and vector ScanStack share it."""
    if not isinstance(space, spaces.Dict) or not isinstance(space.spaces.get(key), spaces.Box):
        raise SensorError(f"key {key!r}: expected a Box in the env's Dict observation, got "
                          f"{getattr(space, 'spaces', {}).get(key)!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise SensorError(f"k: expected an integer >= 1, got {k!r}")
    inner = space.spaces[key]
    return inner, spaces.Dict({**space.spaces, key: stacked_space(inner, k)})


def stacked_space(inner: spaces.Box, k: int) -> spaces.Box:
    low = np.broadcast_to(inner.low, (k, *inner.shape))
    high = np.broadcast_to(inner.high, (k, *inner.shape))
    return spaces.Box(low, high, (k, *inner.shape), inner.dtype)
