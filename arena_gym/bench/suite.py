"""Benchmark suites: stages of worlds, robots, obstacle and pedestrian counts, episodes,
time limits, from YAML.

    name: default
    seed: 1000                 # stage i's episode k is seeded seed + 1000 * i + k
    config: default            # the env config every stage starts from (a name or a path)
    stages:
      - name: empty
        world: random          # "random" rooms, a ROS map.yaml or an Arena scenario .json
        robot: arena_diffbot   # a built-in robot or a URDF path
        obstacles: [0, 0]      # (min, max) obstacles per episode (or one number)
        pedestrians: [0, 2]    # (min, max) walking people per episode (default: none)
        episodes: 20
        time_limit: 30         # s of simulated time per episode
        set: {room_size: 8.0}  # any other env config keys

Paths in a suite (world, robot, config) are relative to the suite's file; `$VAR` and
`${VAR}` expand from the environment (e.g. `$ARENA_GYM_ASSETS/worlds/...`). An unknown key
is an error that suggests the close match, as in arena_gym.config.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from arena_gym.config import (
    At,
    ConfigError,
    Count,
    EnvConfig,
    _check_ranges,
    config_path,
    from_dict,
    load_config,
)
from arena_gym.files import read_text

BUILTIN_SUITES = Path(__file__).resolve().parents[1] / "configs" / "benchmark"
STAGE_SEED_STRIDE = 1000  # seeds apart between stages: no episode shared up to 1000 a stage
MAX_STAGE_NAME = 100  # characters: plots/trajectories_NAME.png stays a file name


@dataclass(frozen=True)
class Stage:
    """One row of a suite: a world, a robot, obstacle counts, episodes and a time limit."""

    name: str
    world: str = "random"
    robot: str = ""  # "": the config's robot
    obstacles: tuple[Annotated[int, At(ge=0)], Annotated[int, At(ge=0)]] = (6, 10)
    # (min, max) walking people per episode (the env's pedestrians, arena_gym.people.walkers)
    pedestrians: tuple[Annotated[int, At(ge=0)], Annotated[int, At(ge=0, le=64)]] = (0, 0)
    episodes: Annotated[int, At(ge=1, le=STAGE_SEED_STRIDE)] = 20
    time_limit: Annotated[float, At(gt=0, le=3600)] = 30.0  # s
    set: Mapping[str, Any] = field(default_factory=dict)  # other env config keys

    def __post_init__(self) -> None:
        _check_ranges(self)
        if not isinstance(self.name, str) or not re.fullmatch(
                rf"[A-Za-z0-9_.-]{{1,{MAX_STAGE_NAME}}}", self.name):
            shown = repr(self.name) if len(str(self.name)) <= 60 else \
                f"{str(self.name)[:60]!r}... ({len(str(self.name))} characters)"
            raise ConfigError(f"stage name: expected 1 to {MAX_STAGE_NAME} letters, digits, "
                              f"'_', '-' or '.' (it names the stage's files), got {shown}")
        for key in ("obstacles", "pedestrians"):
            lo, hi = getattr(self, key)
            if lo > hi:
                raise ConfigError(f"{key}: expected min <= max, got {getattr(self, key)}")
        if not isinstance(self.set, Mapping):
            raise ConfigError(f"set: expected a mapping of env config keys, got {self.set!r}")

    def overrides(self, control_dt: float) -> dict[str, Any]:
        """The env config keys this stage sets (over the suite's config)."""
        out: dict[str, Any] = dict(self.set)
        out["worlds"] = []  # the stage's world, not a config's mix (configs/maps.yaml's)
        if self.world.endswith(".json"):
            out["scenario"] = self.world
        else:
            out["world"] = self.world
        if self.robot:
            out["robot"] = self.robot
        lo, hi = self.pedestrians
        out["num_pedestrians"] = hi  # (the pool: as many slots, the config's default)
        out["curriculum"] = {**out.get("curriculum", {}), "stages": [list(self.obstacles)],
                             "pedestrians": [[lo, hi]] if hi else [], "start_stage": 0}
        out["max_episode_steps"] = max(1, math.ceil(self.time_limit / control_dt - 1e-9))
        return out


@dataclass(frozen=True)
class Suite:
    """A benchmark suite as loaded from YAML: its stages, base seed, starting env config and default
    number of envs."""

    name: str
    stages: tuple[Stage, ...]
    seed: Annotated[int, At(ge=0)] = 1000
    config: str = "default"  # the env config the stages start from
    envs: Count = 8  # default number of envs (--envs overrides)
    path: str = ""  # the file it came from

    def __post_init__(self) -> None:
        _check_ranges(self)
        if not self.stages:
            raise ConfigError("stages: expected at least one stage, got none")
        names = [s.name for s in self.stages]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigError(f"stages: expected unique names, got {twice} more than once")

    def stage_seed(self, index: int, seed: int | None = None) -> int:
        return (self.seed if seed is None else seed) + STAGE_SEED_STRIDE * index


def suite_path(name: str | Path) -> Path:
    """A suite file's path, or a built-in suite's by name ("default", "large", "maps")."""
    path = Path(name)
    builtin = BUILTIN_SUITES / f"{path.name}.yaml"
    if not path.exists() and path.suffix == "" and path.parent == Path(".") and builtin.is_file():
        return builtin
    return path


def load_suite(name: str | Path) -> Suite:
    """A Suite from a YAML file or a built-in suite's name; paths made absolute."""
    import yaml

    path = suite_path(name)
    try:
        data = yaml.safe_load(read_text(path, str(path), error=ConfigError))
    except FileNotFoundError:
        builtins = sorted(p.stem for p in BUILTIN_SUITES.glob("*.yaml"))
        raise ConfigError(f"{path}: expected a suite YAML file or a built-in suite "
                          f"({', '.join(builtins)}), got no such file") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: expected a readable YAML suite, got {exc}") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("stages"), list):
        raise ConfigError(f"{path}: expected a mapping with a list of stages, got "
                          f"{type(data).__name__}")
    root = path.resolve().parent
    stages = []
    for i, raw in enumerate(data["stages"]):
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{path}: stages[{i}]: expected a mapping, got {raw!r}")
        raw = dict(raw)
        for key in ("obstacles", "pedestrians"):
            if isinstance(raw.get(key), int) and not isinstance(raw[key], bool):
                raw[key] = [raw[key]] * 2
        for key in ("world", "robot"):
            if isinstance(raw.get(key), str) and _is_path(raw[key]):
                raw[key] = _resolve(raw[key], root, f"stages[{i}].{key}")
        try:
            stages.append(from_dict(Stage, raw, prefix=f"stages[{i}]."))
        except (ConfigError, TypeError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
    top = {k: v for k, v in data.items() if k != "stages"}
    config = str(top.get("config", "default"))
    if _is_path(config):
        top["config"] = _resolve(config, root, "config")
    try:
        return Suite(stages=tuple(stages), path=str(path), **_top(top, path))
    except ConfigError as exc:
        raise ConfigError(exc if str(exc).startswith(str(path)) else f"{path}: {exc}") from None


def _top(top: Mapping[str, Any], path: Path) -> dict[str, Any]:
    allowed = ("name", "seed", "config", "envs")
    for key in top:
        if key not in allowed:
            import difflib

            close = difflib.get_close_matches(str(key), [*allowed, "stages"], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{path}: unknown suite key {key!r}{hint}")
    out = dict(top)
    out.setdefault("name", path.stem)
    for key, kind in (("seed", int), ("envs", int), ("name", str), ("config", str)):
        if key in out and (not isinstance(out[key], kind) or isinstance(out[key], bool)):
            raise ConfigError(f"{path}: {key}: expected {kind.__name__}, got {out[key]!r}")
    return out


def _is_path(text: str) -> bool:
    return text != "random" and ("/" in text or "$" in text or text.endswith(
        (".yaml", ".yml", ".json", ".urdf")))


def _resolve(text: str, root: Path, key: str) -> str:
    expanded = os.path.expandvars(text)
    if "$" in expanded:
        raise ConfigError(f"{key}: expected the environment variables in {text!r} set, "
                          f"got {expanded!r}")
    path = Path(expanded)
    if not path.is_absolute() and not (path.suffix == "" and config_path(path) != path):
        path = root / path
    return str(path)


def stage_config(suite: Suite, stage: Stage) -> tuple[str, dict[str, Any], EnvConfig]:
    """(config, overrides, the EnvConfig they make) of one stage; checks it."""
    base = load_config(suite.config, **stage.set)
    overrides = stage.overrides(base.control_dt)
    return suite.config, overrides, load_config(suite.config, **overrides)
