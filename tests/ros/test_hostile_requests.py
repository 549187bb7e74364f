"""No request ends the bridge (issue 43 item 1), against a real rclpy process: a robot name
or topic ROS refuses is refused before anything is made (ours: success false naming the
rule; Arena's: an empty path, the reason on the bridge's stderr), a Twist for a skid-steer
robot spawned into one env of two drives it, and after every bad request a good one is
served."""

from __future__ import annotations

import re

import pytest

from arena_gym.ros.files import file_roots
from arena_gym.ros.run import build_envs
from arena_gym.ros.topic_names import MAX_TOPIC
from arena_gym.worlds.default import builtin_robot_urdf
from tests.ros.conftest import Probe, served
from tests.sensors.worlds import lidar_block, probe_urdf

OURS = "arena_gym_interfaces/srv/SpawnUrdf"
ARENA = "arena_mujoco_msgs/srv/"
LONG = "a" * 300
RULE = ("expected a ROS name (letters, digits and '_', no part starting with a digit, at "
        f"most {MAX_TOPIC - len('/env_1//mujoco/joint_commands_velocity')} characters: its "
        f"topics /env_1/NAME/... fit ROS's {MAX_TOPIC}), got one where ")
LONG_SHOWN = f"{LONG[:60]!r}... (300 characters)"


@pytest.fixture(scope="module")
def bridge(ros_env, assets, tmp_path_factory):
    """A lockstep bridge over 1 env of the built-in robot and 1 empty env (--max-envs 2),
    the shared robots' folder allowed, and one holding a robot without wheels whose second
    lidar is named '2nd', a topic part ROS refuses (`brick.urdf`)."""
    folder = tmp_path_factory.mktemp("robots")
    (folder / "brick.urdf").write_text(probe_urdf(
        lidar_block(name="front", samples=90), lidar_block(name="2nd", samples=90)))
    roots = file_roots(builtin_robot_urdf(), [assets / "robots", folder])
    store, name = build_envs("empty", "builtin", 1, seed=0, path_roots=roots, max_envs=2)
    with served(store, name, ros_env) as b:
        b.brick = str(folder / "brick.urdf")
        yield b


def _arena_spawn(probe: Probe, name: str, urdf: str, env: int = 1, x: float = 0.0,
                 **fields) -> dict:
    pose = {"position": {"x": x, "y": 0.0, "z": 0.0}, "orientation": {"w": 1.0}}
    return probe.call("/mujoco/SpawnUrdf", ARENA + "SpawnUrdf", env_id=env, name=name,
                      urdf_path=urdf, base_frame="base_link", pose=pose, **fields)


def _names(bridge) -> list[list[str]]:
    return [list(scene.entities) for scene in bridge.sim.store.scenes]


@pytest.mark.parametrize(("name", "why"), [
    ("9x", "its part '9x' starts with a digit"),
    ("1robot", "its part '1robot' starts with a digit"),
    ("a-b", "it holds '-'"),
    (LONG, "it has 300 characters"),
])
def test_our_spawn_urdf_refuses_a_name_ros_refuses_then_serves(bridge, probe, name, why):
    before = _names(bridge)
    urdf = str(builtin_robot_urdf())
    reply = probe.call("/mujoco/spawn_urdf", OURS, env_id=1, name=name, urdf_path=urdf,
                       x=0.0, y=0.0, yaw=0.0)
    shown = LONG_SHOWN if name == LONG else repr(name)
    assert reply == {"success": False,
                     "message": f"spawn_urdf: robot name {shown}: {RULE}{why}"}
    assert _names(bridge) == before
    good = probe.call("/mujoco/spawn_urdf", OURS, env_id=1, name="good", urdf_path=urdf,
                      x=1.0, y=1.0, yaw=0.0)
    assert good == {"success": True, "message": ""}
    assert probe.publishers("/env_1/good/odom", 1) == 1
    assert probe.call("/mujoco/delete_prims", "arena_gym_interfaces/srv/DeletePrims",
                      env_id=1, names=["good"])["success"]


def test_arenas_spawn_urdf_refuses_a_name_or_topic_ros_refuses_then_serves(
        bridge, probe, capfd):
    before = _names(bridge)
    urdf = str(builtin_robot_urdf())
    sensor = {"name": "laser", "type": "laserscan", "topic": LONG, "frame": "", "sensor": ""}
    for name, fields, why in [
        ("9x", {}, f"robot '9x' not spawned: robot name '9x_base_link': {RULE}its part "
                   "'9x_base_link' starts with a digit"),
        ("", {}, "robot '' not spawned: expected a name (letters, digits, '_'), got ''"),
        (LONG, {}, f"robot {LONG!r} not spawned: robot name "
                   f"{(LONG + '_base_link')[:60]!r}... (310 characters): {RULE}it has 310 "
                   "characters"),
        ("ok", {"sensors": [sensor]},
         "robot 'ok' not spawned: sensor 'laser' topic: expected a ROS topic name (letters, "
         f"digits, '_' and '/', no part starting with a digit, at most {MAX_TOPIC} "
         f"characters), got {LONG_SHOWN}: it has 301 characters with its leading '/', more "
         f"than {MAX_TOPIC}"),
        ("ok", {"cmd_vel_topic": "9/cmd_vel"},
         "robot 'ok' not spawned: cmd_vel_topic: expected a ROS topic name (letters, digits, "
         f"'_' and '/', no part starting with a digit, at most {MAX_TOPIC} characters), got "
         "'9/cmd_vel': its part '9' starts with a digit"),
    ]:
        capfd.readouterr()
        assert _arena_spawn(probe, name, urdf, **fields) == {"path": ""}
        assert f"bridge: spawn_urdf: {why}\n" in capfd.readouterr().err
        assert _names(bridge) == before
    assert _arena_spawn(probe, "fine", urdf, odom_topic="/fine/odom") == {
        "path": "fine_base_link"}
    assert probe.publishers("/fine/odom", 1) == 1
    probe.call("/mujoco/DeletePrims", ARENA + "DeletePrims", env_id=1,
               names=["fine_base_link"])


