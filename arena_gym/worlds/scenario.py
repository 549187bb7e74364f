"""Arena scenario files (JSON): robots' start and goal, static obstacles, pedestrians.

    >>> scenario = load_scenario("worlds/map_empty/scenarios/default.json")
    >>> scenario.robots[0].start, len(scenario.static_obstacles), scenario.pedestrians[0].waypoints
    ((24.0, 20.0, 0.7), 3, ((2.0, 14.0), (14.0, 2.0)))
    >>> spawn_scenario_statics(store, 0, scenario)  # its models, named scenario/<name>

Two formats load into one structure:
- Arena (current): {"robots": [{"start", "goal"}], "obstacles": {"static", "dynamic",
  "interactive"}, "map", "resets"}; `pos` is [x, y] or [x, y, yaw].
- arena-tools (older): {"pedsim_agents", "static_obstacles", "robot_position", "robot_goal",
  "map_path", "format": "arena-tools", "resets"}. Paths in it are kept as strings, never opened.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from arena_gym.assets.obstacle_models import (
    BOXES,
    Footprint,
    ModelError,
    ObstacleModel,
    load_model,
    model_key,
)
from arena_gym.errors import AssetWarning
from arena_gym.files import read_text
from arena_gym.people.crowd import LOOP, PING_PONG
from arena_gym.scene.requests import Prim
from arena_gym.scene.store import SceneStore

Pose2D = tuple[float, float, float]  # x, y, yaw
T = TypeVar("T")
_ARENA_KEYS = ("robots", "obstacles", "map", "resets")
_OBSTACLE_KEYS = ("static", "dynamic", "interactive")
_TOOLS_KEYS = ("pedsim_agents", "static_obstacles", "robot_position", "robot_goal", "map_path",
               "format", "resets")


class ScenarioError(ValueError):
    """A scenario file that cannot be read: names the file, the JSON path, what was expected
    and what came."""


@dataclass(frozen=True)
class RobotTask:
    """One robot's start and goal pose."""

    start: Pose2D
    goal: Pose2D


@dataclass(frozen=True)
class StaticObstacle:
    """A static obstacle: `model` as written ("shelf", "shelf.yaml") or None; `extra` holds
    the entry's other fields as given."""

    name: str
    model: str | None
    pose: Pose2D
    extra: Mapping[str, Any]


@dataclass(frozen=True)
class Pedestrian:
    """A pedestrian: start pose, waypoints (x, y) and `params` with every other field as given
    (id, type, waypoint_mode, vmax, force factors, yaml_file, ...)."""

    name: str
    model: str | None
    pose: Pose2D
    waypoints: tuple[tuple[float, float], ...]
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Scenario:
    """A scenario in one shape for both formats; `raw` is the file's JSON, read-only."""

    path: Path
    format: str  # "arena" or "arena-tools"
    robots: tuple[RobotTask, ...]
    static_obstacles: tuple[StaticObstacle, ...]
    pedestrians: tuple[Pedestrian, ...]
    interactive: tuple[Mapping[str, Any], ...]  # Arena's obstacles.interactive, as given
    map: str | None  # Arena: a map name; arena-tools: the author's map.yaml path (not opened)
    resets: int | None
    raw: Mapping[str, Any]


def load_scenario(path: str | Path) -> Scenario:
    """Read an Arena or arena-tools scenario JSON file; see the module docstring."""
    path = Path(path)
    try:
        doc = json.loads(read_text(path, f"scenario {path}", error=ScenarioError))
    except FileNotFoundError:
        raise ScenarioError(
            f"scenario {path}: expected an existing file, got no such file"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:  # binary, wrong encoding, a folder
        raise ScenarioError(
            f"scenario {path}: expected a readable UTF-8 JSON file, got {exc}") from None
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            f"scenario {path}: expected JSON, got a syntax error at line {exc.lineno}, "
            f"column {exc.colno}: {exc.msg}"
        ) from None
    read = _Reader(path)
    read.mapping("$", doc)
    if "pedsim_agents" in doc or "format" in doc:
        return _load_tools(read, doc)
    if "robots" in doc or "obstacles" in doc:
        return _load_arena(read, doc)
    raise read.error(
        "$", "an Arena scenario (keys robots, obstacles) or an arena-tools one (pedsim_agents, "
        "robot_position, robot_goal, format)", f"keys {sorted(doc)}"
    )


