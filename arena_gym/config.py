"""Configuration: frozen dataclasses, loaded from YAML and overridden by keyword.

    cfg = load_config("configs/default.yaml", physics_dt=0.002, reward={"goal": 20.0})

An unknown key is an error that suggests the close match; a value of the wrong type is an
error that names the key, what was expected and what came. Nested sections are dataclasses
too; an override of a nested section merges into it.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A configuration that does not fit the schema."""


@dataclass(frozen=True)
class RewardConfig:
    """Weights of the named reward terms (Arena-Rosnav's training defaults)."""

    goal: float = 15.0
    collision: float = -15.0
    progress: float = 0.3  # per metre of distance gained toward the goal
    progress_away: float = 0.4  # per metre lost (moving away)
    # shaping terms, kept small: a step's progress is worth ~0.3 x 0.022 m = 0.0066, and
    # penalties much larger than that teach the robot to hide from obstacles instead
    safe_distance: float = -0.005  # per step closer than safe_distance_m to an obstacle
    safe_distance_m: float = 0.25  # beyond the robot's radius
    reverse: float = -0.002  # per step of driving backwards
    abrupt_velocity: float = -0.001  # x |change of the action| (normalised) per step
    time: float = 0.0  # per step


@dataclass(frozen=True)
class CurriculumConfig:
    """Stages of obstacle counts; advance at success >= advance, fall back below fall_back."""

    stages: tuple[tuple[int, int], ...] = ((6, 10),)  # (min, max) obstacles per stage
    advance: float = 0.9
    fall_back: float = 0.3
    window: int = 100  # episodes over which success is measured
    start_stage: int = 0


@dataclass(frozen=True)
class ScanConfig:
    num_beams: int = 0  # 0: as the robot declares (model_params.yaml, URDF)
    max_range: float = 0.0  # 0: as declared
    normalize: bool = True  # ranges / max_range in [0, 1]


@dataclass(frozen=True)
class EnvConfig:
    """Everything an ArenaMujoco-v0 env needs. See configs/default.yaml."""

    robot: str = "arena_diffbot"  # a built-in name, or a URDF path
    package_paths: tuple[str, ...] = ()
    model_params: str = ""  # path; "" looks next to the URDF
    world: str = "random"  # "random" rooms, or a ROS map.yaml
    scenario: str = ""  # an Arena scenario JSON (start/goal and statics)
    room_size: float = 6.0  # m, "random" world
    obstacle_size: tuple[float, float] = (0.2, 0.6)  # m, box extents
    obstacle_pool: int = 12  # boxes each env holds; episodes move them (no recompiles)
    num_pedestrians: int = 0
    physics_dt: float = 0.005
    control_dt: float = 0.1
    max_episode_steps: int = 300
    goal_radius: float = 0.5
    min_start_goal_distance: float = 2.0
    start_clearance: float = 0.1  # m of free space around the robot's footprint at start
    action: str = "continuous"  # or "discrete"
    scan: ScanConfig = field(default_factory=ScanConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)

    def __post_init__(self) -> None:
        _check(self.control_dt >= self.physics_dt > 0, "physics_dt, control_dt",
               f"0 < physics_dt <= control_dt, got {self.physics_dt}, {self.control_dt}")
        steps = self.control_dt / self.physics_dt
        _check(abs(steps - round(steps)) < 1e-9, "control_dt",
               f"a whole multiple of physics_dt ({self.physics_dt}), got {self.control_dt}")
        _check(self.action in ("continuous", "discrete"), "action",
               f"'continuous' or 'discrete', got {self.action!r}")
        _check(self.max_episode_steps > 0, "max_episode_steps",
               f"an integer > 0, got {self.max_episode_steps}")
        lo, hi = self.obstacle_size
        _check(0 < lo <= hi, "obstacle_size", f"0 < min <= max, got {self.obstacle_size}")
        for lo, hi in self.curriculum.stages:
            _check(0 <= lo <= hi <= self.obstacle_pool, "curriculum.stages",
                   f"0 <= min <= max <= obstacle_pool ({self.obstacle_pool}), got {(lo, hi)}")

    @property
    def substeps(self) -> int:
        return round(self.control_dt / self.physics_dt)


def _check(ok: bool, key: str, expected: str) -> None:
    if not ok:
        raise ConfigError(f"{key}: expected {expected}")


def _convert(value: Any, hint: Any, key: str) -> Any:
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}: expected a mapping, got {value!r}")
        return from_dict(hint, value, prefix=f"{key}.")
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(v, args[0], f"{key}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ConfigError(f"{key}: expected {len(args)} values, got {len(value)}")
        return tuple(_convert(v, a, f"{key}[{i}]") for i, (v, a) in enumerate(zip(value, args)))
    if origin in (typing.Union, types.UnionType):
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected an integer, got {value!r}")
        return value
    if hint is bool and not isinstance(value, bool):
        raise ConfigError(f"{key}: expected true or false, got {value!r}")
    if hint is str and not isinstance(value, (str, Path)):
        raise ConfigError(f"{key}: expected a string, got {value!r}")
    return str(value) if hint is str else value


def from_dict(cls: type, data: Mapping[str, Any], prefix: str = "") -> Any:
    """Build dataclass `cls` from a mapping; unknown keys are errors with suggestions."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in data.items():
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1)
            hint = f"; did you mean {prefix + close[0]!r}?" if close else ""
            raise ConfigError(f"unknown config key {prefix + str(key)!r}{hint}")
        kwargs[key] = _convert(value, hints[key], prefix + key)
    return cls(**kwargs)


def merged(base: Any, overrides: Mapping[str, Any], prefix: str = "") -> Any:
    """`base` with `overrides` applied; nested mappings merge into nested sections."""
    values = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
    for key, value in overrides.items():
        current = values.get(key)
        if dataclasses.is_dataclass(current) and isinstance(value, Mapping):
            value = merged(current, value, prefix=f"{prefix}{key}.")
        values[key] = value
    return from_dict(type(base), values, prefix=prefix)


BUILTIN_CONFIGS = Path(__file__).resolve().parent / "configs"


def config_path(name: str | Path) -> Path:
    """A YAML file's path, or a built-in config's by name ("default", "staged"): the
    configs shipped in the package (the repository's configs/ links to them)."""
    path = Path(name)
    builtin = BUILTIN_CONFIGS / f"{path.name}.yaml"
    if not path.exists() and path.suffix == "" and path.parent == Path(".") and builtin.is_file():
        return builtin
    return path


def load_config(path: str | Path | None = None, **overrides: Any) -> EnvConfig:
    """EnvConfig from a YAML file or a built-in config's name (see `config_path`),
    then keyword overrides."""
    base = EnvConfig()
    if path is not None:
        import yaml

        path = config_path(path)
        text = path.read_text()
        data = yaml.safe_load(text) or {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{path}: expected a mapping of config keys, got {type(data).__name__}")
        base = merged(base, data)
    return merged(base, overrides) if overrides else base
