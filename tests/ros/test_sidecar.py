"""The bridge as a sidecar of ArenaVectorEnv: the scan a probe receives is the env's own
scan reading, the one its observations come from; services are refused."""

from __future__ import annotations

import numpy as np

from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.ros.sidecar import start_sidecar
from tests.ros.conftest import Probe


def nanos(t: dict) -> int:
    return t["sec"] * 1_000_000_000 + t["nanosec"]


def test_the_sidecar_publishes_the_envs_own_scan(ros_env):
    env = ArenaVectorEnv(2)
    bridge = start_sidecar(env, venv=ros_env)
    probe = Probe(ros_env)
    try:
        assert probe.listen("/env_1/robot/scan", "sensor_msgs/msg/LaserScan") == 1
        assert probe.listen("/robot/odom", "nav_msgs/msg/Odometry") == 1
        env.reset(seed=0)
        clocks = []
        for _ in range(3):
            env.step(np.zeros((2, 2)))
            clocks.append(round(env.core.sim.clock * 1e9))
        bridge.flush()  # the node has published every frame: the last ones arrive

        def through_last(got: list[dict]) -> bool:
            return any(nanos(m["header"]["stamp"]) == clocks[-1] for m in got)

        scans = probe.take_until("/env_1/robot/scan", through_last, "the last step's scan")
        odoms = probe.take_until("/robot/odom", through_last, "the last step's odometry")
        for messages in (scans, odoms):  # after the reset's sample(s): one per control step
            assert [nanos(m["header"]["stamp"]) for m in messages[-3:]] == clocks
        np.testing.assert_array_equal(np.array(scans[-1]["ranges"], dtype=np.float32),
                                      env.sensor_suite["scan"].ranges[1])
        reply = probe.call("/mujoco/step", "arena_gym_interfaces/srv/Step", steps=10)
        assert reply["success"] is False
        assert reply["message"] == ("step: refused, this bridge is a sidecar of an env that "
                                    "drives the simulator")
    finally:
        probe.close()
        bridge.close()
        env.close()
