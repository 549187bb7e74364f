"""The suite: default readings, rebinding after recompiles, resets, errors that name what
was expected, and sensing that leaves the physics untouched."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.scene import Prim, SceneStore
from arena_gym.sensors import (
    CameraSpec,
    ContactSpec,
    ImuSpec,
    LidarSpec,
    OdometrySpec,
    SensorError,
    SensorSuite,
)
from arena_gym.sim import Simulator
from arena_gym.worlds.default import build_default_world
from tests.conftest import spawn
from tests.sensors.worlds import imu_block, lidar_block, probe_urdf, room_store


def test_default_readings_of_a_real_robot(assets):
    store = SceneStore(2)
    for env in range(2):
        spawn(store, env, assets, "burger")
    sim = Simulator(store)
    suite = SensorSuite(sim)
    assert list(suite.channels) == ["burger/imu", "burger/lds_lfcd_sensor", "burger/odom",
                                    "burger/collision"]
    assert not any(r.valid.any() for r in suite.readings.values())
    sim.step(10)
    assert all(r.valid.all() for r in suite.readings.values())
    assert suite["burger/lds_lfcd_sensor"].ranges.shape == (2, 360)


def test_errors_name_what_was_expected():
    store = room_store(1, lidar_block(name="front_laser"), imu_block())
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[])
    with pytest.raises(SensorError, match=re.escape(
            "LidarSpec: no env holds a robot named 'robt'; expected one of ['probe']")):
        suite.add(LidarSpec("robt"))
    with pytest.raises(SensorError, match=re.escape(
            "env 0: robot 'probe' has no lidar named 'front_lasr'; did you mean 'front_laser'? "
            "(it has lidar 'front_laser', imu 'imu')")):
        suite.add(LidarSpec("probe", "front_lasr"))
    with pytest.raises(SensorError, match=re.escape(
            "env 0: robot 'probe' has no camera; it has lidar 'front_laser', imu 'imu'")):
        suite.add(CameraSpec("probe"))
    reading = suite.add(ImuSpec("probe"))
    assert suite.add(ImuSpec("probe")) is reading
    with pytest.raises(SensorError, match=re.escape(
            "reading 'probe/imu': held by ImuSpec(robot='probe'")):
        suite.add(ImuSpec("probe", rate=5.0))
    with pytest.raises(SensorError, match=re.escape(
            "unknown reading 'probe/imo'; did you mean 'probe/imu'?")):
        suite["probe/imo"]
    with pytest.raises(SensorError, match=re.escape(
            "contacts of link 'wheel' of robot 'probe': env 0 has no link 'env_0/probe/wheel'; "
            "expected one of ['base_footprint', 'base_link', 'mast', 'scan_link']")):
        suite.add(ContactSpec("probe", link="wheel"))
    with pytest.raises(SensorError, match=re.escape(
            "LidarSpec.dropout: expected a probability in [0, 1], got 2")):
        LidarSpec("probe", dropout=2)
    with pytest.raises(SensorError, match=re.escape(
            "CameraSpec.outputs: expected some of ['rgb', 'depth', 'points', 'segmentation'], "
            "got ('rgbd',)")):
        CameraSpec("probe", outputs=("rgbd",))
    with pytest.raises(SensorError, match=re.escape(
            "ContactSpec: expected a link or a declared contact sensor, "
            "got link=None and sensor=None")):
        ContactSpec("probe")


def test_readings_follow_spawns_deletions_and_recompiles():
    store = room_store(2, lidar_block(samples=360))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[LidarSpec("probe"), OdometrySpec("probe")])
    sim.step(10)
    lidar = suite["probe/lidar"]
    arrays = lidar.ranges
    ahead = lidar.ranges[1, 180]
    store[1].spawn_prims([Prim("box", pose=(1.0, 0.0, 0.25, 0.0), scale=(0.2, 0.2, 0.5))])
    sim.step(10)
    assert lidar.ranges is arrays  # preallocated, written in place
    mount_x = store[1].robot("probe").sensor_mounts[0].decl.pose[0]
    assert lidar.ranges[1, 180] == pytest.approx(0.9 - mount_x - store[1].get_pose("probe")[0][0],
                                                 abs=1e-3)
    assert lidar.ranges[0, 180] == pytest.approx(ahead, abs=1e-4)  # env 0: no box
    store[1].delete(["probe"])
    sim.step(10)
    assert list(lidar.valid) == [True, False] and list(suite["probe/odom"].valid) == [True, False]
    store[1].spawn_urdf("probe", probe_urdf(lidar_block(samples=360)), pose=(0.5, 0.0, 0.0))
    sim.step(10)
    assert lidar.valid.all()
    assert suite["probe/odom"].position[1, 0] == pytest.approx(0.5, abs=1e-3)
    store[1].delete(["probe"])
    store[1].spawn_urdf("probe", probe_urdf(lidar_block(samples=90)))
    with pytest.raises(SensorError, match=re.escape(
            "lidar of robot 'probe': env 1 has ('beams', 90,")):
        sim.step(10)


def test_reset_samples_at_once_and_forgets_queued_samples():
    store = room_store(2, lidar_block(samples=8))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[OdometrySpec("probe", key="late", delay=0.1)])
    late = suite["late"]
    sim.step(100)
    before = late.stamp.copy()
    assert before == pytest.approx([0.1, 0.1])
    sim.state(1, "qpos")[0] = 1.5  # an episode reset moves the robot of env 1
    suite.reset([1])
    assert late.position[1, 0] == pytest.approx(1.5) and late.stamp[1] == pytest.approx(0.2)
    assert list(late.fresh) == [False, True]
    sim.step(10)  # env 1's queued pre-reset samples are gone: it keeps showing the reset
    assert late.position[1, 0] == pytest.approx(1.5, abs=1e-3)
    assert late.stamp[1] == pytest.approx(0.2)
    assert late.stamp[0] == pytest.approx(0.12)
    with pytest.raises(SensorError, match=re.escape("reset: expected env ids in [0, 2), got [2]")):
        suite.reset([2])


def test_sensing_leaves_the_physics_bit_identical():
    def run(with_sensors):
        store = SceneStore(3)
        for env in range(3):
            build_default_world(store, env, np.random.default_rng(env), num_obstacles=4)
        sim = Simulator(store)
        if with_sensors:
            suite = SensorSuite(sim, seed=0)
            suite.add(ContactSpec("robot", link="base_link"))
        for env in range(3):
            sim.set_cmd_vel(env, "robot", 0.2, 0.5)
        sim.step(300)
        return [store[env].data.qpos.copy() for env in range(3)]

    for a, b in zip(run(False), run(True), strict=True):
        assert a.tobytes() == b.tobytes()


def test_subscribers_and_close():
    store = room_store(1, lidar_block(samples=8, rate=10.0))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[LidarSpec("probe")])
    calls = []
    suite.subscribe("probe/lidar", lambda reading, envs: calls.append((reading.key, envs.tolist())))
    sim.step(200)
    assert calls == [("probe/lidar", [0])] * 5
    suite.close()
    sim.step(200)
    assert len(calls) == 5


def test_without_the_hook_the_caller_samples():
    store = room_store(1, lidar_block(samples=8))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[OdometrySpec("probe")], hook=False)
    sim.step(30)
    assert suite["probe/odom"].count[0] == 0
    suite.update()
    assert suite["probe/odom"].count[0] == 1 and suite["probe/odom"].stamp[0] == pytest.approx(0.06)
    suite.close()  # nothing to unhook
