"""Configuration: frozen dataclasses, loaded from YAML and overridden by keyword.

    cfg = load_config("configs/default.yaml", physics_dt=0.002, reward={"goal": 20.0})

An unknown key is an error that suggests the close match; a value of the wrong type is an
error that names the key, what was expected and what came. Nested sections are dataclasses
too; an override of a nested section merges into it.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from arena_gym.files import read_text
from arena_gym.registry import REWARD_TERMS


class ConfigError(ValueError):
    """A configuration that does not fit the schema."""


@dataclass(frozen=True)
class At:
    """A numeric key's range, written next to its type: `Annotated[float, At(gt=0)]`."""

    gt: float | None = None
    ge: float | None = None
    le: float | None = None

    def check(self, key: str, value: float, integer: bool = False) -> None:
        ok = ((self.gt is None or value > self.gt) and (self.ge is None or value >= self.ge)
              and (self.le is None or value <= self.le))
        if not ok:
            what = "an integer" if integer else "a number"
            bounds = [f"> {self.gt:g}" if self.gt is not None else "",
                      f">= {self.ge:g}" if self.ge is not None else "",
                      f"<= {self.le:g}" if self.le is not None else ""]
            raise ConfigError(f"{key}: expected {what} {' and '.join(b for b in bounds if b)}, "
                              f"got {value!r}")


Count = Annotated[int, At(ge=1, le=1_000_000)]  # how many of something: 0 makes no sense
Metres = Annotated[float, At(gt=0, le=1000)]  # a size: > 0, within 1 km
Weight = Annotated[float, At(ge=-1e6, le=1e6)]  # a reward weight, any sign
Rate = Annotated[float, At(ge=0, le=1)]  # a fraction


def _check_ranges(obj: Any) -> None:
    """Every Annotated range of a config dataclass, for direct construction too."""
    hints = typing.get_type_hints(type(obj), include_extras=True)
    for f in dataclasses.fields(obj):
        _check_value(getattr(obj, f.name), hints[f.name], f.name)


def _check_value(value: Any, hint: Any, key: str) -> None:
    if typing.get_origin(hint) is Annotated:
        base, *marks = typing.get_args(hint)
        _check_value(value, base, key)
        for mark in marks:
            if isinstance(mark, At):
                mark.check(key, value, integer=base is int)
    elif typing.get_origin(hint) is tuple and isinstance(value, tuple):
        args = typing.get_args(hint)
        per = [args[0]] * len(value) if len(args) == 2 and args[1] is Ellipsis else args
        for i, (v, h) in enumerate(zip(value, per, strict=False)):  # ranges only, not lengths
            _check_value(v, h, f"{key}[{i}]")


@dataclass(frozen=True)
class RewardConfig:
    """Weights of the named reward terms (Arena-Rosnav's training defaults)."""

    goal: Weight = 15.0
    collision: Weight = -25.0  # -15 left more seeds at 92-94 % (docs/training.md)
    progress: Weight = 0.3  # per metre of distance gained toward the goal
    progress_away: Weight = 0.4  # per metre lost (moving away)
    # shaping terms, kept small: a step's progress is worth ~0.3 x 0.022 m = 0.0066, and
    # penalties much larger than that teach the robot to hide from obstacles instead
    safe_distance: Weight = -0.005  # per step closer than safe_distance_m to an obstacle
    safe_distance_m: Annotated[float, At(ge=0, le=100)] = 0.25  # beyond the robot's radius
    reverse: Weight = -0.002  # per step of driving backwards
    abrupt_velocity: Weight = -0.001  # x |change of the action| (normalised) per step
    time: Weight = 0.0  # per step
    # pedestrian terms: only in worlds with pedestrians (num_pedestrians > 0)
    pedestrian_collision: Weight = -5.0  # on top of `collision` when the robot hit a person
    # kept below a step's progress, as the shaping terms above: at -0.05 x speed and -0.01
    # per step (a 6 m room with 8 people puts someone within 1 m ~40 % of the time), moving
    # toward the goal near people cost more than it gained and PPO learned to stand still
    pedestrian_safety: Weight = -0.002  # per step with a person within pedestrian_safety_m
    pedestrian_safety_m: Annotated[float, At(ge=0, le=100)] = 1.0  # centre to centre
    pedestrian_speed: Weight = -0.005  # x the robot's speed (m/s) per step in that space
    # weights of plugins' terms (arena_gym.registry.REWARD_TERMS), written `reward.<name>`
    extra: tuple[tuple[str, Weight], ...] = ()

    def __post_init__(self) -> None:
        _check_ranges(self)

    @classmethod
    def is_builtin(cls, name: str) -> bool:
        names = _FIELDS.get(cls)
        if names is None:  # once per class: reward_terms asks this for every term each step
            names = _FIELDS[cls] = {f.name for f in dataclasses.fields(cls)}
        return name in names

    @classmethod
    def extra_key(cls, name: str) -> bool:
        """A key that is no field but a registered reward term's name: a plugin's weight."""

        return not cls.is_builtin(name) and name in REWARD_TERMS

    def weight(self, name: str, default: float = 0.0) -> float:
        """The weight of term `name`: its field, else its `extra` entry, else `default`."""
        if self.is_builtin(name):
            return float(getattr(self, name))
        return dict(self.extra).get(name, default)


