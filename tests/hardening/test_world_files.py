"""Scenarios against their map, and unreadable map/scenario files as the domain's errors."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.worlds.occupancy import MapError, load_map
from arena_gym.worlds.scenario import ScenarioError, load_scenario


@pytest.fixture
def world(tmp_path):
    """A 2 x 2 m map (0.1 m cells, origin 0): a wall on row 10 from column 5 to 14."""
    (tmp_path / "map").mkdir()
    (tmp_path / "scenarios").mkdir()
    rows = []
    for r in range(20):
        rows.append(bytes(0 if r == 10 and 5 <= c < 15 else 254 for c in range(20)))
    (tmp_path / "map" / "map.pgm").write_bytes(b"P5\n20 20\n255\n" + b"".join(rows))
    (tmp_path / "map" / "map.yaml").write_text(
        "image: map.pgm\nresolution: 0.1\norigin: [0.0, 0.0, 0.0]\nnegate: 0\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\n")
    return tmp_path


def _scenario(world, start, goal, waypoints=((0.5, 0.5),)):
    path = world / "scenarios" / "s.json"
    path.write_text(json.dumps({
        "robots": [{"start": list(start), "goal": list(goal)}],
        "obstacles": {"static": [], "interactive": [], "dynamic": [
            {"name": "ped", "pos": [0.5, 0.5], "waypoints": [list(w) for w in waypoints]}]},
    }))
    return path


@pytest.mark.parametrize("start, goal, waypoints, message", [
    ((1.0, 0.95, 0.0), (0.5, 1.6), ((0.5, 0.5),),
     ("robots[0].start (1, 0.95) is not free on map {map}: cell (row 10, col 10) is within "
     "0.11 m (the robot's radius) of an occupied or unknown cell")),
    ((5.0, 0.5, 0.0), (0.5, 1.6), ((0.5, 0.5),),
     ("robots[0].start (5, 0.5) is outside map {map}: expected a cell within 20 x 20, got cell "
     "(row 14, col 50)")),
    ((0.5, 0.4, 0.0), (1.2, 0.92), ((0.5, 0.5),),
     ("robots[0].goal (1.2, 0.92) is not free on map {map}: cell (row 10, col 11) is within "
     "0.11 m (the robot's radius) of an occupied or unknown cell")),
    ((0.5, 0.4, 0.0), (0.5, 1.6), ((0.5, 0.5), (1.05, 0.95)),
     ("pedestrian 'ped' waypoint 1 (1.05, 0.95) is not free on map {map}: cell (row 10, col 10) "
     "is occupied or unknown")),
])
def test_scenario_points_must_be_free_on_the_map(world, start, goal, waypoints, message):
    path = _scenario(world, start, goal, waypoints)
    full = f"scenario {path}: " + message.format(map=world / "map" / "map.yaml")
    files = sorted(p for p in world.rglob("*"))
    with pytest.raises(ScenarioError, match=re.escape(full) + "$"):
        ArenaVectorEnv(1, scenario=str(path))
    assert sorted(p for p in world.rglob("*")) == files


def test_a_free_scenario_runs(world):
    env = ArenaVectorEnv(1, scenario=str(_scenario(world, (0.5, 0.4, 0.0), (0.5, 1.6))))
    env.reset(seed=0)
    assert env.core.task.pose[0, :2].tolist() == pytest.approx([0.5, 0.4])
    env.close()


@pytest.mark.parametrize("content, expected", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xff",
     "expected a readable UTF-8 {kind} file, got 'utf-8' codec can't decode byte 0x89"),
    (b"\xff\xfe{\x00}\x00",
     "expected a readable UTF-8 {kind} file, got 'utf-8' codec can't decode byte 0xff"),
])
def test_binary_scenario_and_map_files_are_domain_errors(tmp_path, content, expected):
    scenario, map_yaml = tmp_path / "s.json", tmp_path / "map.yaml"
    scenario.write_bytes(content)
    map_yaml.write_bytes(content)
    with pytest.raises(ScenarioError, match=re.escape(
            f"scenario {scenario}: " + expected.format(kind="JSON"))):
        load_scenario(scenario)
    with pytest.raises(MapError, match=re.escape(
            f"map yaml {map_yaml}: " + expected.format(kind="YAML"))):
        load_map(map_yaml)


def test_truncated_map_images_are_map_errors(world):
    image = world / "map" / "map.pgm"
    image.write_bytes(image.read_bytes()[:100])
    with pytest.raises(MapError, match=re.escape(
            f"map image {image}: expected 400 pixels (20x20), got 87")):
        load_map(world / "map" / "map.yaml")
    image.write_bytes(b"P2\n2 2\n255\n1 2 x 4\n")
    with pytest.raises(MapError, match=re.escape(
            f"map image {image}: expected ASCII PGM pixel values, got non-numbers")):
        load_map(world / "map" / "map.yaml")


def test_a_folder_named_like_a_scenario_is_a_scenario_error(tmp_path):
    folder = tmp_path / "s.json"
    folder.mkdir()
    with pytest.raises(ScenarioError, match=re.escape(
            f"scenario {folder}: expected a readable UTF-8 JSON file, "
            "got [Errno 21] Is a directory")):
        load_scenario(folder)
    shutil.rmtree(folder)
