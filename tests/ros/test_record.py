"""`arena-gym record`: an MCAP file with ROS 2 encoding that reads back with the mcap reader:
the bridge's topics, their types and counts, and the sensors layer's values."""

from __future__ import annotations

import numpy as np
import pytest

from arena_gym.cli import main
from arena_gym.ros.record import Recorder
from arena_gym.ros.run import build_envs
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator
from tests.ros.conftest import camera_robot_urdf

TYPES = {
    "/clock": "rosgraph_msgs/msg/Clock",
    "/tf": "tf2_msgs/msg/TFMessage",
    "/tf_static": "tf2_msgs/msg/TFMessage",
    "/robot/odom": "nav_msgs/msg/Odometry",
    "/robot/scan": "sensor_msgs/msg/LaserScan",
    "/robot/points": "sensor_msgs/msg/PointCloud2",
    "/robot/imu": "sensor_msgs/msg/Imu",
    "/robot/joint_states": "sensor_msgs/msg/JointState",
    "/env_1/robot/odom": "nav_msgs/msg/Odometry",
    "/env_1/robot/scan": "sensor_msgs/msg/LaserScan",
    "/env_1/robot/points": "sensor_msgs/msg/PointCloud2",
    "/env_1/robot/imu": "sensor_msgs/msg/Imu",
    "/env_1/robot/joint_states": "sensor_msgs/msg/JointState",
}
W, H = 32, 24  # the spawned robot's camera
CAMERA = {"/env_1/cam2/image_raw": "sensor_msgs/msg/Image",
          "/env_1/cam2/depth/image_raw": "sensor_msgs/msg/Image",
          "/env_1/cam2/depth/points": "sensor_msgs/msg/PointCloud2",
          "/env_1/cam2/camera_info": "sensor_msgs/msg/CameraInfo"}


def read(path):
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    with open(path, "rb") as fh:
        reader = make_reader(fh, decoder_factories=[DecoderFactory()])
        return [(channel.topic, schema.name, msg)
                for schema, channel, _, msg in reader.iter_decoded_messages()]


def test_a_recording_reads_back_with_topics_types_counts_and_values(tmp_path):
    store, name = build_envs("default", "builtin", 2, seed=3)
    sim = Simulator(store, nthread=1)
    suite = SensorSuite(sim, seed=3)
    recorder = Recorder(sim, suite, name, tmp_path / "run.mcap")
    for env in range(2):
        sim.set_cmd_vel(env, name, 0.2, 0.5)
    sim.step(500)  # 1 s: 50 ticks
    recorder.close()
    messages = read(tmp_path / "run.mcap")
    assert {topic: kind for topic, kind, _ in messages} == TYPES
    counts = {t: sum(1 for topic, _, _ in messages if topic == t) for t in TYPES}
    # 50 ticks; the 10 Hz lidar samples at 0.02 s and then every 0.1 s up to 1.0 s
    assert counts == {t: 1 if t == "/tf_static" else 11 if t.endswith(("scan", "points"))
                      else 50
                      for t in TYPES}
    last = {topic: msg for topic, _, msg in messages}
    odom = suite["robot/odom"]
    p = last["/env_1/robot/odom"].pose.pose.position
    np.testing.assert_array_equal([p.x, p.y, p.z], odom.position[1])
    assert np.hypot(*(odom.position[1, :2] - store[1].get_pose(name)[0][:2])) < 0.01
    np.testing.assert_array_equal(np.array(last["/robot/scan"].ranges, dtype=np.float32),
                                  suite["robot/laser"].ranges[0])
    cloud = last["/robot/points"]  # the same points the suite's reading gives (NaN: misses)
    np.testing.assert_array_equal(np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(-1, 3),
                                  suite["robot/laser"].points()[0])
    clock = last["/clock"].clock
    assert clock.sec + clock.nanosec * 1e-9 == pytest.approx(1.0, abs=1e-9)
    assert [t.child_frame_id for t in last["/tf"].transforms] == [
        "robot/base_footprint", "env_1/robot/base_footprint"]
    suite.close()
    sim.close()