_FIELDS: dict[type, set[str]] = {}


@dataclass(frozen=True)
class CurriculumConfig:
    """Stages of obstacle counts; advance at success >= advance, fall back below fall_back."""

    # (min, max) obstacles per stage
    stages: tuple[tuple[Annotated[int, At(ge=0)], Annotated[int, At(ge=0)]], ...] = ((6, 10),)
    advance: Rate = 0.9
    fall_back: Rate = 0.3
    window: Count = 100  # episodes over which success is measured
    start_stage: Annotated[int, At(ge=0)] = 0
    # (min, max) walking pedestrians per stage; empty: num_pedestrians in every stage
    pedestrians: tuple[tuple[Annotated[int, At(ge=0)], Annotated[int, At(ge=0)]], ...] = ()

    def __post_init__(self) -> None:
        _check_ranges(self)
        _check(len(self.stages) >= 1, "curriculum.stages", f"at least one stage, got {self.stages}")
        for lo, hi in self.stages:
            _check(lo <= hi, "curriculum.stages", f"min <= max per stage, got {(lo, hi)}")
        _check(self.start_stage < len(self.stages), "curriculum.start_stage",
               f"a stage index < {len(self.stages)}, got {self.start_stage}")
        _check(self.fall_back <= self.advance, "curriculum.fall_back",
               f"a rate <= advance ({self.advance}), got {self.fall_back}")
        _check(not self.pedestrians or len(self.pedestrians) == len(self.stages),
               "curriculum.pedestrians",
               f"one (min, max) per stage ({len(self.stages)}), got {len(self.pedestrians)}")
        for lo, hi in self.pedestrians:
            _check(lo <= hi, "curriculum.pedestrians", f"min <= max per stage, got {(lo, hi)}")


@dataclass(frozen=True)
class ScanConfig:
    """The observed scan: beams and max range (0: as the robot declares them), and whether ranges
    are divided by the max range."""

    # beams over the robot's declared field of view; 0: as declared (model_params.yaml, URDF).
    # 90 (every 4 deg of arena_diffbot's 360): the training recipe's (docs/training.md)
    num_beams: Annotated[int, At(ge=0, le=100_000)] = 90
    max_range: Annotated[float, At(ge=0, le=1000)] = 0.0  # 0: as declared
    normalize: bool = True  # ranges / max_range in [0, 1]

    def __post_init__(self) -> None:
        _check_ranges(self)


@dataclass(frozen=True)
class RenderConfig:
    """What `render()` draws (arena_gym.render): the follow camera or the top-down map."""

    view: str = "follow"  # "follow": behind and above the robot; "top_down": the whole world
    width: Annotated[int, At(ge=1, le=4096)] = 320  # px
    height: Annotated[int, At(ge=1, le=4096)] = 240  # px
    follow_distance: Annotated[float, At(gt=0, le=100)] = 2.5  # m from the robot to the camera
    # deg, pitch (negative looks down)
    follow_elevation: Annotated[float, At(ge=-90, le=90)] = -30.0

    def __post_init__(self) -> None:
        _check_ranges(self)
        _check(self.view in ("follow", "top_down"), "render.view",
               f"'follow' or 'top_down', got {self.view!r}")


