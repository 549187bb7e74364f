"""Arena scenario files (JSON): robots' start and goal, static obstacles, pedestrians.

    >>> scenario = load_scenario("worlds/map_empty/scenarios/default.json")
    >>> scenario.robots[0].start, len(scenario.static_obstacles), scenario.pedestrians[0].waypoints
    ((24.0, 20.0, 0.7), 3, ((2.0, 14.0), (14.0, 2.0)))
    >>> spawn_scenario_statics(store, 0, scenario)  # footprint boxes named scenario/<name>

Two formats load into one structure:
- Arena (current): {"robots": [{"start", "goal"}], "obstacles": {"static", "dynamic",
  "interactive"}, "map", "resets"}; `pos` is [x, y] or [x, y, yaw].
- arena-tools (older): {"pedsim_agents", "static_obstacles", "robot_position", "robot_goal",
  "map_path", "format": "arena-tools", "resets"}. Paths in it are kept as strings, never opened.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from arena_gym.scene.records import Prim
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
        doc = json.loads(path.read_text(encoding="utf-8"))
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
@dataclass(frozen=True)
class Footprint:
    """A box that stands in for an obstacle model: full extents `size` (x, y, z) in metres,
    its centre `offset` (x, y) from the model's origin, in the model's frame."""

    size: tuple[float, float, float]
    offset: tuple[float, float] = (0.0, 0.0)


# Collision extents of the models in the shared obstacle assets (SDF boxes, collision meshes).
FOOTPRINTS: Mapping[str, Footprint] = MappingProxyType({
    "shelf": Footprint((0.92, 0.405, 1.2), (0.0, -0.1925)),
    "office_chair": Footprint((0.712, 0.688, 1.169), (0.0, 0.098)),
    "Desk": Footprint((0.49, 0.844, 0.552), (-0.014, 0.0)),
    "RecTable": Footprint((1.8, 1.0, 0.75)),
    "SquareShelf": Footprint((0.77, 0.4, 0.77)),
    "WoodenChair": Footprint((0.401, 0.364, 0.788), (-0.0185, 0.001)),
    "cafe_table": Footprint((0.913, 0.913, 0.775)),
    "warehouse_shelf": Footprint((3.6, 0.6, 1.8), (-0.5, 0.0)),
})
DEFAULT_FOOTPRINT = Footprint((0.5, 0.5, 1.0))


def model_key(model: str | None) -> str | None:
    """A model reference without folders and file suffixes: "shelf.yaml" -> "shelf"."""
    if model is None:
        return None
    name = Path(model).name
    for suffix in (".model.yaml", ".yaml", ".sdf", ".urdf", ".xml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def placeholder_footprint(model: str | None) -> Footprint:
    """The known footprint of `model` (see FOOTPRINTS), else DEFAULT_FOOTPRINT."""
    return FOOTPRINTS.get(model_key(model) or "", DEFAULT_FOOTPRINT)


def spawn_scenario_statics(
    store: SceneStore,
    env_id: int,
    scenario: Scenario,
    size_of: Callable[[str | None], Footprint | tuple[float, float, float]] = placeholder_footprint,
) -> list[Prim]:
    """Spawn each static obstacle as a box Prim `scenario/<name>` standing on the floor.

    A placeholder until mesh obstacles land: the box has the model's collision extents from
    `size_of(model)` (a Footprint, or a plain (x, y, z) size centred on the model's origin).
    Returns the prims spawned.

    >>> spawn_scenario_statics(store, 0, scenario, size_of=lambda model: (0.5, 0.5, 1.0))
    """
    prims = []
    for obstacle in scenario.static_obstacles:
        box = size_of(obstacle.model)
        if not isinstance(box, Footprint):
            box = Footprint(tuple(box))  # type: ignore[arg-type]
        x, y, yaw = obstacle.pose
        c, s = math.cos(yaw), math.sin(yaw)
        ox, oy = box.offset
        centre = (x + c * ox - s * oy, y + s * ox + c * oy, box.size[2] / 2, yaw)
        prims.append(Prim(f"scenario/{obstacle.name}", pose=centre, scale=box.size))
    store.spawn_prims(env_id, prims)
    return prims
