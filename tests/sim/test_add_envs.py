"""Envs made while a simulator runs (an Arena session's first contact): they start empty at
the simulator's clock, step from the next tick on, take robots that drive and read, and the
envs already there go on as they were (their state, staged commands and noise draws)."""

from __future__ import annotations

import pytest

from arena_gym.scene.store import SceneStore
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.runner import Runner
from arena_gym.sim.simulator import Simulator
from arena_gym.worlds.default import builtin_robot_urdf


def test_envs_added_while_running_step_read_and_drive_beside_the_first():
    store = SceneStore(1)
    store[0].spawn_urdf("robot", builtin_robot_urdf(), pose=(0.0, 0.0, 0.0))
    sim = Simulator(store, nthread=1)
    suite = SensorSuite(sim, seed=7)
    runner = Runner(sim)
    snapshots = runner.snapshots
    sim.set_cmd_vel(0, "robot", 0.2, 0.0)
    sim.step(50)
    x_before = store[0].get_pose("robot")[0][0]
    rng0 = suite.rngs[0]

    assert sim.add_envs(3) == [1, 2, 3]
    suite.add_envs()
    assert store.num_envs == suite.num_envs == 4
    assert [store[e].data.time for e in (1, 2, 3)] == pytest.approx([sim.clock] * 3)
    assert suite.rngs[0] is rng0  # env 0 draws on from where it was
    store[3].spawn_urdf("robot", builtin_robot_urdf(), pose=(1.0, 0.0, 0.0))
    sim.set_cmd_vel(3, "robot", 0.2, 0.0)
    for _ in range(50):
        sim.step(10)
    odom = suite["robot/odom"]
    assert odom.valid.tolist() == [True, False, False, True]  # the envs holding it
    # both drive at 0.2 m/s: 1 s more for env 0 (its twist kept), 1 s for env 3
    assert store[0].get_pose("robot")[0][0] - x_before == pytest.approx(0.2, abs=0.03)
    assert store[3].get_pose("robot")[0][0] - 1.0 == pytest.approx(0.2, abs=0.03)
    with snapshots.take() as snap:
        assert [snap.time(e) for e in range(4)] == pytest.approx([sim.clock] * 4)
    assert suite["robot/laser"].ranges.shape[0] == 4  # a row for every env
    runner.close()
    suite.close()
    sim.close()
