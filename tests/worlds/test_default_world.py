"""The built-in robot and default world: what `arena-gym demo` runs on a fresh machine."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from arena_gym.cli import main
from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator
from arena_gym.worlds import build_default_world, builtin_robot_urdf


def _yaw(quat) -> float:
    return math.degrees(2 * math.atan2(quat[3], quat[0]))


def test_builtin_robot_drives_one_metre_and_turns_ninety_degrees():
    store = SceneStore(1)
    info = store[0].spawn_urdf("bot", builtin_robot_urdf())
    (laser,) = [s for s in info.sensors if s.is_ray]
    assert ((laser.samples, laser.min_range, laser.max_range, laser.update_rate)
            == (360, 0.12, 3.5, 10.0))
    sim = Simulator(store)
    sim.set_cmd_vel(0, "bot", 0.2, 0.0)
    sim.step(2500)
    sim.set_cmd_vel(0, "bot", 0.0, 0.0)
    sim.step(250)
    pos, quat = store[0].get_pose("bot")
    assert pos[0] == pytest.approx(1.0, abs=0.03)
    assert abs(pos[1]) < 0.01 and abs(_yaw(quat)) < 1.0
    sim.set_cmd_vel(0, "bot", 0.0, 1.0)
    sim.step(round(math.pi / 2 / 0.002))
    sim.set_cmd_vel(0, "bot", 0.0, 0.0)
    sim.step(250)
    assert _yaw(store[0].get_pose("bot")[1]) == pytest.approx(90.0, abs=5.0)


def test_builtin_robot_model_params_match_its_urdf():
    import yaml

    params = yaml.safe_load((builtin_robot_urdf().parent / "model_params.yaml").read_text())
    params = params["/**"]["ros__parameters"]
    assert params["actions"]["continuous"]["linear_range"] == [-0.22, 0.22]
    assert params["actions"]["continuous"]["angular_range"] == [-2.84, 2.84]
    root = ET.parse(builtin_robot_urdf()).getroot()
    samples = root.find("gazebo/sensor/ray/scan/horizontal/samples")
    assert int(samples.text) == params["laser"]["num_beams"] == 360


def test_default_world_is_seeded_and_keeps_the_robot_clear():
    worlds = []
    for _ in range(2):
        store = SceneStore(2)
        starts = [build_default_world(store, env, np.random.default_rng(7 + env))
                  for env in range(2)]
        worlds.append((starts, store[0].model.geom_size.copy(), store[1].model.body_pos.copy()))
    assert worlds[0][0] == worlds[1][0]
    assert worlds[0][1].tobytes() == worlds[1][1].tobytes()
    assert worlds[0][2].tobytes() == worlds[1][2].tobytes()
    assert worlds[0][0][0] != worlds[0][0][1]  # envs differ
    assert sorted(list(store[0].entities)) == sorted(
        ["robot"] + [f"walls/{w}" for w in ("north", "south", "east", "west")]
        + [f"obstacles/box_{k}" for k in range(8)]
    )
    # nothing touches the robot at the start
    sim = Simulator(store)
    sim.step(100)
    model, data = store[0].model, store[0].data
    robot = model.body("env_0/robot/base_footprint").id
    for c in data.contact[: data.ncon]:
        bodies = {model.body_rootid[model.geom_bodyid[c.geom1]],
                  model.body_rootid[model.geom_bodyid[c.geom2]]}
        if robot in bodies:
            assert bodies == {robot, model.body("ground").id}, "the robot may touch only the ground"


def test_demo_command_prints_speed_and_final_poses(capsys):
    assert main(["demo", "--num-envs", "3", "--seconds", "0.5", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "batch group: 3 envs 0-2" in out
    assert "aggregate physics steps/s:" in out
    rows = [line for line in out.splitlines() if line.strip()[:1].isdigit() and "|" in line]
    assert len(rows) == 3


def test_cli_without_a_command_prints_help(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out
