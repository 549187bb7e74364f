"""The bridge against a separate, real rclpy process (the probe): topics carry the sensors
layer's readings, Step advances the clock exactly, pause stops it, cmd_vel drives, the
services spawn and delete, and bad requests fail while the bridge keeps serving."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

STEP = "arena_gym_interfaces/srv/Step"
TOPICS = {
    "/clock": "rosgraph_msgs/msg/Clock",
    "/tf": "tf2_msgs/msg/TFMessage",
    "/robot/odom": "nav_msgs/msg/Odometry",
    "/robot/scan": "sensor_msgs/msg/LaserScan",
    "/robot/points": "sensor_msgs/msg/PointCloud2",
    "/robot/imu": "sensor_msgs/msg/Imu",
    "/robot/joint_states": "sensor_msgs/msg/JointState",
    "/env_1/robot/odom": "nav_msgs/msg/Odometry",
}


def secs(t: dict) -> float:
    return t["sec"] + t["nanosec"] * 1e-9


def nanos(t: dict) -> int:
    return t["sec"] * 1_000_000_000 + t["nanosec"]


@pytest.fixture(scope="module")
def listening(bridge, probe):
    for topic, kind in TOPICS.items():
        assert probe.listen(topic, kind) == 1, f"no publisher of {topic}"
    return probe


def drain(probe) -> None:
    for topic in TOPICS:
        probe.take(topic)


def test_topics_carry_the_sensor_readings(bridge, listening):
    probe = listening
    drain(probe)
    scans_before = int(bridge.suite["robot/laser"].count[0])
    reply = probe.step(100)  # 10 ticks
    assert reply["success"], reply["message"]
    suite, store = bridge.suite, bridge.sim.store
    clocks = [secs(m["clock"]) for m in probe.take("/clock", 10)]
    assert len(clocks) == 10
    assert clocks[-1] == pytest.approx(bridge.sim.clock, abs=1e-9)

    tf = probe.take("/tf", 10)
    assert len(tf) == 10  # one message per tick, every robot of every env in it
    frames = [(t["header"]["frame_id"], t["child_frame_id"]) for t in tf[-1]["transforms"]]
    assert frames == [("robot/odom", "robot/base_footprint"),
                      ("env_1/robot/odom", "env_1/robot/base_footprint")]
    for env, t in enumerate(tf[-1]["transforms"]):
        pos, quat = store[env].get_pose("robot")
        tr, rot = t["transform"]["translation"], t["transform"]["rotation"]
        np.testing.assert_allclose([tr["x"], tr["y"], tr["z"]], pos, atol=1e-9)
        np.testing.assert_allclose([rot["w"], rot["x"], rot["y"], rot["z"]], quat, atol=1e-9)

    odom = probe.take("/robot/odom", 10)[-1]
    reading = suite["robot/odom"]
    p = odom["pose"]["pose"]["position"]
    np.testing.assert_array_equal([p["x"], p["y"], p["z"]], reading.position[0])
    v = odom["twist"]["twist"]["linear"]
    np.testing.assert_array_equal([v["x"], v["y"], v["z"]], reading.linear_velocity[0])
    assert probe.take("/env_1/robot/odom", 10)[-1]["pose"]["pose"]["position"]["x"] == \
        reading.position[1, 0]

    lidar = suite["robot/laser"]
    scans = probe.take("/robot/scan", int(lidar.count[0]) - scans_before)
    assert len(scans) == lidar.count[0] - scans_before  # each sample once, at 10 Hz
    np.testing.assert_array_equal(np.array(scans[-1]["ranges"], dtype=np.float32),
                                  lidar.ranges[0])
    assert nanos(scans[-1]["header"]["stamp"]) == round(lidar.stamp[0] * 1e9)
    assert scans[-1]["angle_increment"] == pytest.approx(lidar.angle_increment, rel=1e-6)
    assert scans[-1]["header"]["frame_id"] == "robot/laser"
    # the planar lidar's cloud: one ring, range x the beam's direction, NaN where it missed
    cloud = probe.take("/robot/points", len(scans))[-1]
    beams = lidar.ranges.shape[1]
    assert (cloud["height"], cloud["width"], cloud["header"]["frame_id"]) == \
        (1, beams, "robot/laser")
    assert cloud["header"]["stamp"] == scans[-1]["header"]["stamp"]
    points = np.frombuffer(bytes(cloud["data"]), dtype="<f4").reshape(beams, 3)
    ranges = lidar.ranges[0].astype(np.float64)
    hit = np.isfinite(ranges)
    azimuth = lidar.angle_min + np.arange(beams) * lidar.angle_increment
    direction = np.stack([np.cos(azimuth), np.sin(azimuth), np.zeros(beams)], axis=1)
    assert hit.sum() > beams // 2
    np.testing.assert_allclose(points[hit], ranges[hit, None] * direction[hit], atol=1e-6)
    assert np.isnan(points[~hit]).all()

    imu = probe.take("/robot/imu", 10)[-1]
    acc = imu["linear_acceleration"]
    np.testing.assert_array_equal([acc["x"], acc["y"], acc["z"]],
                                  suite["robot/imu"].linear_acceleration[0])
    assert acc["z"] == pytest.approx(9.81, abs=0.1)  # at rest: gravity

    joints = probe.take("/robot/joint_states", 10)[-1]
    assert joints["name"] == ["wheel_left_joint", "wheel_right_joint"]
    data = store[0].data
    qpos = [data.joint(f"env_0/robot/{n}").qpos[0] for n in joints["name"]]
    np.testing.assert_allclose(joints["position"], qpos, atol=1e-12)


def test_step_advances_the_clock_by_n_dt(bridge, probe):
    dt_ns = round(bridge.sim.timestep * 1e9)
    before = nanos(probe.step(0)["clock"])
    for n in (1, 37, 250):
        reply = probe.step(n)
        assert reply["success"], reply["message"]
        assert nanos(reply["clock"]) - before == n * dt_ns
        before = nanos(reply["clock"])


def test_pause_stops_the_clock(bridge, listening):
    probe = listening
    trigger = "std_srvs/srv/Trigger"
    assert probe.call("/mujoco/unpause_simulation", trigger)["success"]
    time.sleep(0.3)
    running = [secs(m["clock"]) for m in probe.take("/clock")]
    assert probe.call("/mujoco/pause_simulation", trigger)["success"]
    stopped_at = bridge.sim.clock
    time.sleep(0.3)
    assert len(running) >= 5 and running[-1] > running[0]  # 50 Hz while running
    # a busy probe may still be taking clocks published before the pause: none after it
    late = [secs(m["clock"]) for m in probe.take("/clock")]
    time.sleep(0.3)
    late += [secs(m["clock"]) for m in probe.take("/clock")]
    assert [t for t in late if t > stopped_at] == []
    assert bridge.sim.clock == stopped_at


def test_cmd_vel_moves_the_commanded_distance(bridge, listening):
    probe = listening
    drain(probe)
    twist = "geometry_msgs/msg/Twist"
    assert probe.ask(do="publish", topic="/env_1/robot/cmd_vel", type=twist,
                     msg={"linear": {"x": 0.1}, "angular": {"z": 0.0}}) == 1
    time.sleep(0.3)  # the command reaches the simulator before the Step request
    probe.step(250)  # 0.5 s to reach the speed
    p0 = probe.take("/env_1/robot/odom", 25)[-1]
    probe.step(500)  # 1 s at 0.1 m/s
    p1 = probe.take("/env_1/robot/odom", 50)[-1]
    probe.ask(do="publish", topic="/env_1/robot/cmd_vel", type=twist, msg={"linear": {"x": 0.0}})
    time.sleep(0.3)
    a, b = p0["pose"]["pose"]["position"], p1["pose"]["pose"]["position"]
    assert math.hypot(b["x"] - a["x"], b["y"] - a["y"]) == pytest.approx(0.1, abs=0.005)
    assert secs(p1["header"]["stamp"]) - secs(p0["header"]["stamp"]) == pytest.approx(1.0)
    pos = bridge.suite["robot/odom"].position[1]
    assert (b["x"], b["y"]) == (pos[0], pos[1])  # the sensors layer's odometry


def test_spawn_and_delete_a_box_through_services(bridge, listening):
    probe = listening
    store = bridge.sim.store
    pos, quat = store[0].get_pose("robot")
    yaw = 2 * math.atan2(quat[3], quat[0])
    probe.step(50)
    probe.take("/robot/scan", 1)
    probe.step(50)  # 0.1 s: one 10 Hz scan
    before = probe.take("/robot/scan", 1)[-1]["ranges"][0]
    ahead = 0.5  # the box's centre, m ahead of the robot; 0.2 m wide
    box = {"name": "probe_box", "x": pos[0] + ahead * math.cos(yaw),
           "y": pos[1] + ahead * math.sin(yaw), "z": 0.2, "yaw": yaw,
           "scale": {"x": 0.2, "y": 0.2, "z": 0.4}, "movable": False}
    reply = probe.call("/mujoco/spawn_prims", "arena_gym_interfaces/srv/SpawnPrims",
                       env_id=0, prims=[box])
    assert reply["success"], reply["message"]
    assert reply["names"] == ["probe_box"]
    probe.step(50)
    with_box = probe.take("/robot/scan", 1)[-1]["ranges"][0]
    mount = next(m for m in bridge_meta_static(bridge) if m["child"] == "laser")
    expected = ahead - 0.1 - mount["xyz"][0]
    assert with_box == pytest.approx(expected, abs=0.04)  # lidar noise: 0.01 m sigma
    reply = probe.call("/mujoco/delete_prims", "arena_gym_interfaces/srv/DeletePrims",
                       env_id=0, names=["probe_box"])
    assert reply["success"] and reply["deleted"] == ["probe_box"], reply["message"]
    probe.step(50)
    after = probe.take("/robot/scan", 1)[-1]["ranges"][0]
    assert "probe_box" not in list(store[0].entities)
    assert after == pytest.approx(before, abs=0.04)  # inf when nothing is in range
    assert after > with_box + 0.1


def bridge_meta_static(bridge) -> list[dict]:
    from arena_gym.ros.frames import mount_transforms

    return mount_transforms(bridge.sim.store, bridge.robot)


@pytest.mark.parametrize(("service", "kind", "request_", "message"), [
    ("spawn_prims", "SpawnPrims", {"env_id": 7, "prims": [{"name": "b"}]},
     "spawn_prims: unknown env_id 7: expected 0 <= env_id < 2"),
    ("spawn_prims", "SpawnPrims",
     {"env_id": 0, "prims": [{"name": "b", "scale": {"x": -1.0, "y": 1.0, "z": 1.0}}]},
     "spawn_prims: Prim 'b' scale: expected sizes > 0, got (-1.0, 1.0, 1.0)"),
    ("delete_prims", "DeletePrims", {"env_id": 0, "names": ["no_such_box"]},
     "delete_prims: unknown entity in env 0 'no_such_box'"),
    ("spawn_urdf", "SpawnUrdf", {"env_id": 1, "name": "r2", "urdf_path": "/no/such.urdf"},
     "spawn_urdf: URDF file not found: expected a readable file, got '/no/such.urdf'"),
    ("reset_world", "ResetWorld", {"env_id": -1},
     "reset_world: unknown env_id -1: expected 0 <= env_id < 2"),
])
def test_bad_requests_fail_and_the_bridge_keeps_serving(bridge, probe, service, kind,
                                                        request_, message):
    names = list(list(bridge.sim.store[0].entities)), list(list(bridge.sim.store[1].entities))
    reply = probe.call(f"/mujoco/{service}", f"arena_gym_interfaces/srv/{kind}", **request_)
    assert reply["success"] is False
    assert reply["message"] == message
    now = (list(bridge.sim.store[0].entities), list(bridge.sim.store[1].entities))
    assert now == names  # nothing changed
    assert probe.step(10)["success"]
