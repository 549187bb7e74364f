"""What an env's config adds through the registries: more sensors (observed or not) and
runtime plugins (arena_gym.plugins).

    sensors:                                  # EnvConfig.sensors
      - {kind: imu, key: imu}                 # any registered kind, on the env's robot
    plugins:                                  # EnvConfig.plugins
      - {type: thermo_logger, params: {every: 10}}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_gym.config import ConfigError, EnvConfig
from arena_gym.plugins import PluginHandle
from arena_gym.registry import SENSOR_KINDS
from arena_gym.sensors import SensorError, SensorSuite
from arena_gym.sensors.kinds import flat_observation

RESERVED = ("scan", "goal", "last_action", "pedestrians")  # the task's own observation keys


class Extensions:
    """The configured sensors of `suite`'s robot `robot` and the env's plugin handles."""

    def __init__(self, cfg: EnvConfig, suite: SensorSuite, robot: str) -> None:

        self.spaces: dict[str, spaces.Box] = {}
        self._values: dict[str, Callable[[np.ndarray], np.ndarray]] = {}
        self._kinds: dict[str, str] = {}  # observation key -> sensor kind
        self.generation = 0  # advances when the env closes: plugin handles go stale
        self.plugins: list[PluginHandle] = []
        for i, sc in enumerate(cfg.sensors):
            kind = SENSOR_KINDS[sc.kind]
            key = sc.key or sc.kind
            if sc.observe and (key in RESERVED or key in self.spaces):
                raise ConfigError(f"sensors[{i}].key: expected a new observation key, got "
                                  f"{key!r} (taken: {[*RESERVED, *self.spaces]})")
            try:
                spec = kind.spec(robot, sc.sensor or None, key, **sc.params)
            except (TypeError, SensorError) as exc:
                raise ConfigError(f"sensors[{i}].params: {exc}") from None
            reading = suite.add(spec)
            if sc.observe:
                space, values = (kind.observation or flat_observation)(reading)
                self.spaces[key], self._values[key] = space, values
                self._kinds[key] = sc.kind
        self._all = np.arange(suite.num_envs)
        self._plugin_cfg = cfg.plugins

    def load_plugins(self, env: Any) -> None:
        """Make and load the configured plugins (after the env is built)."""
        self.plugins = [PluginHandle(p.type, dict(p.params), env, lambda: self.generation)
                        for p in self._plugin_cfg]

    def observe(self, obs: dict[str, np.ndarray]) -> None:
        for key, values in self._values.items():
            value = obs[key] = values(self._all)
            expected = (len(self._all), *self.spaces[key].shape)
            if getattr(value, "shape", None) != expected:
                kind = self._kinds[key]
                source = SENSOR_KINDS.source(kind) or "arena_gym"
                raise SensorError(f"sensor {key!r} (kind {kind!r}, from {source}): expected an "
                                  f"observation of shape {expected}, got "
                                  f"{getattr(value, 'shape', type(value).__name__)}")

    def reset(self, env: Any, env_ids: list[int]) -> None:
        for handle in self.plugins:
            handle.reset(env, np.asarray(env_ids, dtype=np.int64))

    def step(self, env: Any) -> None:
        for handle in self.plugins:
            handle.step(env)

    def close(self) -> None:
        self.generation += 1
