"""A free-running bridge paused by PauseSimulation keeps publishing /tf and joint states at
the frozen clock (late subscribers still see the robot), and no /clock; unpaused, the clock
moves again."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tests.ros.conftest import Probe, served

TOPICS = {"/clock": "rosgraph_msgs/msg/Clock", "/tf": "tf2_msgs/msg/TFMessage",
          "/robot/joint_states": "sensor_msgs/msg/JointState"}
TRIGGER = "std_srvs/srv/Trigger"


def nanos(t: dict) -> int:
    return t["sec"] * 1_000_000_000 + t["nanosec"]


@pytest.fixture(scope="module")
def free_bridge(ros_env):
    """A free-running bridge (real-time factor 1) over one empty env."""
    from arena_gym.ros.run import build_envs

    with served(*build_envs("empty", "builtin", 1, seed=0), ros_env, lockstep=False) as b:
        yield b


@pytest.fixture(scope="module")
def probe(free_bridge, ros_env):
    p = Probe(ros_env)
    for topic, kind in TOPICS.items():
        assert p.listen(topic, kind) == 1, f"no publisher of {topic}"
    yield p
    p.close()


def test_paused_the_transforms_and_joint_states_go_on_at_the_frozen_clock(free_bridge, probe):
    assert probe.call("/mujoco/pause_simulation", TRIGGER)["success"]
    frozen = round(free_bridge.sim.clock * 1e9)
    time.sleep(0.2)  # the last running frames arrive
    for topic in TOPICS:
        probe.take(topic)
    time.sleep(0.5)  # 25 paused frames at 50 Hz of wall time
    assert probe.take("/clock") == []
    tf = probe.take("/tf")
    joints = probe.take("/robot/joint_states")
    assert len(tf) >= 5 and len(joints) >= 5  # 25 expected; fewer on a busy machine
    assert {nanos(m["transforms"][0]["header"]["stamp"]) for m in tf} == {frozen}
    assert {nanos(m["header"]["stamp"]) for m in joints} == {frozen}
    pos, _ = free_bridge.sim.store[0].get_pose("robot")
    t = tf[-1]["transforms"][0]["transform"]["translation"]
    np.testing.assert_allclose([t["x"], t["y"], t["z"]], pos, atol=1e-9)
    data = free_bridge.sim.store[0].data
    qpos = [data.joint(f"env_0/robot/{n}").qpos[0] for n in joints[-1]["name"]]
    np.testing.assert_allclose(joints[-1]["position"], qpos, atol=1e-12)
    assert round(free_bridge.sim.clock * 1e9) == frozen


def test_unpaused_the_clock_moves_again(free_bridge, probe):
    frozen = round(free_bridge.sim.clock * 1e9)
    assert probe.call("/mujoco/unpause_simulation", TRIGGER)["success"]
    time.sleep(0.3)
    clocks = [nanos(m["clock"]) for m in probe.take("/clock", 5)]
    # a busy probe may still be taking clocks published before the pause
    moving = [c for c in clocks if c > frozen]
    assert len(moving) >= 5 and moving == sorted(moving)
    assert len(set(moving)) == len(moving)


def test_step_while_paused_publishes_each_tick_it_steps(free_bridge, probe):
    assert probe.call("/mujoco/pause_simulation", TRIGGER)["success"]
    time.sleep(0.2)
    probe.take("/clock")
    frozen = round(free_bridge.sim.clock * 1e9)
    dt = round(free_bridge.sim.timestep * 1e9)
    reply = probe.call("/mujoco/step", "arena_gym_interfaces/srv/Step", steps=50)
    assert reply["success"], reply["message"]
    assert nanos(reply["clock"]) == frozen + 50 * dt  # on the loop, paused or not
    clocks = [nanos(m["clock"]) for m in probe.take("/clock", 5)]
    assert clocks == [frozen + k * 10 * dt for k in range(1, 6)]  # none dropped
    assert probe.call("/mujoco/unpause_simulation", TRIGGER)["success"]
