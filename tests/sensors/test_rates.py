"""Timing on sim time (rates, sample-and-hold, delay as MuJoCo's, averaging) and noise
drawn from each env's seeded generator."""

from __future__ import annotations

import time

import mujoco
import numpy as np
import pytest

from arena_gym.scene import SceneStore
from arena_gym.sensors import ImuSpec, LidarSpec, OdometrySpec, SensorError, SensorSuite
from arena_gym.sensors.rates import Schedule, delay_steps
from arena_gym.sim import Simulator
from arena_gym.worlds.default import builtin_robot_urdf
from tests.sensors.worlds import imu_block, lidar_block, room_distance, room_store


def _stamps(suite, key):
    stamps = []
    suite.subscribe(key, lambda reading, envs: stamps.append(float(reading.stamp[envs[0]])))
    return stamps


def test_a_30_hz_sensor_at_a_50_hz_tick_keeps_its_average_rate_exactly():
    store = room_store(1, lidar_block(samples=8, rate=30.0))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[LidarSpec("probe")])
    stamps = _stamps(suite, "probe/lidar")
    sim.step(1500)  # 3 s in 150 ticks of 20 ms
    gaps = np.round(np.diff(stamps), 9)
    assert set(gaps) == {0.02, 0.04}  # 20 and 40 ms, never two 20s in a row
    assert not np.any((gaps[1:] == 0.02) & (gaps[:-1] == 0.02))
    assert len(stamps) == 91  # due at k / 30 s for k = 0 .. 90
    assert suite["probe/lidar"].count[0] == 91


def test_rates_follow_sim_time_when_free_running():
    store = room_store(1, lidar_block(samples=8, rate=30.0))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[LidarSpec("probe")])
    sim.rt_factor = 0.0  # as fast as possible
    sim.start()
    try:
        time.sleep(0.3)
    finally:
        sim.stop()
    assert sim.clock > 0.2
    assert suite["probe/lidar"].count[0] == int(np.floor(sim.clock * 30 + 1e-6)) + 1


def test_schedule_due_times_are_whole_periods():
    schedule = Schedule(0.025)
    ticks = [k * 0.01 for k in range(1, 21)]
    assert [round(t, 2) for t in ticks if schedule.due(t)] == [
        0.01, 0.03, 0.05, 0.08, 0.1, 0.13, 0.15, 0.18, 0.2]
    assert delay_steps(0.005, 0.002) == 3 and delay_steps(0.004, 0.002) == 2
    assert delay_steps(0.0, 0.002) == 0


def _native_delay_shift(delay: float) -> int:
    """Steps between MuJoCo's undelayed and delayed readings of a step input."""
    model = mujoco.MjModel.from_xml_string(f"""<mujoco><option timestep="0.002"/><worldbody>
      <body><joint type="slide" axis="1 0 0"/><geom size="0.1"/><site name="s"/></body>
      </worldbody><sensor><framepos name="now" objtype="site" objname="s"/>
      <framepos name="late" objtype="site" objname="s" delay="{delay}" nsample="20"/>
      </sensor></mujoco>""")
    data = mujoco.MjData(model)
    first = {}
    for step in range(40):
        if step == 5:
            data.qpos[0] = 1.0
        mujoco.mj_step(model, data)
        data.qvel[0] = 0.0
        for name in ("now", "late"):
            if name not in first and data.sensor(name).data[0] == 1.0:
                first[name] = step
    return first["late"] - first["now"]


@pytest.mark.parametrize("tick_steps, delay, shift", [(1, 0.005, 3), (1, 0.004, 2), (10, 0.02, 10)])
def test_delay_shifts_a_step_input_by_whole_physics_steps_as_mujoco_does(tick_steps, delay, shift):
    if tick_steps == 1:
        assert _native_delay_shift(delay) == shift
    store = SceneStore(1)
    store[0].spawn_urdf("probe", builtin_robot_urdf())
    sim = Simulator(store, tick_steps=tick_steps)
    suite = SensorSuite(sim, specs=[OdometrySpec("probe", key="now"),
                                    OdometrySpec("probe", key="late", delay=delay)])
    sim.step(20)
    sim.state(0, "qpos")[0] += 1.0  # a step input in x
    first = {}
    for step in range(1, 60):
        sim.step(1)
        for key in ("now", "late"):
            if key not in first and suite[key].position[0, 0] > 0.5:
                first[key] = step
    assert first["late"] - first["now"] == shift
    assert suite["late"].stamp[0] == pytest.approx(suite["now"].stamp[0] - shift * 0.002, abs=1e-9)


