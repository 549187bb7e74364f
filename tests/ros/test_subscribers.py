"""The node encodes and publishes only the topics that have subscribers: a subscriber that
comes after steps nobody listened to receives from its next Step on, one that leaves and
comes back receives again, and the messages of the wanted topics are byte for byte those of
the full frame (the MCAP recorder's)."""

from __future__ import annotations

import numpy as np

from tests.ros.conftest import Probe

SCAN = "/env_1/robot/scan"


def nanos(t: dict) -> int:
    return t["sec"] * 1_000_000_000 + t["nanosec"]


def test_a_late_subscriber_receives_from_its_next_step(bridge, ros_env):
    lidar = bridge.suite["robot/laser"]
    probe = Probe(ros_env)  # a process of its own: nothing of this module subscribed yet
    try:
        assert probe.step(50)["success"]  # 5 ticks with nobody on any topic
        for attempt in range(2):  # the first subscription, then one that left and came back
            assert probe.listen(SCAN, "sensor_msgs/msg/LaserScan") == 1
            before = int(lidar.count[1])
            assert probe.step(100)["success"]  # 0.2 s: two samples at 10 Hz
            sampled = int(lidar.count[1]) - before
            scans = probe.take(SCAN, sampled)
            assert sampled == 2 and len(scans) == sampled, attempt
            assert nanos(scans[-1]["header"]["stamp"]) == round(lidar.stamp[1] * 1e9)
            np.testing.assert_array_equal(np.array(scans[-1]["ranges"], dtype=np.float32),
                                          lidar.ranges[1])
            probe.ask(do="unlisten", topic=SCAN)
            assert probe.step(50)["success"]  # nobody listening again
    finally:
        probe.close()


def test_the_wanted_topics_are_the_full_frames_messages():
    from arena_gym.ros.messages import frame_messages
    from arena_gym.ros.run import build_envs
    from arena_gym.ros.stream import MessageStream
    from arena_gym.sensors.suite import SensorSuite
    from arena_gym.sim.simulator import Simulator

    sim = Simulator(build_envs("default", "builtin", 3, seed=0)[0], nthread=1)
    suite = SensorSuite(sim, seed=0)
    try:
        stream = MessageStream(sim, suite, "robot")
        sim.set_cmd_vel(2, "robot", 0.3, 0.5)
        for _ in range(10):  # ticks until a tick that sampled the lidar (10 Hz)
            sim.step(sim.tick_steps)
            if suite["robot/laser"].fresh[2]:
                break
        full = [m for m in stream.frame() if m[0] != "/tf_static"]
        groups = [(m.meta, stream.slots[m.robot]) for m in stream.roster.members.values()]
        assert {m[0] for m in full} >= {"/tf", "/clock", "/env_2/robot/scan",
                                        "/env_1/robot/odom", "/robot/joint_states"}
        for wanted in ({"/tf"}, {"/env_2/robot/scan", "/env_1/robot/odom", "/clock"},
                       {"/robot/imu", "/env_2/robot/points", "/robot/joint_states"}, set()):
            assert list(frame_messages(groups, wanted)) == \
                [m for m in full if m[0] in wanted]
    finally:
        suite.close()
        sim.close()
