"""A free-running bridge paused by PauseSimulation keeps publishing /tf and joint states at
the frozen clock (late subscribers still see the robot), and no /clock; unpaused, the clock
moves again."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ros.conftest import Probe, served

TOPICS = {"/clock": "rosgraph_msgs/msg/Clock", "/tf": "tf2_msgs/msg/TFMessage",
          "/robot/joint_states": "sensor_msgs/msg/JointState"}
TRIGGER = "std_srvs/srv/Trigger"


def nanos(t: dict) -> int:
    return t["sec"] * 1_000_000_000 + t["nanosec"]


def after_pause(probe, topic: str, stamp, frozen: int, count: int = 5) -> list[dict]:
    """`count` or more messages of `topic` that came after its first one stamped `frozen`
    (the last running tick's, or the first paused frame): a topic comes in order, so every
    later one was published paused."""
    def first(got: list[dict]) -> int | None:
        return next((i for i, m in enumerate(got) if stamp(m) == frozen), None)

    got = probe.take_until(topic, lambda got: first(got) is not None and
                           len(got) - first(got) - 1 >= count, f"{count} frames after the pause")
    return got[first(got) + 1:]


def clocks_past(probe, frozen: int, count: int = 5) -> list[int]:
    """The /clock stamps past `frozen`, once `count` of them came (those at or before it
    were published before the pause)."""
    got = probe.take_until("/clock", lambda got: sum(nanos(m["clock"]) > frozen for m in got)
                           >= count, f"{count} clocks past {frozen} ns")
    return [c for c in (nanos(m["clock"]) for m in got) if c > frozen]


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
    tf = after_pause(probe, "/tf", lambda m: nanos(m["transforms"][0]["header"]["stamp"]),
                     frozen)
    joints = after_pause(probe, "/robot/joint_states", lambda m: nanos(m["header"]["stamp"]),
                         frozen)
    assert [c for m in probe.take("/clock") if (c := nanos(m["clock"])) > frozen] == []
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
    moving = clocks_past(probe, frozen)
    assert len(moving) >= 5 and moving == sorted(moving)
    assert len(set(moving)) == len(moving)


def test_step_while_paused_publishes_each_tick_it_steps(free_bridge, probe):
    assert probe.call("/mujoco/pause_simulation", TRIGGER)["success"]
    frozen = round(free_bridge.sim.clock * 1e9)
    dt = round(free_bridge.sim.timestep * 1e9)
    reply = probe.call("/mujoco/step", "arena_gym_interfaces/srv/Step", steps=50)
    assert reply["success"], reply["message"]
    assert nanos(reply["clock"]) == frozen + 50 * dt  # on the loop, paused or not
    assert clocks_past(probe, frozen) == [frozen + k * 10 * dt for k in range(1, 6)]  # all
    assert probe.call("/mujoco/unpause_simulation", TRIGGER)["success"]
