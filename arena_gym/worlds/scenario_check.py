"""Checking a scenario against its map: every start, goal and waypoint on a free cell.

A start inside a wall ends each episode at step 0 as a collision; a start off the map or a
goal inside a wall can never succeed. Both are refused when the scenario is loaded.
"""

from __future__ import annotations

from pathlib import Path

from arena_gym.worlds.occupancy import OccupancyMap, is_free
from arena_gym.worlds.scenario import Scenario, ScenarioError


def scenario_points(scenario: Scenario) -> list[tuple[str, float, float, bool]]:
    """(where, x, y, inflate) of every point a scenario asks a robot or pedestrian to reach."""
    points = []
    for i, robot in enumerate(scenario.robots):
        points.append((f"robots[{i}].start", robot.start[0], robot.start[1], True))
        points.append((f"robots[{i}].goal", robot.goal[0], robot.goal[1], True))
    for ped in scenario.pedestrians:
        for j, (x, y) in enumerate(ped.waypoints):
            points.append((f"pedestrian {ped.name!r} waypoint {j}", x, y, False))
    return points


def check_on_map(scenario: Scenario, occupancy: OccupancyMap, map_path: str | Path,
                 clearance: float) -> None:
    """ScenarioError for the first point off the map or within `clearance` metres of a cell
    that is not known free (robots' starts and goals; pedestrian waypoints uninflated)."""
    rows, cols = occupancy.shape
    for where, x, y, inflate in scenario_points(scenario):
        row, col = occupancy.cell_at(x, y)
        prefix = f"scenario {scenario.path}: {where} ({x:g}, {y:g})"
        if not (0 <= row < rows and 0 <= col < cols):
            raise ScenarioError(f"{prefix} is outside map {map_path}: expected a cell within "
                                f"{rows} x {cols}, got cell (row {row}, col {col})")
        margin = clearance if inflate else 0.0
        if not is_free(occupancy, x, y, margin):
            why = (f"is within {margin:g} m (the robot's radius) of an occupied or unknown cell"
                   if margin else "is occupied or unknown")
            raise ScenarioError(f"{prefix} is not free on map {map_path}: cell (row {row}, col "
                                f"{col}) {why}")