def test_a_twist_drives_a_skid_steer_robot_spawned_into_one_env_of_two(
        bridge, probe, assets):
    """Arena's SpawnUrdf puts a Jackal (a skid steer: a yaw-rate loop reads its base's
    yaw rate) into env 0 beside the bridge's robot, env 1 empty; a Twist on its cmd_vel
    drives it, and both envs step on."""
    jackal = str(assets / "robots" / "jackal" / "jackal.urdf")
    reply = _arena_spawn(probe, "jackal", jackal, env=0, x=-2.0,
                         cmd_vel_topic="/jackal/cmd_vel")
    assert reply == {"path": "jackal_base_link"}
    odom = bridge.suite["jackal_base_link/odom"]
    assert probe.call("/mujoco/Step", ARENA + "Step", n=10)["success"]  # a first reading
    moved = []
    for twist in ({}, {"linear": {"x": 0.5}}):  # a zero Twist, then 0.5 m/s
        start = odom.position[0].copy()
        probe.command(bridge, "cmd_vel", "/jackal/cmd_vel", "geometry_msgs/msg/Twist", twist)
        assert probe.call("/mujoco/Step", ARENA + "Step", n=500)["success"]  # 1 s
        moved.append(float(odom.position[0][0] - start[0]))
    assert bridge.runner.error is None
    assert abs(moved[0]) < 0.01  # standing
    assert moved[1] > 0.3  # ~0.5 m/s for 1 s, from rest
    assert probe.step(1)["success"]  # still serving


def test_a_sensor_name_ros_refuses_in_a_topic_and_a_robot_without_wheels_are_told(
        bridge, probe, capfd):
    """The second lidar of `brick` is named '2nd': its topics stay unpublished, with
    a warning each, the first lidar's are there; a Twist for `brick` (no wheels to drive)
    is ignored with one warning, however many come."""
    with pytest.warns(UserWarning) as caught:
        reply = probe.call("/mujoco/spawn_urdf", OURS, env_id=1, name="brick",
                           urdf_path=bridge.brick, x=2.0, y=0.0, yaw=0.0)
    assert reply == {"success": True, "message": ""}
    told = {str(w.message) for w in caught if "not published" in str(w.message)}
    assert told == {f"bridge: robot 'brick': topic '/env_1/brick/2nd/{t}' is not "
                    "published: expected a ROS topic name, got one where its part '2nd' "
                    "starts with a digit"
                    for t in ("scan", "points")}
    assert probe.publishers("/env_1/brick/scan", 1) == 1
    capfd.readouterr()
    for _ in range(3):
        probe.command(bridge, "cmd_vel", "/env_1/brick/cmd_vel", "geometry_msgs/msg/Twist",
                      {"linear": {"x": 0.5}})
    assert capfd.readouterr().err == (
        "bridge: ignored cmd_vel: robot 'brick' has no wheels or planar drive to move it\n")
    assert probe.step(10)["success"]


def test_a_robot_name_ros_refuses_stops_the_bridge_before_it_starts(tmp_path, capsys):
    """--robot 2wd.urdf or a /robot_description named 3bot: one line naming the rule,
    exit status 2, before any env or node is made (no hint about the ROS venv)."""
    from arena_gym.cli import main

    urdf = tmp_path / "2wd.urdf"
    urdf.write_text(builtin_robot_urdf().read_text())
    assert main(["bridge", "--robot", str(urdf), "--world", "empty", "--envs", "2"]) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: --robot 2wd.urdf: robot name '2wd': {RULE}its part '2wd' starts "
        "with a digit\n")
    text = builtin_robot_urdf().read_text().replace('<robot name="arena_diffbot"',
                                                    '<robot name="3bot"')
    with pytest.raises(ValueError, match=re.escape(
            "robot description: robot name '3bot': expected a ROS name")):
        build_envs("empty", text, 1, seed=0)


def test_arenas_zero_height_wall_is_a_one_millimetre_box(bridge, probe):
    """As Arena's server builds it (its prims likewise): 1 mm high, not refused."""
    wall = {"name": "flat", "start": {"x": 3.0, "y": -1.0, "z": 0.0},
            "end": {"x": 3.0, "y": 1.0, "z": 0.0}, "thickness": 0.1}
    assert probe.call("/mujoco/SpawnWalls", ARENA + "SpawnWalls", env_id=1,
                      walls=[wall]) == {"ret": [True]}
    size = bridge.runner.call_soon(  # on the loop: the scenes are its while it serves
        lambda: bridge.sim.store[1].model.geom("env_1/flat/geom").size.copy()).result(60)
    assert size.tolist() == pytest.approx([1.0, 0.05, 0.0005])
    probe.call("/mujoco/DeletePrims", ARENA + "DeletePrims", env_id=1, names=["flat"])
