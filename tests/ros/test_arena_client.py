"""A client written only from Arena's interface (tests/ros/arena_client.py, a separate rclpy
process) drives the bridge as it drives Arena's MuJoCo server: a robot with package://
meshes, a furnished obstacle by mesh_path, a box in an .mdl material, walls from 3-D
points, a light, a pedestrian, a Step, a viewport capture, edits, a prefix delete, ResetWorld
and the same names again, then the arena_peds stream; every answer as Arena's gives it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from arena_gym.ros.files import file_roots
from arena_gym.ros.run import build_envs
from arena_gym.worlds.default import builtin_robot_urdf
from tests.ros.conftest import served
from tests.waiting import wait_until

CLIENT = Path(__file__).resolve().parent / "arena_client.py"
MDL = 'export material Red(*) = OmniPBR(diffuse_color_constant: color(0.8, 0.1, 0.1));\n'
ROBOT = "env_0_Robots_burger_base_footprint"
WORLD = [  # the answers of one world's spawns, as Arena's server gives them
    ("/mujoco/SpawnUrdf", {"path": ROBOT}),
    ("/mujoco/SpawnPrims", {"ret": [True, True]}),
    ("/mujoco/SpawnWalls", {"ret": [True, True]}),
    ("/mujoco/SpawnPedestrians", {"results": [0]}),  # SUCCESS
]


@pytest.fixture
def run(ros_env, assets, tmp_path):
    """The bridge (env 0: the built-in robot, nothing else; files from the assets and
    tmp_path), and the client's transcript once it is done."""
    (tmp_path / "red.mdl").write_text(MDL)
    config = {"urdf": str(assets / "robots" / "burger" / "burger.urdf"),
              "mesh": str(assets / "obstacles" / "cafe_table" / "meshes" / "cafe_table.dae"),
              "mdl": str(tmp_path / "red.mdl"),
              "actor": str(assets / "pedestrians" / "actor2.sdf")}
    (tmp_path / "config.json").write_text(json.dumps(config))
    roots = file_roots(builtin_robot_urdf(), [assets, tmp_path])
    with served(*build_envs("empty", "builtin", 1, seed=0, path_roots=roots), ros_env) as b:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
        done = subprocess.run([str(ros_env / "bin" / "python"), str(CLIENT),
                               str(tmp_path / "config.json")], capture_output=True, text=True,
                              env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        yield b, config, json.loads(done.stdout)


def test_an_arena_client_drives_the_bridge_as_arenas_server(run):
    bridge, config, out = run
    calls = [(c.get("service") or c["topic"], c.get("answer", c.get("published")))
             for c in out["transcript"]]
    capture = calls[8][1]
    assert capture["success"] and capture["message"] == "ok"
    image = capture["image"]
    assert (image["width"], image["height"], image["encoding"], image["step"], image["data"],
            image["header"]["frame_id"]) == (1920, 1080, "rgb8", 5760, 1920 * 1080 * 3, "map")
    calls[8] = ("/arena/viewport/capture", "checked above")
    assert calls == [
        ("/mujoco/PauseSimulation", {"success": True, "message": ""}),
        *WORLD,
        ("/mujoco/SpawnLights", {"ret": [True, True]}),
        ("/mujoco/Step", {"success": True, "sim_time": pytest.approx(0.03)}),
        ("/arena/viewport/set_view", {"success": True, "message": "ok"}),
        ("/arena/viewport/capture", "checked above"),
        ("/mujoco/EditPrims", {"ret": [True, True]}),
        ("/mujoco/DeletePrims", {"ret": [True, False]}),
        ("/mujoco/ResetWorld", {"ret": True}),
        *WORLD,  # the same names again: nothing left registered
        ("/mujoco/Step", {"success": True, "sim_time": pytest.approx(0.05)}),
        ("/mujoco/arena_peds", 1),
    ]
    seen = out["seen"]
    assert seen["clock"] == pytest.approx(0.03)
    assert ["map", "burger/odom", pytest.approx(0.03)] in seen["tf"]
    assert ["burger/odom", "burger/base_footprint", pytest.approx(0.03)] in seen["tf"]
    assert seen["odom"][:2] == ["burger/odom", "burger/base_footprint"]
    np.testing.assert_allclose(seen["odom"][2], [1.0, 0.0], atol=0.02)
    assert seen["scan"] == ["burger/base_scan", 360]
    assert seen["joint_states"] == [["wheel_left_joint", "wheel_right_joint"], 2]
    assert seen["capture_levels"] > 10  # not a blank frame

    # the scenes belong to the bridge's loop thread while it serves: read them there
    def on_loop(fn):
        return bridge.runner.call_soon(fn).result(timeout=60)

    store = bridge.sim.store
    assert sorted(on_loop(lambda: list(store[0].entities))) == sorted([
        ROBOT, "env_0_Obstacles_box", "env_0_Obstacles_table", "env_0_Walls_shelf",
        "env_0_Walls_wall_0"])
    box = on_loop(lambda: store.scene(0).entity("env_0_Obstacles_box").record)
    assert box.rgba == pytest.approx((0.8, 0.1, 0.1, 1.0))  # the .mdl's colour
    shelf = on_loop(lambda: store[0].model.geom("env_0/env_0_Walls_shelf/geom"))
    assert shelf.pos[2] == pytest.approx(1.0) and shelf.size[2] == pytest.approx(0.5)
    pool = store.scene(0).pedestrians
    # the stream moves the walker and dresses it in its model_uri's actor
    wait_until(lambda: on_loop(lambda: pool.actors.get("Pedestrians/walker")) == config["actor"],
               30, "the walker to wear its model_uri's actor")
    wait_until(lambda: np.allclose(on_loop(lambda: store[0].get_pose("Pedestrians/walker"))[0][:2],
                                   [0.5, -2.0], atol=1e-6), 30, "the walker at (0.5, -2.0)")
