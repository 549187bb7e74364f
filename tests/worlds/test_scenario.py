"""Arena scenario files: both formats load into one structure, values match the JSON, bad
input names the file and the JSON path, and static obstacles spawn as footprint boxes."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from arena_gym.scene import SceneStore
from arena_gym.worlds.occupancy import is_free, load_map
from arena_gym.worlds.scenario import (
    DEFAULT_FOOTPRINT,
    FOOTPRINTS,
    Footprint,
    ScenarioError,
    load_scenario,
    model_key,
    placeholder_footprint,
    spawn_scenario_statics,
)

# file: format, robots, static obstacles, pedestrians
SCENARIOS = {
    "arena_rooms1/1.json": ("arena", 1, 0, 10),
    "arena_rooms1/2.json": ("arena", 1, 0, 5),
    "arena_rooms1/3.json": ("arena", 1, 0, 4),
    "arena_rooms1/4.json": ("arena", 1, 0, 3),
    "arena_rooms1/5.json": ("arena", 1, 0, 5),
    "arena_rooms1/default.json": ("arena", 1, 0, 10),
    "evaluation_floor/default.json": ("arena", 1, 0, 5),
    "evaluation_floor/obs10.json": ("arena-tools", 1, 0, 10),
    "evaluation_floor/obs20.json": ("arena-tools", 1, 0, 20),
    "experiment_rooms/default.json": ("arena", 1, 0, 4),
    "hospital/default.json": ("arena", 1, 0, 17),
    "map1_small/default.json": ("arena", 1, 0, 3),
    "map_empty/1.json": ("arena", 1, 3, 3),
    "map_empty/2.json": ("arena", 1, 5, 3),
    "map_empty/3.json": ("arena", 1, 6, 3),
    "map_empty/4.json": ("arena", 1, 5, 3),
    "map_empty/5.json": ("arena", 1, 5, 3),
    "map_empty/blocked_corridors.json": ("arena", 1, 12, 7),
    "map_empty/default.json": ("arena", 1, 3, 3),
    "map_empty/evacuation.json": ("arena", 1, 3, 10),
    "map_empty/highly_social.json": ("arena", 1, 0, 10),
    "map_empty/marl.json": ("arena", 21, 0, 0),
    "map_empty_small/default.json": ("arena", 1, 3, 3),
}


AUTHORS_MAP = "/home/ducanor/arena_ws/src/arena-rosnav/simulator_setup/maps/evaluation_floor/" + (
    "map.yaml")


def _path(assets: Path, key: str) -> Path:
    world, name = key.split("/")
    return assets / "worlds" / world / "scenarios" / name


def _write(tmp_path: Path, doc: object, name: str = "s.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_the_table_lists_every_scenario_file(assets):
    files = (assets / "worlds").glob("*/scenarios/*.json")
    assert {f"{p.parent.parent.name}/{p.name}" for p in files} == set(SCENARIOS)


@pytest.mark.parametrize("key", SCENARIOS)
def test_every_scenario_loads_with_its_counts(assets, key):
    fmt, robots, statics, peds = SCENARIOS[key]
    scenario = load_scenario(_path(assets, key))
    assert scenario.format == fmt and scenario.path == _path(assets, key)
    assert (len(scenario.robots), len(scenario.static_obstacles), len(scenario.pedestrians)) == (
        robots, statics, peds)
    raw = json.loads(_path(assets, key).read_text())
    assert json.loads(json.dumps(scenario.raw, default=dict)) == raw
    for ped in scenario.pedestrians:
        assert all(len(w) == 2 for w in ped.waypoints)


def test_current_format_values_match_the_json(assets):
    s = load_scenario(_path(assets, "map_empty/default.json"))
    assert (s.robots[0].start, s.robots[0].goal) == ((24.0, 20.0, 0.7), (2.0, 2.0, 0.0))
    shelf = s.static_obstacles[0]
    assert (shelf.name, shelf.model, shelf.pose) == ("shelf1", "shelf", (13.0, 11.0, -0.5))
    assert dict(shelf.extra) == {}
    ped = s.pedestrians[0]
    assert (ped.name, ped.model, ped.pose) == ("1", "actor1", (14.0, 2.0, 0.0))
    assert ped.waypoints == ((2.0, 14.0), (14.0, 2.0))
    assert dict(ped.params) == {"type": "adult", "waypoint_mode": 1}
    assert (s.map, s.resets, s.interactive) == (None, None, ())

    rooms = load_scenario(_path(assets, "arena_rooms1/1.json"))
    assert (rooms.map, rooms.resets) == ("arena_rooms1", 50)
    assert rooms.robots[0].goal == (4.514447, -29.761963, -0.121222)
    ped = rooms.pedestrians[0]
    assert (ped.name, ped.pose) == ("Ped_1", (-5.63173, 17.341999, 1.565596))
    assert ped.params["type"] == "human/adult"
    assert ped.waypoints[0] == (6.33085, 17.518)


def test_marl_has_21_robots(assets):
    s = load_scenario(_path(assets, "map_empty/marl.json"))
    assert len(s.robots) == 21 and (s.map, s.resets) == ("map_empty", 500)
    assert s.robots[0].start == (2.5991612941417785, 2.470048738105291, 0.0)
    assert s.robots[0].goal == (31.073728818013, 23.614529572663127, 0.0)


def test_blocked_corridors_uses_2d_pos_and_shelf_yaml(assets):
    s = load_scenario(_path(assets, "map_empty/blocked_corridors.json"))
    assert s.robots[0].start == (18.74, 17.12, 0.0) and s.robots[0].goal == (22.05, -1.72, 0.0)
    assert {o.model for o in s.static_obstacles} == {"shelf.yaml"}
    assert {model_key(o.model) for o in s.static_obstacles} == {"shelf"}
    by_name = {o.name: o for o in s.static_obstacles}
    assert by_name["15"].pose == (3.0, 6.93, 3.142)
    ped = s.pedestrians[0]
    assert (ped.name, ped.model, ped.pose) == ("20", None, (21.02, 16.89, 0.0))
    assert ped.waypoints[:2] == ((18.42, 15.03), (18.42, 7.99)) and len(ped.waypoints) == 7
    assert s.pedestrians[1].waypoints == ()
    assert dict(ped.params) == {"id": 0, "type": "adult", "waypoint_mode": 0}


@pytest.mark.parametrize("name, peds, with_params", [("obs10", 10, 10), ("obs20", 20, 11)])
def test_old_arena_tools_format(assets, name, peds, with_params):
    s = load_scenario(_path(assets, f"evaluation_floor/{name}.json"))
    assert s.format == "arena-tools" and len(s.pedestrians) == peds
    assert s.map == AUTHORS_MAP
    assert not Path(s.map).exists()  # the author's machine: kept as a string, never opened
    assert sum("vmax" in p.params for p in s.pedestrians) == with_params
    ped = s.pedestrians[0]
    assert ped.model is None and ped.pose[2] == 0.0
    full = [p for p in s.pedestrians if "vmax" in p.params]  # obs20: 9 agents have no parameters
    assert all(p.params["yaml_file"].endswith("/person_two_legged.model.yaml") for p in full)
    assert s.static_obstacles == () and s.resets is None
    if name == "obs10":
        assert s.robots[0].start == (-7.91, -6.06, 0.0) and s.robots[0].goal == (8.59, 5.18, 0.0)
        assert (ped.name, ped.pose) == ("1", (-6.73, -3.52, 0.0))
        assert ped.waypoints == ((-9.29, 0.61), (-6.77, -3.48))
        assert (ped.params["vmax"], ped.params["force_factor_social"]) == (1.0, 5)


def test_old_format_static_obstacles_take_their_angle(tmp_path):
    box = {"name": "box", "pos": [1.5, 2.5], "angle": 0.5, "flatland_model": "b.yaml"}
    doc = {"pedsim_agents": [], "robot_position": [0, 0], "robot_goal": [1, 1],
           "map_path": "m.yaml", "format": "arena-tools", "resets": 3, "static_obstacles": [box]}
    s = load_scenario(_write(tmp_path, doc))
    (box,) = s.static_obstacles
    assert (box.name, box.model, box.pose) == ("box", None, (1.5, 2.5, 0.5))
    assert dict(box.extra) == {"flatland_model": "b.yaml"}
    assert s.resets == 3


def test_scenario_is_read_only(assets):
    s = load_scenario(_path(assets, "map_empty/default.json"))
    with pytest.raises(TypeError):
        s.raw["robots"] = []  # type: ignore[index]
    with pytest.raises(TypeError):
        s.pedestrians[0].params["type"] = "child"  # type: ignore[index]
    assert isinstance(s.raw["robots"], tuple)


@pytest.mark.parametrize("world", sorted({key.split("/")[0] for key in SCENARIOS}))
def test_default_scenario_starts_and_goals_are_free_on_the_worlds_map(assets, world):
    m = load_map(assets / "worlds" / world / "map" / "map.yaml")
    s = load_scenario(assets / "worlds" / world / "scenarios" / "default.json")
    for robot in s.robots:
        assert is_free(m, *robot.start[:2], clearance=0.1)
        assert is_free(m, *robot.goal[:2], clearance=0.1)


# ------------------------------------------------------------------------- errors
def _raises(message: str):
    return pytest.raises(ScenarioError, match=re.escape(message))


_BAD = [
    ({"robots": [], "obstacle": {}},
     "$: expected keys among robots, obstacles, map, resets, got unknown key 'obstacle'"),
    ({"robots": [{"start": [1, "2"], "goal": [0, 0]}]},
     "$.robots[0].start[1]: expected a finite number, got str \"2\""),
    ({"robots": [{"start": [1, 2, 3, 4], "goal": [0, 0]}]},
     "$.robots[0].start: expected [x, y] or [x, y, yaw], got list [1, 2, 3, 4]"),
    ({"robots": [{"start": [1, 2]}]},
     "$.robots[0].goal: expected [x, y] or [x, y, yaw], got nothing"),
    ({"robots": {}}, "$.robots: expected an array, got dict {}"),
    ({"obstacles": {"static": [{"model": "shelf", "pos": [0, 0]}]}},
     "$.obstacles.static[0].name: expected a non-empty string without '/', got nothing"),
    ({"obstacles": {"dynamic": [{"name": "p", "pos": [0, 0], "waypoints": [[1, 1], [2]]}]}},
     "$.obstacles.dynamic[0].waypoints[1]: expected [x, y] or [x, y, yaw], got list [2]"),
    ({"obstacles": {"static": [{"name": "a", "pos": [0, 0], "model": 3}]}},
     "$.obstacles.static[0].model: expected a non-empty string, got int 3"),
    ({"robots": [], "resets": -1}, "$.resets: expected an integer >= 0, got -1"),
    ({"pedsim_agents": [], "robot_position": [0, 0], "robot_goal": [0, 0], "format": "yaml"},
     "$.format: expected 'arena-tools', got 'yaml'"),
    ({"peds": []}, ("$: expected an Arena scenario (keys robots, obstacles) or an arena-tools one "
                    "(pedsim_agents, robot_position, robot_goal, format), got keys ['peds']")),
    ([1, 2], "$: expected an object, got list [1, 2]"),
]


@pytest.mark.parametrize("doc, message", _BAD)
def test_malformed_scenarios_name_file_path_expected_and_got(tmp_path, doc, message):
    path = _write(tmp_path, doc)
    with _raises(f"scenario {path}: {message}"):
        load_scenario(path)


def test_unreadable_scenarios(tmp_path):
    missing = tmp_path / "none.json"
    with _raises(f"scenario {missing}: expected an existing file, got no such file"):
        load_scenario(missing)
    broken = tmp_path / "broken.json"
    broken.write_text('{"robots": [\n  {"start": [1, 2],}\n]}')
    with _raises(
        f"scenario {broken}: expected JSON, got a syntax error at line 2, column 20: "
        "Expecting property name enclosed in double quotes"
    ):
        load_scenario(broken)
    statics = [{"name": "a", "pos": [0, 0]}, {"name": "a", "pos": [1, 1]}]
    twice = _write(tmp_path, {"obstacles": {"static": statics}})
    with _raises(
        f"scenario {twice}: expected unique static obstacle names, got 'a' more than once"
    ):
        load_scenario(twice)


# ------------------------------------------------------------------------- spawning
def test_static_obstacles_spawn_as_footprint_boxes_with_bbox(assets):
    s = load_scenario(_path(assets, "map_empty_small/default.json"))
    store = SceneStore(1)
    prims = spawn_scenario_statics(store, 0, s, bbox=True)
    assert [p.name for p in prims] == ["scenario/shelf1", "scenario/shelf2", "scenario/chair1"]
    model, data = store[0].model, store[0].data
    assert model.ngeom == 1 + 3
    shelf = FOOTPRINTS["shelf"]
    geom = model.geom("env_0/scenario/shelf1/geom")
    assert geom.size == pytest.approx(np.array(shelf.size) / 2)
    # the shelf's box centre sits at its footprint offset, turned by the yaw (-0.5)
    c, sn = math.cos(-0.5), math.sin(-0.5)
    ox, oy = shelf.offset
    expected = (-2.0 + c * ox - sn * oy, -4.0 + sn * ox + c * oy, shelf.size[2] / 2)
    assert data.geom_xpos[geom.id] == pytest.approx(expected)
    chair = model.geom("env_0/scenario/chair1/geom")
    assert chair.size == pytest.approx(np.array(FOOTPRINTS["office_chair"].size) / 2)


def test_size_of_may_return_a_plain_size_and_unknown_models_get_the_default(assets):
    s = load_scenario(_path(assets, "map_empty/blocked_corridors.json"))
    store = SceneStore(1)
    seen = []
    def size_of(model):
        seen.append(model)
        return (0.3, 0.4, 0.5)

    prims = spawn_scenario_statics(store, 0, s, size_of=size_of)
    assert seen == ["shelf.yaml"] * 12 and len(prims) == 12
    assert all(p.scale == (0.3, 0.4, 0.5) and p.pose[2] == 0.25 for p in prims)
    assert store[0].model.ngeom == 1 + 12
    assert placeholder_footprint("shelf.yaml") == FOOTPRINTS["shelf"]
    assert placeholder_footprint("piano") == DEFAULT_FOOTPRINT == Footprint((0.5, 0.5, 1.0))
    assert placeholder_footprint(None) == DEFAULT_FOOTPRINT
    assert model_key("/a/b/person_two_legged.model.yaml") == "person_two_legged"
