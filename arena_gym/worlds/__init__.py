"""Ready-made worlds to spawn into a SceneStore env, the built-in robot they use, and
imported worlds: ROS occupancy-grid maps and Arena scenario files."""

from arena_gym.worlds.default import build_default_world, builtin_robot_urdf
from arena_gym.worlds.map_cover import MapCover, cover_map, walls_from_map
from arena_gym.worlds.occupancy import MapError, OccupancyMap, free_cells, is_free, load_map
from arena_gym.worlds.scenario import (
    Footprint,
    Pedestrian,
    RobotTask,
    Scenario,
    ScenarioError,
    StaticObstacle,
    load_scenario,
    spawn_scenario_statics,
)

__all__ = [
    "Footprint",
    "MapCover",
    "MapError",
    "OccupancyMap",
    "Pedestrian",
    "RobotTask",
    "Scenario",
    "ScenarioError",
    "StaticObstacle",
    "build_default_world",
    "builtin_robot_urdf",
    "cover_map",
    "free_cells",
    "is_free",
    "load_map",
    "load_scenario",
    "spawn_scenario_statics",
    "walls_from_map",
]