def _load_arena(read: _Reader, doc: dict) -> Scenario:
    read.keys("$", doc, _ARENA_KEYS)
    robots = []
    for i, robot in enumerate(read.array("$.robots", doc.get("robots", []))):
        where = f"$.robots[{i}]"
        read.keys(where, read.mapping(where, robot), ("start", "goal"))
        robots.append(RobotTask(read.pose(f"{where}.start", robot.get("start")),
                                read.pose(f"{where}.goal", robot.get("goal"))))
    obstacles = read.mapping("$.obstacles", doc.get("obstacles", {}))
    read.keys("$.obstacles", obstacles, _OBSTACLE_KEYS)
    statics = _each(read, "$.obstacles.static", obstacles.get("static", []), _static)
    peds = _each(read, "$.obstacles.dynamic", obstacles.get("dynamic", []), _pedestrian)
    interactive = read.array("$.obstacles.interactive", obstacles.get("interactive", []))
    return _scenario(read, doc, "arena", robots, statics, peds, interactive, "$.map")


def _load_tools(read: _Reader, doc: dict) -> Scenario:
    read.keys("$", doc, _TOOLS_KEYS)
    if doc.get("format", "arena-tools") != "arena-tools":
        raise read.error("$.format", "'arena-tools'", repr(doc["format"]))
    robot = RobotTask(read.pose("$.robot_position", doc.get("robot_position")),
                      read.pose("$.robot_goal", doc.get("robot_goal")))
    statics = _each(read, "$.static_obstacles", doc.get("static_obstacles", []), _static)
    peds = _each(read, "$.pedsim_agents", doc.get("pedsim_agents", []), _pedestrian)
    return _scenario(read, doc, "arena-tools", [robot], statics, peds, [], "$.map_path")


def _each(read: _Reader, where: str, value: object, parse: Callable[[_Reader, str, object], T]
          ) -> list[T]:
    return [parse(read, f"{where}[{i}]", item) for i, item in enumerate(read.array(where, value))]


def _scenario(
    read: _Reader,
    doc: dict,
    fmt: str,
    robots: list[RobotTask],
    statics: list[StaticObstacle],
    peds: list[Pedestrian],
    interactive: list,
    map_where: str,  # "$.map" or "$.map_path"
) -> Scenario:
    map_ = doc.get(map_where[2:])
    if map_ is not None and not isinstance(map_, str):
        raise read.error(map_where, "a string", _describe(map_))
    resets = doc.get("resets")
    if resets is not None and (isinstance(resets, bool) or not isinstance(resets, int)
                               or resets < 0):
        raise read.error("$.resets", "an integer >= 0", repr(resets))
    for kind, items in (("static obstacle", statics), ("pedestrian", peds)):
        names = [item.name for item in items]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ScenarioError(f"scenario {read.path}: expected unique {kind} names, got "
                                f"{', '.join(map(repr, twice))} more than once")
    return Scenario(read.path, fmt, tuple(robots), tuple(statics), tuple(peds),
                    tuple(_freeze(i) for i in interactive), map_, resets, _freeze(doc))


def _static(read: _Reader, where: str, entry: object) -> StaticObstacle:
    entry = read.mapping(where, entry)
    name = read.name(where, entry)
    model = read.optional_string(f"{where}.model", entry.get("model"))
    x, y, yaw = read.pose(f"{where}.pos", entry.get("pos"))
    if "angle" in entry:  # arena-tools keeps the yaw apart from a 2-D pos
        yaw = read.number(f"{where}.angle", entry["angle"])
    extra = {k: v for k, v in entry.items() if k not in ("name", "model", "pos", "angle")}
    return StaticObstacle(name, model, (x, y, yaw), _freeze(extra))


