"""Plugins: third-party sensor kinds, reward terms, policies and runtime plugins.

Two ways in, both ending in the registries of arena_gym.registry:
- The `arena_gym.plugins` entry-point group. Each entry point names either a callable that
  registers entries (`SENSOR_KINDS.register(...)`, `REWARD_TERMS.register(...)`, ...) or a
  `Plugin` subclass, registered in PLUGINS under the entry point's name. They load once, on
  the first lookup in any registry; one that fails to load is reported (PluginWarning) and
  named again, with its error, when a config asks for it.
- The env config: `plugins: [{type: NAME, params: {...}}]` makes one runtime `Plugin` of the
  registered type per env with those keyword arguments. Its `PluginHandle` reports its name,
  type, load and reset times and the moving average of its step callback, and refuses to
  hand out the plugin after the env it belonged to was closed or rebuilt.

    # pyproject.toml of a plugin package
    [project.entry-points."arena_gym.plugins"]
    thermo = "arena_thermo:register"
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena_gym.registry import PLUGINS, load_entry_points

EMA = 0.1  # weight of the newest sample in a handle's moving averages


class PluginError(RuntimeError):
    """A plugin that cannot be loaded or used; the message names it."""


class Plugin:
    """A runtime plugin of an env, made from config with `params` as keyword arguments.
    Override what you need; `env` is the env's NavCore (sensor suite, simulator, store)."""

    def __init__(self, **params: Any) -> None:
        self.params = params

    def load(self, env: Any) -> None:
        """Once, after the env's world is built."""

    def reset(self, env: Any, env_ids: np.ndarray) -> None:
        """After the envs `env_ids` started new episodes."""

    def step(self, env: Any) -> None:
        """After every env step."""

    @classmethod
    def register_entry_point(cls, name: str) -> None:
        """Register this class in PLUGINS as `name` (an entry point naming a Plugin class)."""
        PLUGINS.register(name, cls)


def plugin_class(name: str) -> type[Plugin]:
    """The runtime plugin type `name`; a failed entry point of that name says why."""
    failure = load_entry_points().get(name)
    if failure is not None and name not in PLUGINS:
        raise PluginError(failure)
    return PLUGINS[name]


HOOKS = ("load", "reset", "step")  # a plugin's callbacks, as its stats name them


@dataclass(frozen=True)
class HookStats:
    """Calls of one plugin callback so far and their wall time, seconds."""

    calls: int
    total_s: float

    @property
    def mean_s(self) -> float:
        return self.total_s / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class PluginStats:
    """A runtime plugin's callbacks at one moment (`PluginHandle.stats`), as mujoco_ros's
    plugin stats: per callback and over all of them.

        stats.step.calls, stats.step.mean_s, stats.calls, stats.total_s, stats.mean_s
    """

    name: str
    type: str
    load: HookStats
    reset: HookStats
    step: HookStats

    @property
    def calls(self) -> int:
        return sum(getattr(self, hook).calls for hook in HOOKS)

    @property
    def total_s(self) -> float:
        return sum(getattr(self, hook).total_s for hook in HOOKS)

    @property
    def mean_s(self) -> float:
        return self.total_s / self.calls if self.calls else 0.0


class PluginHandle:
    """One runtime plugin of an env: its timings, and the plugin while its env lives."""

    def __init__(self, name: str, params: dict[str, Any], env: Any,
                 generation: Callable[[], int]) -> None:
        cls = plugin_class(name)
        self.name, self.type = name, f"{cls.__module__}.{cls.__qualname__}"
        self._generation, self._born = generation, generation()
        self._calls = dict.fromkeys(HOOKS, 0)  # per callback, where it is called (_timed)
        self._seconds = dict.fromkeys(HOOKS, 0.0)
        try:
            self._plugin = cls(**params)
        except TypeError as exc:
            raise PluginError(f"plugin {name!r}: params {params!r}: {exc}") from None
        self.load_s = self._timed("load", self._plugin.load, env)
        self.reset_s = 0.0  # the last reset's seconds
        self.step_s = 0.0  # moving average of the step callback, seconds
        self.steps = 0

    @property
    def active(self) -> bool:
        return self._generation() == self._born

    @property
    def plugin(self) -> Plugin:
        if not self.active:
            raise PluginError(
                f"plugin {self.name!r}: this handle belongs to an inactive generation "
                f"({self._born}; the env is at {self._generation()}): its env was closed or "
                "rebuilt; take the new handle from env.plugins")
        return self._plugin

    @property
    def stats(self) -> PluginStats:
        """Calls and wall time of each callback so far (a copy)."""
        return PluginStats(self.name, self.type, *(
            HookStats(self._calls[h], self._seconds[h]) for h in HOOKS))

    def reset(self, env: Any, env_ids: np.ndarray) -> None:
        self.reset_s = self._timed("reset", self.plugin.reset, env, env_ids)

    def step(self, env: Any) -> None:
        seconds = self._timed("step", self.plugin.step, env)
        self.step_s = seconds if self.steps == 0 else (1 - EMA) * self.step_s + EMA * seconds
        self.steps += 1

    def _timed(self, hook: str, callback: Callable[..., None], *args: Any) -> float:
        t0 = time.perf_counter()
        try:
            callback(*args)
        except PluginError:
            raise
        except Exception as exc:
            raise PluginError(f"plugin {self.name!r}: {hook}: "
                              f"{type(exc).__name__}: {exc}") from exc
        seconds = time.perf_counter() - t0
        self._calls[hook] += 1
        self._seconds[hook] += seconds
        return seconds

    def __repr__(self) -> str:
        return (f"PluginHandle({self.name!r}, type={self.type}, load {self.load_s * 1e3:.2f} ms, "
                f"reset {self.reset_s * 1e3:.2f} ms, step {self.step_s * 1e3:.3f} ms avg)")