def test_the_record_command_reports_its_counts(tmp_path, capsys):
    out = tmp_path / "cli.mcap"
    assert main(["record", "--seconds", "0.2", "--world", "empty", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == f"wrote 57 messages to {out}:"
    # 10 ticks x (tf, odom, imu, joint_states, clock), 3 lidar samples (0.02, 0.1, 0.2 s) x
    # (scan, points), tf_static
    assert len(read(out)) == 57


def test_the_record_command_keeps_an_existing_file_unless_told(tmp_path, capsys):
    out = tmp_path / "kept.mcap"
    out.write_bytes(b"an earlier recording")
    argv = ["record", "--seconds", "0.02", "--world", "empty", "--out", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: --out: {str(out)!r} exists; expected a new file (or --overwrite to "
        "replace it)\n")
    assert out.read_bytes() == b"an earlier recording"
    assert main([*argv, "--overwrite"]) == 0
    # replaced: tf_static, then one tick's tf, odom, imu, joint_states, scan, points, clock
    assert len(read(out)) == 8


def test_a_recording_follows_robots_spawned_and_deleted_later_with_camera_images(tmp_path):
    store, name = build_envs("empty", "builtin", 2, seed=0)
    sim = Simulator(store, nthread=1)
    suite = SensorSuite(sim, seed=0)
    recorder = Recorder(sim, suite, name, tmp_path / "run.mcap")
    sim.step(100)  # 0.2 s: 10 ticks of the first robot alone
    store[1].spawn_urdf("cam2", camera_robot_urdf(tmp_path, W, H), pose=(1.5, 0.5, 0.3))
    sim.step(200)  # to 0.6 s: it joins with the tick that compiles it
    reading = suite["cam2/cam@ros"]
    rgb = reading.rgb[1].copy()
    store[1].delete(["cam2"])
    sim.step(100)  # to 0.8 s: it left
    recorder.close()
    messages = read(tmp_path / "run.mcap")
    kinds = {topic: kind for topic, kind, _ in messages}
    assert {t: kinds.get(t) for t in CAMERA} == CAMERA
    counts = {t: sum(1 for topic, _, _ in messages if topic == t) for t in CAMERA}
    # the 10 Hz camera renders in env 1 only, from its first sample (the tick after it
    # joined, 0.24 s) and then at 0.3, 0.4, 0.5 and 0.6 s
    assert counts == dict.fromkeys(CAMERA, 5) and reading.count.tolist() == [0, 5]
    images = [msg for topic, _, msg in messages if topic == "/env_1/cam2/image_raw"]
    np.testing.assert_array_equal(np.frombuffer(bytes(images[-1].data), np.uint8)
                                  .reshape(H, W, 3), rgb)
    assert images[-1].header.frame_id == "env_1/cam2/cam_optical"
    odom = [msg for topic, _, msg in messages if topic == "/env_1/cam2/odom"]
    assert len(odom) == 19  # each tick from 0.24 s (its first reading) to 0.6 s
    p = odom[-1].pose.pose.position
    assert (p.x, p.y) == pytest.approx((1.5, 0.5), abs=0.01)
    tfs = [msg for topic, _, msg in messages if topic == "/tf"]
    children = [[t.child_frame_id for t in tf.transforms] for tf in tfs]
    pair = ["robot/base_footprint", "env_1/robot/base_footprint"]
    assert children[:11] == [pair] * 11 and children[-10:] == [pair] * 10
    assert children[11] == [*pair, "env_1/cam2/base_footprint"]  # 0.24 s
    statics = [{t.child_frame_id for t in msg.transforms}
               for topic, _, msg in messages if topic == "/tf_static"]
    assert len(statics) == 3  # at the start, when it joined, when it left
    assert "env_1/cam2/cam_optical" in statics[1] and statics[0] == statics[2]
    suite.close()
    sim.close()
