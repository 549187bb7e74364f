"""Where a world has room for robots, goals and obstacles: the task samples from these.

A layout builds its static part into an env once (walls) and answers which points are free
with a given clearance. Episodes then place the obstacle pool and the robot inside it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena_gym.geometry.arrays import xp
from arena_gym.registry import WORLDS
from arena_gym.scene.requests import WALL_THICKNESS, Prim, Wall
from arena_gym.scene.store import SceneStore
from arena_gym.worlds.default import ROOM_SIZE, WALL_HEIGHT, room_walls
from arena_gym.worlds.map_cover import walls_from_map
from arena_gym.worlds.mechanisms import FILE_NAME as MECHANISMS_FILE
from arena_gym.worlds.mechanisms import MechanismSet, check_doors, mechanisms_next_to
from arena_gym.worlds.occupancy import OccupancyMap, free_cells, load_map
from arena_gym.worlds.scenario import load_scenario, scenario_models, spawn_scenario_statics
from arena_gym.worlds.scenario_check import check_on_map


@dataclass(frozen=True)
class RoomLayout:
    """A square room of side `size` (between wall centre lines), centred on the origin."""

    size: float = ROOM_SIZE
    wall_height: float = WALL_HEIGHT
    mechanisms = MechanismSet()  # random rooms have none

    @property
    def half_inner(self) -> float:
        return self.size / 2 - WALL_THICKNESS / 2

    def build(self, store: SceneStore, env_id: int) -> None:
        store[env_id].spawn_walls(room_walls(self.size, self.wall_height))

    def footprints(self) -> np.ndarray:
        """(B, 5) footprints of the walls (for pedestrians' obstacle forces)."""
        return wall_footprints(room_walls(self.size, self.wall_height))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        h = self.half_inner
        return np.array([-h, -h]), np.array([h, h])

    def free(self, points: np.ndarray, clearance: float) -> np.ndarray:
        """Whether each point (P, 2) is at least `clearance` from every wall (numpy or JAX
        arrays: the MJX backend samples its episodes with it)."""
        space = xp(points)
        inside = space.abs(space.atleast_2d(points)) <= self.half_inner - clearance
        return space.all(inside, axis=1)

    def occupancy(self, resolution: float = 0.05):
        """The room rasterised: cells whose centre lies on the floor are free, the rest
        (walls and a cell around them) occupied; for the global path."""

        outer = self.size + 2 * WALL_THICKNESS
        cells = math.ceil(outer / resolution)
        centre = (np.arange(cells) + 0.5) * resolution - cells * resolution / 2
        inside = np.abs(centre) < self.half_inner
        free = inside[:, None] & inside[None, :]
        half = cells * resolution / 2
        return OccupancyMap(~free, free, resolution, (-half, -half, 0.0))


class MapLayout:
    """A ROS occupancy map: its occupied cells become walls; free cells host the task.
    Doors and elevators declared next to it (worlds/mechanisms.py) are built with the walls,
    and no start, goal or obstacle is placed where they move."""

    def __init__(self, map_yaml: str | Path, wall_height: float = 1.0) -> None:

        self.map = load_map(map_yaml)
        self.source = str(map_yaml)  # how messages name the world
        self.mechanisms = mechanisms_next_to(map_yaml)
        self.wall_height = wall_height
        self._free: dict[float, np.ndarray] = {}
        if self.mechanisms:
            check_doors(self.mechanisms, lambda p: self._on_free_cells(p, 0.0),
                        Path(map_yaml).parent / MECHANISMS_FILE)
        self._walls = None
        rows, cols = np.nonzero(self.map.free)
        if rows.size == 0:
            raise ValueError(f"{map_yaml}: expected a map with free cells, got none")
        centres = self.map.cell_centers(rows, cols)
        self._lo, self._hi = centres.min(axis=0), centres.max(axis=0)

    def build(self, store: SceneStore, env_id: int) -> None:
        if self._walls is None:

            self._walls = walls_from_map(self.map, height=self.wall_height)
        store[env_id].spawn_walls(self._walls)
        if self.mechanisms:
            self.mechanisms.spawn(store, env_id)

    def footprints(self) -> np.ndarray:
        """(B, 5) footprints of the map's walls (for pedestrians' obstacle forces)."""

        if self._walls is None:
            self._walls = walls_from_map(self.map, height=self.wall_height)
        return wall_footprints(self._walls)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self._lo, self._hi

    def occupancy(self):
        """The map the walls are built from; for the global path."""
        return self.map

    def free(self, points: np.ndarray, clearance: float) -> np.ndarray:
        out = self._on_free_cells(points, clearance)
        if self.mechanisms:
            out &= ~self.mechanisms.keep_out(np.atleast_2d(points), clearance)
        return out

    def _on_free_cells(self, points: np.ndarray, clearance: float) -> np.ndarray:
        """Whether each point (P, 2) lies at least `clearance` from the map's walls."""

        key = round(float(clearance), 4)
        if key not in self._free:
            self._free[key] = free_cells(self.map, key)
        grid = self._free[key]
        points = np.atleast_2d(points)
        u, v = self.map.to_map(points[:, 0], points[:, 1])
        rows = self.map.shape[0] - 1 - np.floor(v / self.map.resolution).astype(int)
        cols = np.floor(u / self.map.resolution).astype(int)
        inside = (rows >= 0) & (rows < grid.shape[0]) & (cols >= 0) & (cols < grid.shape[1])
        out = np.zeros(len(points), bool)
        out[inside] = grid[rows[inside], cols[inside]]
        return out

class ScenarioLayout(MapLayout):
    """An Arena scenario on its world's map: fixed start and goal, its static obstacles."""

    def __init__(self, scenario_json: str | Path, wall_height: float = 1.0,
                 clearance: float = 0.0, model_paths: tuple[str, ...] = (),
                 bbox: bool = False) -> None:

        self.scenario = load_scenario(scenario_json)
        map_yaml = Path(scenario_json).resolve().parent.parent / "map" / "map.yaml"
        if not map_yaml.is_file():
            raise ValueError(f"{scenario_json}: expected its world's map at {map_yaml}, found none")
        super().__init__(map_yaml, wall_height)
        self.source = str(scenario_json)
        if not self.scenario.robots:
            raise ValueError(f"{scenario_json}: expected at least one robot task, got none")
        check_on_map(self.scenario, self.map, map_yaml, clearance)  # clearance: robot radius
        self.model_paths, self.bbox = model_paths, bbox  # where its statics' models resolve

    def build(self, store: SceneStore, env_id: int) -> None:

        super().build(store, env_id)
        spawn_scenario_statics(store, env_id, self.scenario, self.model_paths, bbox=self.bbox)

    def footprints(self) -> np.ndarray:
        """(B, 5) footprints of the map's walls and the scenario's static obstacles."""
        import warnings


        with warnings.catch_warnings():  # a missing model warned when it was spawned
            warnings.simplefilter("ignore")
            models = scenario_models(self.scenario, self.model_paths)
        boxes = [Prim.of_model(m, f"scenario/{o.name}", o.pose, bbox=True) for o, m in models]
        return np.concatenate([super().footprints(), prim_footprints(boxes)])

    @property
    def task(self) -> tuple[tuple[float, float, float], tuple[float, float]]:
        robot = self.scenario.robots[0]
        return tuple(robot.start), tuple(robot.goal[:2])  # type: ignore[return-value]


def make_layout(world: str, scenario: str, room_size: float, clearance: float = 0.0,
                model_paths: tuple[str, ...] = (), bbox: bool = False):
    """The layout a config names: a scenario (its points `clearance` from walls, its static
    obstacles' models found under `model_paths`, as boxes if `bbox`), a ROS map.yaml, or a
    world source registered in WORLDS by name ("random" rooms, or a plugin's)."""
    if scenario:
        return ScenarioLayout(scenario, clearance=clearance, model_paths=model_paths, bbox=bbox)
    if world in WORLDS:
        return WORLDS[world](room_size=room_size, clearance=clearance, model_paths=model_paths,
                             bbox=bbox)
    world = expand_world(world)
    if world.endswith((".yaml", ".yml")):
        return MapLayout(world)
    raise ValueError(f"world: expected a ROS map.yaml path or one of {WORLDS.names()}, "
                     f"got {world!r}")


def env_layouts(worlds: tuple[str, ...], num_envs: int, scenario: str, room_size: float,
                clearance: float = 0.0, model_paths: tuple[str, ...] = (),
                bbox: bool = False) -> list:
    """Env e's layout: worlds[e % len(worlds)] (see make_layout; each world loaded once)."""
    made: dict[str, object] = {}
    out = []
    for e in range(num_envs):
        world = worlds[e % len(worlds)]
        if world not in made:
            made[world] = make_layout(world, scenario, room_size, clearance, model_paths, bbox)
        out.append(made[world])
    return out


def expand_world(world: str) -> str:
    """`world` with `$VAR`s expanded from the environment (e.g. `$ARENA_GYM_ASSETS/...`);
    an unset one is an error naming it."""
    expanded = os.path.expandvars(world)
    if "$" in expanded:
        raise ValueError(f"world {world!r}: expected its environment variables set "
                         f"(e.g. ARENA_GYM_ASSETS, the shared assets folder), got {expanded!r}")
    return expanded


# A world source: factory(room_size=, clearance=, model_paths=, bbox=) -> a layout (build,
# footprints, bounds, free: as RoomLayout). Maps and scenarios are paths, not names.
WORLDS.register("random", lambda room_size, **_: RoomLayout(room_size))


def wall_footprints(walls: Sequence[Wall]) -> np.ndarray:
    """(B, 5) footprints (x, y, yaw, length, thickness) of wall segments."""
    rows = []
    for w in walls:
        (x0, y0), (x1, y1) = w.start, w.end
        rows.append(((x0 + x1) / 2, (y0 + y1) / 2, math.atan2(y1 - y0, x1 - x0), w.length,
                     w.thickness))
    return np.array(rows, dtype=float).reshape(-1, 5)


def prim_footprints(prims: Sequence[Prim]) -> np.ndarray:
    """(B, 5) footprints (x, y, yaw, sx, sy) of box prims."""
    return np.array([(p.pose[0], p.pose[1], p.pose[3], p.scale[0], p.scale[1]) for p in prims],
                    dtype=float).reshape(-1, 5)
