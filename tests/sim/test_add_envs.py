"""Envs made while a simulator runs (an Arena session's first contact): they start empty at
the simulator's clock, step from the next tick on, take robots that drive and read, and the
envs already there go on as they were (their state, staged commands and noise draws)."""

from __future__ import annotations

import numpy as np
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


MODEL = """<mujoco model="swing"><option timestep="0.005"/><worldbody>
  <body name="arm" pos="0 0 0.5"><joint name="swing" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/></body></worldbody>
  <sensor><user name="clock" dim="1" needstage="pos" datatype="real"/></sensor></mujoco>"""


def test_envs_added_to_a_loaded_models_world_start_empty_and_call_its_user_sensor_once():
    """A store built on a loaded model's empty world (SceneStore(world=...)) makes its new
    envs from that world (its options, no ground or light); a user sensor function is
    called once per env and step after the suite follows the new envs, not twice."""
    import mujoco

    from arena_gym.scene.models import model_world
    from arena_gym.sensors import MujocoSpec

    store = SceneStore(1, timestep=0.005, world=model_world(mujoco.MjSpec.from_string(MODEL)))
    store[0].spawn_mjcf("m", MODEL)
    sim = Simulator(store, nthread=1)
    calls: list[int] = []

    def clock(name: str, model: mujoco.MjModel, data: mujoco.MjData) -> list[float]:
        calls.append(id(data))
        return [data.time]

    suite = SensorSuite(sim, [MujocoSpec("m", user=clock)])
    sim.step(3)
    assert sim.add_envs(1) == [1]
    suite.add_envs()
    empty = store[1].compiled
    assert (empty.ngeom, empty.nlight, empty.opt.timestep) == (0, 0, 0.005)
    store[1].spawn_mjcf("m", MODEL)
    sim.step(10)  # a tick: the suite binds the new env's sensor
    calls.clear()
    sim.step(1)
    assert sorted(calls) == sorted([id(store[0].data), id(store[1].data)])  # once each
    suite.sample_live()
    # at the position stage of the last step: its time before it (14 steps of 0.005 s)
    assert suite["m/mujoco"]["clock"][:, 0].tolist() == pytest.approx([0.065, 0.065])
    suite.close()
    sim.close()


def test_a_suite_that_followed_new_envs_reads_them_as_the_first_in_its_usual_tick(monkeypatch):
    """The suite's plan (its steady tick of one lidar and the collision rule) is made anew
    for the grown count: a robot in an added env, posed as env 0's, reads env 0's scan, and
    the ticks after go the usual way over both envs."""
    from arena_gym.scene.requests import Prim
    from arena_gym.sensors import CollisionSpec, LidarSpec, steady

    taken: list[list[int]] = []
    run = steady.SteadyTick.run

    def counted(self, frames, clock):
        went = run(self, frames, clock)
        if went:
            taken.append(self.envs.tolist())
        return went

    monkeypatch.setattr(steady.SteadyTick, "run", counted)
    wall = Prim("wall", pose=(2.0, 0.0, 0.5, 0.0), scale=(0.2, 2.0, 1.0))
    store = SceneStore(1)
    store[0].spawn_urdf("robot", builtin_robot_urdf(), pose=(0.0, 0.0, 0.0))
    store[0].spawn_prims([wall])
    sim = Simulator(store, nthread=1)
    suite = SensorSuite(sim, [LidarSpec("robot", key="scan"), CollisionSpec("robot")])
    for _ in range(10):
        sim.step(10)
    assert taken and all(envs == [0] for envs in taken)  # ticks when the lidar is due
    sim.add_envs(1)
    suite.add_envs()
    store[1].spawn_urdf("robot", builtin_robot_urdf(), pose=(0.0, 0.0, 0.0))
    store[1].spawn_prims([wall])
    taken.clear()
    for _ in range(10):
        sim.step(10)
    assert taken and all(envs == [0, 1] for envs in taken)  # planned anew for both envs
    scan = suite["scan"]
    assert scan.ranges.shape[0] == 2 and scan.fresh.all()
    np.testing.assert_array_equal(scan.ranges[1], scan.ranges[0])
    assert np.nanmin(scan.ranges[1]) == pytest.approx(1.9, abs=0.15)  # the wall ahead
    suite.close()
    sim.close()
