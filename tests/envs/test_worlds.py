"""Every ROS map and Arena scenario in ../shared/assets/worlds runs as an ArenaMujoco-v0 world."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.worlds.scenario import ScenarioError
from tests.conftest import ASSETS

MAPS = sorted(p.parent.parent.name for p in ASSETS.glob("worlds/*/map/map.yaml"))
SCENARIOS = sorted(str(p.relative_to(ASSETS / "worlds"))
                   for p in ASSETS.glob("worlds/*/scenarios/*.json"))


@pytest.mark.parametrize("world", MAPS or ["(missing)"])
def test_every_map_hosts_episodes(assets, world):
    env = ArenaVectorEnv(2, world=str(assets / "worlds" / world / "map" / "map.yaml"),
                         curriculum={"stages": [[2, 4]]})
    obs, _ = env.reset(seed=0)
    core = env.core
    layout = core.layout
    walls = [n for n in list(core.store[0].entities) if n.startswith("map/wall_")]
    assert len(walls) == len(layout._walls) >= 4  # the map's walls are in
    for e in range(2):
        start = core.task.pose[e, :2]
        assert layout.free(start[None], core.params.radius)[0], "start in free space"
        assert obs["goal"][e, 0] >= 2.0
        assert obs["scan"][e].min() > 0.0
    env.step(np.zeros((2, 2)))
    env.close()


# stock scenarios whose points cannot be reached on their map: refused, naming the point
OFF_MAP = {
    "arena_rooms1/scenarios/1.json": "pedestrian 'Ped_7' waypoint 1 (-10.3498, -28.5506) is not "
    "free on map {map}: cell (row 935, col 546) is occupied or unknown",
    "arena_rooms1/scenarios/default.json": "pedestrian 'Ped_7' waypoint 1 (-10.3498, -28.5506) is "
    "not free on map {map}: cell (row 935, col 546) is occupied or unknown",
    "map_empty/scenarios/blocked_corridors.json": "robots[0].goal (22.05, -1.72) is outside map "
    "{map}: expected a cell within 481 x 626, got cell (row 515, col 441)",
    "map_empty/scenarios/highly_social.json": "robots[0].goal (-1, -1) is outside map {map}: "
    "expected a cell within 481 x 626, got cell (row 500, col -20)",
    "map_empty/scenarios/marl.json": "robots[0].goal (31.0737, 23.6145) is not free on map {map}: "
    "cell (row 8, col 621) is within 0.11 m (the robot's radius) of an occupied or unknown cell",
}


@pytest.mark.parametrize("scenario", SCENARIOS or ["(missing)"])
def test_every_scenario_sets_start_goal_and_statics(assets, scenario):
    path = assets / "worlds" / scenario
    if scenario in OFF_MAP:
        map_yaml = path.parent.parent / "map" / "map.yaml"
        message = f"scenario {path}: " + OFF_MAP[scenario].format(map=map_yaml)
        with pytest.raises(ScenarioError, match=re.escape(message)):
            ArenaVectorEnv(1, scenario=str(path))
        return
    env = ArenaVectorEnv(1, scenario=str(path))
    obs, _ = env.reset(seed=0)
    task = env.core.layout.scenario.robots[0]
    x, y, yaw = env.core.task.pose[0, 0], env.core.task.pose[0, 1], env.core.task.pose[0, 3]
    assert (x, y) == pytest.approx(task.start[:2])
    assert math.remainder(yaw - task.start[2], 2 * math.pi) == pytest.approx(0.0, abs=1e-9)
    assert obs["goal"][0, 0] == pytest.approx(math.dist(task.start[:2], task.goal[:2]), rel=1e-6)
    statics = [n for n in list(env.core.store[0].entities) if n.startswith("scenario/")]
    assert len(statics) == len(env.core.layout.scenario.static_obstacles)
    env.close()
