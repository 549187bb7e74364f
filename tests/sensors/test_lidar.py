"""Lidar: ranges against analytic distances in a room of known geometry, REP 117, the
carrier's invisibility, robots seeing each other, big fans and multi-ring lidars."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from arena_gym.geometry import groups
from arena_gym.scene import Prim, SceneStore, Slab
from arena_gym.sensors import LidarSpec, SensorSuite
from arena_gym.sensors.lidar import ray_pattern
from arena_gym.sim import Simulator
from tests.sensors.worlds import HALF, SCAN_HEIGHT, lidar_block, room_distance, room_store

MM = 1e-3


def _site(store, env, robot="probe"):
    mount = next(m for m in store[env].robot(robot).sensor_mounts if m.kind == "lidar")
    model, data = store[env].model, store[env].data
    site = model.site(mount.site).id
    return data.site_xpos[site].copy(), data.site_xmat[site].reshape(3, 3).copy(), mount


def _expected(store, env, robot="probe", floor=True):
    origin, rot, mount = _site(store, env, robot)
    pattern = ray_pattern(mount.decl)
    world = pattern.directions @ rot.T
    return room_distance(origin, world, floor=floor), pattern


def _suite(store, *specs, **kwargs):
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=specs or [LidarSpec("probe")], seed=0, **kwargs)
    sim.step(10)
    return sim, suite


@pytest.mark.parametrize("pose", [(0.0, 0.0, 0.0), (0.7, -0.4, 0.6)])
def test_every_beam_matches_the_analytic_distance_within_a_millimetre(pose):
    store = room_store(2, lidar_block(samples=360, max_range=10.0), poses=(pose,))
    _, suite = _suite(store)
    reading = suite["probe/lidar"]
    assert reading.ranges.shape == (2, 360)
    assert reading.valid.all()
    for env in range(2):
        expected, _ = _expected(store, env)
        np.testing.assert_allclose(reading.ranges[env], expected, atol=MM)


def test_laserscan_fields_follow_the_declaration_both_ends_included():
    store = room_store(1, lidar_block(samples=5, min_angle=-1.0, max_angle=1.0, min_range=0.2,
                                      max_range=8.0, rate=20.0))
    _, suite = _suite(store)
    r = suite["probe/lidar"]
    assert (r.angle_min, r.angle_max, r.angle_increment) == (-1.0, 1.0, 0.5)
    assert (r.range_min, r.range_max) == (0.2, 8.0)
    assert r.scan_time == pytest.approx(0.05) and r.period == pytest.approx(0.05)
    np.testing.assert_allclose(np.arctan2(r.pattern.directions[:, 1], r.pattern.directions[:, 0]),
                               [-1.0, -0.5, 0.0, 0.5, 1.0], atol=1e-12)


def test_rep117_plus_inf_beyond_max_range_and_minus_inf_below_min_range():
    # the walls lie 2-3.4 m away; a box 0.4 m ahead (east) is closer than min range 0.5
    store = room_store(1, lidar_block(samples=720, min_range=0.5, max_range=2.4))
    store[0].spawn_prims([Prim("close", pose=(0.5, 0.0, 0.25, 0.0), scale=(0.2, 0.2, 0.5))])
    _, suite = _suite(store)
    ranges = suite["probe/lidar"].ranges[0]
    expected, pattern = _expected(store, 0)
    angles = np.arctan2(pattern.directions[:, 1], pattern.directions[:, 0])
    ahead = np.abs(angles) < math.atan2(0.08, 0.4)  # beams that meet the box's face
    assert np.all(ranges[ahead] == -np.inf)
    aside = np.abs(angles) > 0.3  # clear of the box
    far = aside & (expected > 2.4 + 0.01)
    near = aside & (expected < 2.4 - 0.01)
    assert far.sum() > 100 and near.sum() > 100
    assert np.all(ranges[far] == np.inf)
    np.testing.assert_allclose(ranges[near], expected[near], atol=MM)


def test_the_carrier_is_invisible_but_its_own_geoms_would_be_hit():
    """The probe's sensor sits inside its own cylinder and box, next to its mast: none of
    them shows, while a ray of the same fan with the carrier visible stops at 4 cm."""
    store = room_store(1, lidar_block(samples=360))
    _, suite = _suite(store)
    expected, _ = _expected(store, 0)
    np.testing.assert_allclose(suite["probe/lidar"].ranges[0], expected, atol=MM)
    origin, _, _ = _site(store, 0)
    model, data = store[0].model, store[0].data
    geomid = np.zeros(1, np.int32)
    first = mujoco.mj_ray(model, data, origin, np.array([1.0, 0.0, 0.0]), None, 1, -1, geomid)
    assert first == pytest.approx(0.04, abs=1e-6)  # its own sensor cylinder, from inside
    assert model.geom_group[geomid[0]] == groups.GROUP_ROBOT  # restored after the cast


def test_two_robots_see_each_other_and_never_themselves():
    store = room_store(1, lidar_block(samples=360), poses=((0.0, 0.0, 0.0), (1.5, 0.0, math.pi)))
    specs = [LidarSpec("probe"), LidarSpec("probe_1")]
    _, suite = _suite(store, *specs)
    for robot in ("probe", "probe_1"):
        origin, _, _ = _site(store, 0, robot)
        ranges = suite[f"{robot}/lidar"].ranges[0]
        # beam 180 of 360 over [-pi, pi] points (nearly) straight ahead, at the other robot
        other = 1.5 - HALF - abs(origin[0] - (0.0 if robot == "probe" else 1.5))
        assert ranges[180] == pytest.approx(other, abs=2e-3)
        expected, _ = _expected(store, 0, robot)
        blocked = np.abs(ranges - expected) > MM
        assert 10 < blocked.sum() < 40  # the other robot hides a narrow sector, nothing else


@pytest.mark.parametrize("samples", [1080, 1440])
def test_a_big_fan_matches_everywhere_whatever_the_suite_threads(samples):
    store = room_store(1, lidar_block(samples=samples))
    _, threaded = _suite(store, nthread=2)
    expected, _ = _expected(store, 0)
    np.testing.assert_allclose(threaded["probe/lidar"].ranges[0], expected, atol=MM)
    single = SensorSuite(threaded.sim, specs=[LidarSpec("probe")], nthread=1)
    single.reset()
    assert single["probe/lidar"].ranges.tobytes() == threaded["probe/lidar"].ranges.tobytes()


def test_a_16_ring_lidar_sees_floor_and_walls_and_gives_a_point_cloud():
    vmin, vmax = math.radians(-15), math.radians(15)
    store = room_store(1, lidar_block(samples=181, rings=16, vmin=vmin, vmax=vmax, max_range=30))
    _, suite = _suite(store)
    r = suite["probe/lidar"]
    assert r.ranges.shape == (1, 16, 181)
    np.testing.assert_allclose(r.elevations, np.linspace(vmin, vmax, 16))
    expected, _ = _expected(store, 0)
    np.testing.assert_allclose(r.ranges[0].ravel(), expected, atol=MM)
    lowest = r.ranges[0, 0]  # -15 degrees: the floor, 1 m away
    assert lowest[90] == pytest.approx(SCAN_HEIGHT / math.sin(math.radians(15)), abs=2e-3)
    points = r.points()[0].reshape(16, 181, 3)
    ahead = points[8, 90]  # a ring just above horizontal, the beam at 0 rad: east wall
    assert ahead[0] == pytest.approx(3.0, abs=0.01) and abs(ahead[1]) < 0.05 and ahead[2] > 0
    left = points[8, 135]  # +pi/2: the north wall, along +y of the sensor
    assert left[1] == pytest.approx(2.5, abs=0.01) and abs(left[0]) < 0.05
    floor = points[0, 90]
    assert floor[2] == pytest.approx(-SCAN_HEIGHT, abs=2e-3)


def test_ceilings_and_hidden_hulls_are_skipped():
    store = room_store(1, lidar_block(samples=90, rings=3, vmin=0.2, vmax=0.3, max_range=30))
    store[0].spawn_ceilings([Slab("ceiling", center=(0.5, 0.5, 0.5), size=(6.0, 5.0))])
    scene = store.scene(0)
    hull = scene.spec.worldbody.add_body(name="env_0/hull", pos=[1.0, 0.0, 0.5])
    hull.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.2, 2.0, 0.5], group=groups.GROUP_HIDDEN)
    scene.compile()
    _, suite = _suite(store)
    expected, pattern = _expected(store, 0)
    np.testing.assert_allclose(suite["probe/lidar"].ranges[0].ravel(), expected, atol=MM)
    ceiling = (0.5 - SCAN_HEIGHT) / pattern.directions[:, 2]
    assert np.all(ceiling < expected - 0.1)  # every beam would have met the ceiling first


def test_batched_and_pooled_envs_read_alike():
    store = room_store(3, lidar_block(samples=360))
    store[2].spawn_prims([Prim("outside", pose=(10.0, 10.0, 0.2, 0.0))])  # env 2: the pool
    sim, suite = _suite(store)
    assert sim.groups() == [("batch", [0, 1]), ("pool", [2])]
    ranges = suite["probe/lidar"].ranges
    np.testing.assert_allclose(ranges[2], ranges[0], atol=1e-6)
    np.testing.assert_allclose(ranges[1], ranges[0], atol=1e-6)


def test_movable_obstacles_are_seen_where_their_state_puts_them():
    """Mocap boxes move through state (no recompile): the cast follows the state rows."""
    store = room_store(3, lidar_block(samples=360))
    for env in range(3):
        store[env].spawn_prims([Prim("pool/box", pose=(1.0, 0.0, 0.25, 0.0), scale=(0.2, 0.2, 0.5),
                                     movable=True)])
    store[2].spawn_prims([Prim("outside", pose=(10.0, 10.0, 0.2, 0.0))])  # env 2: the pool
    sim, suite = _suite(store)
    ranges = suite["probe/lidar"].ranges
    for env in range(3):
        origin, _, _ = _site(store, env)
        assert ranges[env, 180] == pytest.approx(0.9 - origin[0], abs=MM)
    for env in (1, 2):
        sim.state(env, "mocap_pos")[0, 0] = 2.0  # env 1 (batch) and env 2 (pool)
    sim.step(10)
    for env, face in ((0, 0.9), (1, 1.9), (2, 1.9)):
        origin, _, _ = _site(store, env)
        assert ranges[env, 180] == pytest.approx(face - origin[0], abs=MM)


def test_the_batched_cast_equals_mj_multiray_per_env_to_float_precision():
    """Every beam of 4 envs of the default world, robots driving and turning (so tilted a
    little), against mj_multiRay on each env's own state from the site's pose; the robot
    is the only one, so leaving GROUP_ROBOT out of the reference excludes exactly it."""
    from arena_gym.worlds import build_default_world

    store = SceneStore(4)
    for env in range(4):
        build_default_world(store, env, np.random.default_rng(env))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[LidarSpec("robot", range_max=20.0)], seed=0, hook=False)
    for env in range(4):
        sim.set_cmd_vel(env, "robot", 0.2, 0.8 * (env - 1.5))
    mask = np.zeros(mujoco.mjNGROUP, dtype=np.uint8)
    mask[groups.GROUP_STATIC] = 1
    for _ in range(3):
        sim.step(50)
        suite.update()
        ours = suite["robot/lidar"].ranges
        pattern = suite["robot/lidar"].pattern
        hits = 0
        for env in range(4):
            model, data = store[env].model, mujoco.MjData(store[env].model)
            mujoco.mj_copyData(data, model, store[env].data)
            mujoco.mj_kinematics(model, data)
            mount = next(m for m in store[env].robot("robot").sensor_mounts if m.kind == "lidar")
            site = model.site(mount.site).id
            vec = pattern.directions @ data.site_xmat[site].reshape(3, 3).T
            dist = np.zeros(len(vec))
            geomid = np.zeros(len(vec), dtype=np.int32)
            mujoco.mj_multiRay(model, data, data.site_xpos[site].copy(), vec.ravel(), mask, 1, -1,
                               geomid, dist, None, len(vec), mujoco.mjMAXVAL)
            ref = np.where((geomid < 0) | (dist > 20.0), np.inf, dist).astype(np.float32)
            ref[(geomid >= 0) & (dist < pattern.range_min)] = -np.inf
            np.testing.assert_allclose(ours[env], ref, rtol=1e-6, atol=0)
            hits += int(np.isfinite(ref).sum())
        assert hits > 4 * 300  # walls all round within 20 m