def _pedestrian(read: _Reader, where: str, entry: object) -> Pedestrian:
    entry = read.mapping(where, entry)
    name = read.name(where, entry)
    model = read.optional_string(f"{where}.model", entry.get("model"))
    pose = read.pose(f"{where}.pos", entry.get("pos"))
    points = read.array(f"{where}.waypoints", entry.get("waypoints", []))
    waypoints = tuple(read.pose(f"{where}.waypoints[{k}]", p)[:2] for k, p in enumerate(points))
    params = {k: v for k, v in entry.items() if k not in ("name", "model", "pos", "waypoints")}
    return Pedestrian(name, model, pose, waypoints, _freeze(params))  # type: ignore[arg-type]


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


class _Reader:
    """Checks JSON values, raising errors that name the file and the JSON path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, where: str, expected: str, got: str) -> ScenarioError:
        return ScenarioError(f"scenario {self.path}: {where}: expected {expected}, got {got}")

    def mapping(self, where: str, value: object) -> dict:
        if not isinstance(value, dict):
            raise self.error(where, "an object", _describe(value))
        return value

    def array(self, where: str, value: object) -> list:
        if not isinstance(value, list):
            raise self.error(where, "an array", _describe(value))
        return value

    def keys(self, where: str, value: dict, known: tuple[str, ...]) -> None:
        unknown = [k for k in value if k not in known]
        if unknown:
            raise self.error(where, f"keys among {', '.join(known)}",
                             f"unknown key{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))}")

    def number(self, where: str, value: object) -> float:
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value)):
            raise self.error(where, "a finite number", _describe(value))
        return float(value)

    def pose(self, where: str, value: object) -> Pose2D:
        if not isinstance(value, list) or len(value) not in (2, 3):
            raise self.error(where, "[x, y] or [x, y, yaw]", _describe(value))
        values = [self.number(f"{where}[{k}]", v) for k, v in enumerate(value)]
        return (values[0], values[1], values[2] if len(values) == 3 else 0.0)

    def name(self, where: str, entry: dict) -> str:
        name = entry.get("name")
        if not isinstance(name, str) or not name or "/" in name:
            raise self.error(f"{where}.name", "a non-empty string without '/'", _describe(name))
        return name

    def optional_string(self, where: str, value: object) -> str | None:
        if value is not None and (not isinstance(value, str) or not value):
            raise self.error(where, "a non-empty string", _describe(value))
        return value


def _describe(value: object) -> str:
    if value is None:
        return "nothing"
    text = json.dumps(value) if isinstance(value, (dict, list, str, int, float)) else repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


# ------------------------------------------------------------------------------ spawning
FOOTPRINTS = BOXES  # the shared models' annotated boxes (arena_gym.assets.obstacle_models)
DEFAULT_FOOTPRINT = Footprint((0.5, 0.5, 1.0))  # a static obstacle whose model is unknown


def placeholder_footprint(model: str | None) -> Footprint:
    """The known footprint of `model` (see FOOTPRINTS), else DEFAULT_FOOTPRINT."""
    return FOOTPRINTS.get(model_key(model) or "", DEFAULT_FOOTPRINT)


def scenario_model_paths(scenario: Scenario) -> tuple[Path, ...]:
    """Where a scenario's model names resolve by default: Arena's layout keeps obstacle
    models in `obstacles/` next to `worlds/` (<root>/worlds/<world>/scenarios/<file>)."""
    parents = scenario.path.resolve().parents
    folder = parents[3] / "obstacles" if len(parents) > 3 else None
    return (folder,) if folder is not None and folder.is_dir() else ()


def spawn_scenario_statics(
    store: SceneStore,
    env_id: int,
    scenario: Scenario,
    model_paths: Iterable[str | Path] = (),
    bbox: bool = False,
    size_of: Callable[[str | None], Footprint | tuple[float, float, float]] | None = None,
) -> list[Prim]:
    """Spawn each static obstacle as its model, a prim `scenario/<name>` standing on the
    floor; returns the prims spawned.

    The model name resolves under `model_paths`, then the scenario's own asset tree
    (`scenario_model_paths`). `bbox=True` spawns each model's bounding box instead; a model
    that cannot be found spawns as its annotated box (FOOTPRINTS) or DEFAULT_FOOTPRINT, with
    an AssetWarning. `size_of(model)` (a Footprint, or a plain (x, y, z) size centred on the
    model's origin) spawns boxes of those sizes instead of models.

    >>> spawn_scenario_statics(store, 0, scenario, size_of=lambda model: (0.5, 0.5, 1.0))
    """
    prims = [Prim.of_model(model, f"scenario/{obstacle.name}", obstacle.pose, bbox=bbox)
             for obstacle, model in scenario_models(scenario, model_paths, size_of)]
    spawned = set(store[env_id].spawn_prims(prims))
    return [p for p in prims if p.name in spawned]


def scenario_models(
    scenario: Scenario,
    model_paths: Iterable[str | Path] = (),
    size_of: Callable[[str | None], Footprint | tuple[float, float, float]] | None = None,
) -> list[tuple[StaticObstacle, ObstacleModel]]:
    """Each static obstacle with the model it spawns as (see spawn_scenario_statics); its
    `prim(..., bbox=True)` is the obstacle's footprint box (pedestrians walk around it)."""
    roots = (*[Path(p) for p in model_paths], *scenario_model_paths(scenario))
    models: dict[str | None, ObstacleModel] = {}
    out = []
    for obstacle in scenario.static_obstacles:
        if size_of is not None:
            box = size_of(obstacle.model)
            if not isinstance(box, Footprint):
                box = Footprint(tuple(box))  # type: ignore[arg-type]
            model = ObstacleModel(model_key(obstacle.model) or "", (), (), box)
        else:
            if obstacle.model not in models:
                models[obstacle.model] = _model(obstacle.model, roots)
            model = models[obstacle.model]
        out.append((obstacle, model))
    return out


def _model(name: str | None, roots: tuple[Path, ...]) -> ObstacleModel:
    if name is None:
        return ObstacleModel("", (), (), DEFAULT_FOOTPRINT)
    try:
        return load_model(name, roots)
    except ModelError as exc:
        warnings.warn(f"{exc}; using the default box {DEFAULT_FOOTPRINT.size}", AssetWarning,
                      stacklevel=3)
        return ObstacleModel(model_key(name) or "", (), (), DEFAULT_FOOTPRINT)


# Arena's `waypoint_mode`: 0 walks the list round and round; 1 (pedsim's "random" order) is
# played back and forth along the list, which keeps a scenario deterministic
ARENA_MODES = {0: LOOP, 1: PING_PONG}


def scenario_walks(scenario: Scenario) -> tuple[np.ndarray, list[np.ndarray], list[int],
                                                 list[float | None]]:
    """A scenario's pedestrians as Walkers.place arguments: starts (k, 3), waypoint lists,
    modes (ARENA_MODES of `waypoint_mode`, default loop) and vmax (its `vmax`, else None)."""
    starts = np.array([p.pose for p in scenario.pedestrians], dtype=float).reshape(-1, 3)
    waypoints = [np.array(p.waypoints, dtype=float).reshape(-1, 2) for p in scenario.pedestrians]
    modes, vmax = [], []
    for p in scenario.pedestrians:
        mode = p.params.get("waypoint_mode", 0)
        if mode not in ARENA_MODES:
            raise ValueError(f"scenario {scenario.path}: pedestrian {p.name!r}: expected "
                             f"waypoint_mode in {sorted(ARENA_MODES)}, got {mode!r}")
        modes.append(ARENA_MODES[mode])
        given = p.params.get("vmax")
        vmax.append(float(given) if isinstance(given, (int, float)) and given > 0 else None)
    return starts, waypoints, modes, vmax
