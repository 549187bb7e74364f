"""A robot spawned through SpawnUrdf after the bridge started gets its topics: odom, scan,
points, imu, joint_states, its transform in /tf and its sensor mounts in /tf_static, with
the sensors layer's readings of that robot; the first robot's topics go on."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

SPAWN = (1.5, 0.5, 0.3)  # x, y, yaw in env 1
NS = "/env_1/r2"
TOPICS = {f"{NS}/odom": "nav_msgs/msg/Odometry", f"{NS}/scan": "sensor_msgs/msg/LaserScan",
          f"{NS}/points": "sensor_msgs/msg/PointCloud2", f"{NS}/imu": "sensor_msgs/msg/Imu",
          f"{NS}/joint_states": "sensor_msgs/msg/JointState", "/tf": "tf2_msgs/msg/TFMessage",
          "/env_1/robot/odom": "nav_msgs/msg/Odometry"}
WORLD = "empty"  # the conftest bridge's world


@pytest.fixture(scope="module")
def spawned(probe):
    """The probe, after spawning the built-in robot as r2 into env 1 (the bridge running)
    and subscribing to its topics."""
    from arena_gym.worlds.default import builtin_robot_urdf

    x, y, yaw = SPAWN
    reply = probe.call("/mujoco/spawn_urdf", "arena_gym_interfaces/srv/SpawnUrdf", env_id=1,
                       name="r2", urdf_path=str(builtin_robot_urdf()), x=x, y=y, yaw=yaw)
    assert reply["success"], reply["message"]
    for topic, kind in TOPICS.items():
        assert probe.listen(topic, kind) == 1, f"no publisher of {topic}"
    return probe


def test_a_robot_spawned_later_gets_its_topics(bridge, spawned):
    probe = spawned
    x, y, _ = SPAWN
    for topic in TOPICS:
        probe.take(topic)
    assert probe.step(100)["success"]  # 0.2 s: 10 ticks
    suite, store = bridge.suite, bridge.sim.store

    odom = probe.take(f"{NS}/odom", 10)
    assert len(odom) == 10
    p = odom[-1]["pose"]["pose"]["position"]
    np.testing.assert_array_equal([p["x"], p["y"], p["z"]], suite["r2/odom"].position[1])
    assert (p["x"], p["y"]) == pytest.approx((x, y), abs=0.01)  # where it was spawned
    assert odom[-1]["child_frame_id"] == "env_1/r2/base_footprint"

    lidar = suite["r2/laser"]
    scans = probe.take(f"{NS}/scan", 3)  # 10 Hz: at 0.02, 0.1 and 0.2 s
    assert len(scans) == 3 and scans[-1]["header"]["frame_id"] == "env_1/r2/laser"
    np.testing.assert_array_equal(np.array(scans[-1]["ranges"], dtype=np.float32),
                                  lidar.ranges[1])
    cloud = probe.take(f"{NS}/points", 3)[-1]
    np.testing.assert_array_equal(
        np.frombuffer(bytes(cloud["data"]), dtype="<f4").reshape(-1, 3), lidar.points()[1])

    acc = probe.take(f"{NS}/imu", 10)[-1]["linear_acceleration"]
    np.testing.assert_array_equal([acc["x"], acc["y"], acc["z"]],
                                  suite["r2/imu"].linear_acceleration[1])
    assert acc["z"] == pytest.approx(9.81, abs=0.1)  # at rest: gravity

    joints = probe.take(f"{NS}/joint_states", 10)[-1]
    assert joints["name"] == ["wheel_left_joint", "wheel_right_joint"]
    data = store[1].data
    np.testing.assert_allclose(joints["position"],
                               [data.joint(f"env_1/r2/{n}").qpos[0] for n in joints["name"]],
                               atol=1e-12)

    tf = probe.take("/tf", 10)[-1]["transforms"]
    frames = [(t["header"]["frame_id"], t["child_frame_id"]) for t in tf]
    assert frames == [("robot/odom", "robot/base_footprint"),
                      ("env_1/robot/odom", "env_1/robot/base_footprint"),
                      ("env_1/r2/odom", "env_1/r2/base_footprint")]
    tr = tf[-1]["transform"]["translation"]
    np.testing.assert_allclose([tr["x"], tr["y"], tr["z"]], store[1].get_pose("r2")[0],
                               atol=1e-9)
    assert len(probe.take("/env_1/robot/odom", 10)) == 10  # the first robot goes on

    assert probe.listen("/tf_static", "tf2_msgs/msg/TFMessage") == 1
    static = probe.take("/tf_static", 1)[-1]["transforms"]
    children = {t["child_frame_id"] for t in static}
    assert {"robot/laser", "env_1/robot/laser", "env_1/r2/laser"} <= children


def test_the_spawned_robot_follows_its_cmd_vel(bridge, spawned):
    probe = spawned
    twist = "geometry_msgs/msg/Twist"
    assert probe.ask(do="publish", topic=f"{NS}/cmd_vel", type=twist,
                     msg={"linear": {"x": 0.1}}) == 1
    time.sleep(0.3)  # the command reaches the simulator before the Step request
    probe.step(250)  # 0.5 s to reach the speed
    probe.take(f"{NS}/odom", 25)
    p0 = bridge.suite["r2/odom"].position[1].copy()
    probe.step(500)  # 1 s at 0.1 m/s
    p1 = probe.take(f"{NS}/odom", 50)[-1]["pose"]["pose"]["position"]  # the latest
    probe.ask(do="publish", topic=f"{NS}/cmd_vel", type=twist, msg={"linear": {"x": 0.0}})
    assert math.hypot(p1["x"] - p0[0], p1["y"] - p0[1]) == pytest.approx(0.1, abs=0.005)
    pos = bridge.sim.store[0].get_pose("robot")[0]
    assert math.hypot(pos[0], pos[1]) < 0.01  # env 0's robot did not move