def test_interval_samples_and_holds():
    store = SceneStore(1)
    store[0].spawn_urdf("bot", builtin_robot_urdf())
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[ImuSpec("bot", interval=0.1)])
    sim.set_cmd_vel(0, "bot", 0.1, 0.5)
    imu = suite["bot/imu"]
    seen = []
    for _ in range(25):
        sim.step(10)
        seen.append((imu.count[0], imu.stamp[0], imu.angular_velocity[0, 2]))
    counts = [c for c, _, _ in seen]
    assert counts == [1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6]
    stamps = sorted({round(s, 9) for _, s, _ in seen})
    assert stamps == [0.02, 0.1, 0.2, 0.3, 0.4, 0.5]
    held = [w for c, _, w in seen if c == 3]
    assert len(set(held)) == 1  # held between samples


def test_nsample_averages_the_last_samples():
    store = SceneStore(1)
    store[0].spawn_urdf("bot", builtin_robot_urdf())
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[ImuSpec("bot", key="raw"),
                                    ImuSpec("bot", key="avg", nsample=4)])
    raw = []
    suite.subscribe("raw", lambda r, envs: raw.append(r.angular_velocity[0].copy()))
    for k in range(12):
        sim.set_cmd_vel(0, "bot", 0.0, 0.3 * k)
        sim.step(10)
    np.testing.assert_allclose(suite["avg"].angular_velocity[0], np.mean(raw[-4:], axis=0),
                               atol=1e-12)
    np.testing.assert_array_equal(suite["avg"].orientation[0], suite["raw"].orientation[0])
    with pytest.raises(SensorError, match="LidarSpec.nsample: expected 1 \\(averaging applies "
                                          "to imu readings\\), got 3"):
        LidarSpec("bot", nsample=3)


def _noisy(seed, **spec):
    store = room_store(2, lidar_block(samples=720, max_range=10.0))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[LidarSpec("probe", **spec)], seed=seed)
    sim.step(30)
    return store, suite["probe/lidar"].ranges.copy()


def test_noise_and_dropout_come_from_each_envs_seeded_generator():
    store, a = _noisy(3, noise_std=0.01, dropout=0.1)
    _, b = _noisy(3, noise_std=0.01, dropout=0.1)
    _, c = _noisy(4, noise_std=0.01, dropout=0.1)
    assert a.tobytes() == b.tobytes()  # same seed: bit-identical
    assert a.tobytes() != c.tobytes()
    assert not np.array_equal(a[0], a[1])  # env i draws from seed + i
    model, data = store[0].model, store[0].data
    mount = store[0].robot("probe").sensor_mounts[0]
    site = model.site(mount.site).id
    from arena_gym.sensors.lidar import ray_pattern

    world = ray_pattern(mount.decl).directions @ data.site_xmat[site].reshape(3, 3).T
    truth = room_distance(data.site_xpos[site], world)
    dropped = np.isinf(a[0])
    assert 0.06 < dropped.mean() < 0.14
    residual = a[0][~dropped] - truth[~dropped]
    assert residual.std() == pytest.approx(0.01, rel=0.15) and abs(residual.mean()) < 0.002


def test_declared_noise_is_opt_in():
    _, clean = _noisy(0)
    _, declared = _noisy(0, noise_std="declared")  # the block declares stddev 0.02
    residual = (declared - clean)[np.isfinite(clean)]
    assert residual.std() == pytest.approx(0.02, rel=0.15)


def test_rngs_can_be_the_envs_own_generators():
    store = room_store(2, imu_block(), lidar_block(samples=8))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[LidarSpec("probe")])
    suite.rngs = [np.random.default_rng(7), np.random.default_rng(8)]
    with pytest.raises(SensorError, match="rngs: expected 2 np.random.Generator, got \\[1\\]"):
        suite.rngs = [1]