@dataclass(frozen=True)
class OptimConfig:
    """Speed for fidelity trades."""

    obstacles: str = "mesh"  # "mesh": models as their meshes; "bbox": as their bounding boxes

    def __post_init__(self) -> None:
        _check(self.obstacles in ("mesh", "bbox"), "optim.obstacles",
               f"'mesh' or 'bbox', got {self.obstacles!r}")


@dataclass(frozen=True)
class SensorConfig:
    """A sensor the env reads beyond its lidar and collision flag: a spec of a registered
    kind (arena_gym.registry.SENSOR_KINDS) on the env's robot, `params` its spec's fields;
    `observe` adds its reading to the observation under `key` (default: the kind)."""

    kind: str = ""
    key: str = ""
    sensor: str = ""  # the robot's declared sensor of that kind; "" = its first, if any
    observe: bool = True
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check(bool(self.kind), "sensors[].kind", "the name of a registered sensor kind, got ''")
        _check(isinstance(self.params, Mapping), "sensors[].params",
               f"a mapping, got {self.params!r}")


@dataclass(frozen=True)
class PluginConfig:
    """A runtime plugin (arena_gym.plugins): its registered type and keyword params."""

    type: str = ""
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check(bool(self.type), "plugins[].type", "the name of a registered plugin, got ''")
        _check(isinstance(self.params, Mapping), "plugins[].params",
               f"a mapping, got {self.params!r}")


@dataclass(frozen=True)
class PathConfig:
    """The global path (arena_gym.worlds.paths) and its subgoal: off unless `subgoal`."""

    subgoal: bool = False  # plan a path per episode; obs["subgoal"] (distance, angle)
    lookahead: Annotated[float, At(gt=0, le=100)] = 1.5  # m along the path, robot to subgoal
    replan_distance: Annotated[float, At(gt=0, le=100)] = 1.0  # m off the path: re-plan
    inflation: Annotated[float, At(ge=0, le=10)] = 0.1  # m of margin beyond the robot radius
    resolution: Annotated[float, At(ge=0, le=10)] = 0.1  # m, coarsest planning cell wanted
    # paths keep to the middle: a step within 0.5 m of the inflated walls costs up to
    # 1 + wall_cost times its length, and a straightened segment keeps `comfort` m more from
    # walls than the inflation (but near its ends); 0, 0: the shortest path
    wall_cost: Annotated[float, At(ge=0, le=100)] = 0.0
    comfort: Annotated[float, At(ge=0, le=10)] = 0.0
    progress: str = "straight"  # reward progress: "straight" line or "path" length
    min_length: Annotated[float, At(ge=0, le=1000)] = 0.0  # m, start to goal along the path
    max_length: Annotated[float, At(ge=0, le=10_000)] = 0.0  # m, likewise; 0: no limit
    # time limit: base + per_metre x path length (s), capped by max_episode_steps; 0: the cap
    time_per_metre: Annotated[float, At(ge=0, le=1000)] = 0.0
    time_base: Annotated[float, At(ge=0, le=100_000)] = 0.0
    # m between a pool obstacle's footprint and the path (beyond the robot radius)
    obstacle_clearance: Annotated[float, At(ge=0, le=10)] = 0.3

    def __post_init__(self) -> None:
        _check_ranges(self)
        _check(self.progress in ("straight", "path"), "paths.progress",
               f"'straight' or 'path', got {self.progress!r}")
        _check(not self.max_length or self.max_length >= self.min_length, "paths.max_length",
               f"0 or >= min_length ({self.min_length}), got {self.max_length}")


# each base's physics step where `physics_dt` is 0: the wheeled base's wheel servos and
# contacts track within 0.62 cm of 0.002 s over 10 s drives at 0.005 s
# (benchmarks/dt_accuracy.py); the planar base has no contacts but its collisions, and its
# servos follow their lag exactly at any step: at 0.025 s it drives where the wheeled base
# does within 1.0 mm and 0.019 rad over 2 s of twists (tests/sim/test_planar_base.py)
BASE_TIMESTEPS = {"wheeled": 0.005, "planar": 0.025}


@dataclass(frozen=True)
class EnvConfig:
    """Everything an ArenaMujoco-v0 env needs. See configs/default.yaml."""

    robot: str = "arena_diffbot"  # a built-in name, or a URDF path
    # the robot as its URDF is written ("wheeled": wheels, casters, their contacts) or as one
    # rigid body on planar joints ("planar": the chassis' collisions, the drive's
    # kinematics and limits; arena_gym/scene/planar_base.py)
    base: str = "planar"
    package_paths: tuple[str, ...] = ()
    model_params: str = ""  # path; "" looks next to the URDF
    world: str = "random"  # "random" rooms, or a ROS map.yaml
    # several worlds: env e builds worlds[e % len] (overrides `world`); $VARs expand
    worlds: tuple[str, ...] = ()
    scenario: str = ""  # an Arena scenario JSON (start/goal and statics)
    room_size: Annotated[float, At(ge=1, le=1000)] = 6.0  # m, "random" world
    obstacle_size: tuple[Metres, Metres] = (0.2, 0.6)  # m, box extents
    # boxes each env holds; episodes move them (no recompiles)
    obstacle_pool: Annotated[int, At(ge=1, le=1000)] = 12
    # "random" world: the pool's obstacles drawn from these models (names under
    # model_paths, model folders, .sdf or mesh files) instead of boxes; () keeps boxes
    obstacles: tuple[str, ...] = ()
    model_paths: tuple[str, ...] = ()  # folders of obstacle models (Gazebo's model path)
    # walking people each env holds (up to 64, its pool's slots); 0: none at all
    num_pedestrians: Annotated[int, At(ge=0, le=64)] = 0
    # slots of each env's pedestrian pool (>= num_pedestrians), each costing physics time
    # walking or parked; 0: as many as num_pedestrians (no parked slots)
    pedestrian_pool: Annotated[int, At(ge=0, le=64)] = 0
    pedestrian_model: str = "social_force"  # or "waypoints" (arena_gym.people.crowd)
    # observe the k nearest pedestrians (robot frame: x, y, vx, vy, present); 0: no such key
    observe_pedestrians: Annotated[int, At(ge=0, le=64)] = 0
    # s per physics step; 0: the base's own (BASE_TIMESTEPS: wheeled 0.005, planar 0.01)
    physics_dt: Annotated[float, At(ge=0, le=0.1)] = 0.0
    control_dt: Annotated[float, At(gt=0, le=10)] = 0.1
    max_episode_steps: Count = 300
    goal_radius: Annotated[float, At(gt=0, le=100)] = 0.5
    min_start_goal_distance: Annotated[float, At(ge=0, le=1000)] = 2.0
    # m of free space around the robot's footprint at start
    start_clearance: Annotated[float, At(ge=0, le=10)] = 0.1
    action: str = "continuous"  # or "discrete"
    scan: ScanConfig = field(default_factory=ScanConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)
    render: RenderConfig = field(default_factory=RenderConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    sensors: tuple[SensorConfig, ...] = ()  # more sensors, e.g. a plugin's kind
    plugins: tuple[PluginConfig, ...] = ()  # runtime plugins, by registered type
    paths: PathConfig = field(default_factory=PathConfig)

    def __post_init__(self) -> None:
        _check_ranges(self)
        _check(self.base in BASE_TIMESTEPS, "base",
               f"one of {tuple(BASE_TIMESTEPS)}, got {self.base!r}")
        _check(self.control_dt >= self.timestep > 0, "physics_dt, control_dt",
               f"0 < physics_dt <= control_dt, got {self.timestep}, {self.control_dt}")
        steps = self.control_dt / self.timestep
        _check(abs(steps - round(steps)) < 1e-9, "control_dt",
               f"a whole multiple of physics_dt ({self.timestep}), got {self.control_dt}")
        _check(self.action in ("continuous", "discrete"), "action",
               f"'continuous' or 'discrete', got {self.action!r}")
        _check(self.max_episode_steps > 0, "max_episode_steps",
               f"an integer > 0, got {self.max_episode_steps}")
        _check(self.pedestrian_model in ("social_force", "waypoints"), "pedestrian_model",
               f"'social_force' or 'waypoints', got {self.pedestrian_model!r}")
        _check(not self.pedestrian_pool or self.pedestrian_pool >= self.num_pedestrians,
               "pedestrian_pool", f"0 or at least num_pedestrians ({self.num_pedestrians}), "
               f"got {self.pedestrian_pool}")
        for lo, hi in self.curriculum.pedestrians:
            _check(hi <= self.num_pedestrians, "curriculum.pedestrians",
                   f"0 <= min <= max <= num_pedestrians ({self.num_pedestrians}), got {(lo, hi)}")
        _check(not self.observe_pedestrians or self.num_pedestrians, "observe_pedestrians",
               f"0 without pedestrians (num_pedestrians is 0), got {self.observe_pedestrians}")
        _check(not (self.worlds and self.scenario), "worlds",
               f"no worlds with a scenario ({self.scenario!r}), got {self.worlds}")
        _check(len(set(self.worlds)) <= 1 or not self.num_pedestrians, "worlds",
               f"one world with pedestrians (num_pedestrians {self.num_pedestrians}: they "
               f"walk one world's walls), got {len(set(self.worlds))}")
        lo, hi = self.obstacle_size
        _check(0 < lo <= hi, "obstacle_size", f"0 < min <= max, got {self.obstacle_size}")
        for lo, hi in self.curriculum.stages:
            _check(0 <= lo <= hi <= self.obstacle_pool, "curriculum.stages",
                   f"0 <= min <= max <= obstacle_pool ({self.obstacle_pool}), got {(lo, hi)}")

    @property
    def pedestrian_slots(self) -> int:
        """The slots of each env's pedestrian pool: `pedestrian_pool`, or num_pedestrians."""
        return self.pedestrian_pool or max(self.num_pedestrians, 1)

    @property
    def timestep(self) -> float:
        """The physics step: `physics_dt`, or where it is 0 the base's own."""
        return self.physics_dt or BASE_TIMESTEPS[self.base]

    @property
    def substeps(self) -> int:
        """Physics steps per control step."""
        return round(self.control_dt / self.timestep)


def _check(ok: bool, key: str, expected: str) -> None:
    if not ok:
        raise ConfigError(f"{key}: expected {expected}")


_EXPONENT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")  # 2e-3, 1.E5, .5e1


def _convert(value: Any, hint: Any, key: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is Annotated:  # a ranged number: convert, then check the range here (key known)
        converted = _convert(value, typing.get_args(hint)[0], key)
        _check_value(converted, hint, key)
        return converted
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
        return tuple(_convert(v, a, f"{key}[{i}]")
                     for i, (v, a) in enumerate(zip(value, args, strict=True)))
    if origin in (typing.Union, types.UnionType):
        return value
    if hint is float:
        if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
            value = float(value)  # YAML 1.1 reads 2e-3 (no '.') as a string; YAML 1.2 a number
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {value!r}")
        if not math.isfinite(value):
            raise ConfigError(f"{key}: expected a finite number, got {value!r}")
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
    hints = typing.get_type_hints(cls, include_extras=True)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs: dict[str, Any] = {}
    extra = dict(data.get("extra", ()))  # sections with open keys (RewardConfig.extra_key)
    for key, value in data.items():
        if key not in names and getattr(cls, "extra_key", lambda k: False)(key):
            extra[key] = _convert(value, Weight, prefix + key)
            continue
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1)
            hint = f"; did you mean {prefix + close[0]!r}?" if close else ""
            raise ConfigError(f"unknown config key {prefix + str(key)!r}{hint}")
        kwargs[key] = _convert(value, hints[key], prefix + key)
    if extra:
        kwargs["extra"] = tuple(sorted(extra.items()))
    try:
        return cls(**kwargs)
    except ConfigError as exc:  # a section's own cross-checks name keys without the section
        message = str(exc)
        raise ConfigError(message if message.startswith(prefix) else prefix + message) from None


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
    """A YAML file's path, or a built-in config's by name ("default", "staged", "pedestrians",
    "maps"): the configs shipped in the package (the repository's configs/ links to them)."""
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
        try:
            text = read_text(path, str(path), error=ConfigError)
            data = yaml.safe_load(text) or {}
        except FileNotFoundError:
            raise ConfigError(f"{path}: expected an existing YAML file, got no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: expected a readable UTF-8 YAML file, got {exc}") from None
        except yaml.YAMLError as exc:
            where = getattr(exc, "problem_mark", None)
            at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
            problem = getattr(exc, "problem", None) or exc
            raise ConfigError(
                f"{path}: expected valid YAML, got a syntax error{at}: {problem}") from None
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"{path}: expected a mapping of config keys, got {type(data).__name__}")
        base = merged(base, data)
    return merged(base, overrides) if overrides else base
