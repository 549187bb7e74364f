"""The pedestrian pool: one compile for the first pedestrian of an env, none after; requests
routed by `env_<id>/` prefix; lidar sees the capsules; contacts with them are "pedestrian"."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.people.pedestrians import POOL_SIZE, RADIUS, Pedestrian
from arena_gym.scene import SceneError, SceneStore, SpawnError
from arena_gym.scene.requests import Prim, Wall
from arena_gym.sensors import CollisionSpec, LidarSpec, SensorSuite
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf

MM = 1e-3


def _robots(n: int = 2, peds: int = 0) -> tuple[SceneStore, Simulator]:
    store = SceneStore(n)
    for env in range(n):
        store[env].spawn_urdf("robot", builtin_robot_urdf())
    if peds:
        store.spawn_pedestrians([Pedestrian(f"env_{e}/p{k}", (3.0 + k, 3.0, 0.0))
                                 for e in range(n) for k in range(peds)])
    return store, Simulator(store)


def test_spawn_move_update_delete_never_compile_once_the_pool_exists():
    store, sim = _robots(2)
    sim.step(10)
    before = [store[e].compile_count for e in range(2)]
    store.spawn_pedestrians([Pedestrian("env_0/a", (1.0, 2.0, 0.0)),
                             Pedestrian("env_1/b", (2.0, 1.0, 0.0))])
    sim.step(10)
    built = [store[e].compile_count for e in range(2)]
    assert built == [c + 1 for c in before]  # the pool: one compile per env
    rng = np.random.default_rng(0)
    for i in range(50):
        names = [f"env_{i % 2}/w{i}_{k}" for k in range(5)]
        store.spawn_pedestrians([Pedestrian(n, (*rng.uniform(-4, 4, 2), 0.0)) for n in names])
        store.move_pedestrians([Pedestrian(names[0], (0.5, 0.5, 1.0))])
        store.update_pedestrians([Pedestrian(names[1], (0.6, 0.5, 1.2))])
        sim.step(10)
        store.delete_pedestrians(names)
    sim.step(10)
    assert [store[e].compile_count for e in range(2)] == built
    assert sim.groups() == [("batch", [0, 1])]  # one layout: the pool is the same everywhere
    assert list(store[0].pedestrians.slots) == ["a"] and list(store[1].pedestrians.slots) == ["b"]


def test_a_pose_is_written_with_its_heading_and_the_freed_slot_is_reused():
    store, _ = _robots(1)
    store.spawn_pedestrians([Pedestrian("a", (1.0, -2.0, np.pi / 2))], env_id=0)
    pos, quat = store[0].get_pose("a")
    np.testing.assert_allclose(pos, [1.0, -2.0, 0.0])
    np.testing.assert_allclose(quat, [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)], atol=1e-12)
    store.update_pedestrians([Pedestrian("env_0/a", (1.5, -2.0, 0.0))])
    np.testing.assert_allclose(store[0].get_pose("a")[0], [1.5, -2.0, 0.0])
    store.delete_pedestrians(["env_0/a"])
    assert store[0].get_pose("pedestrians/slot_0")[0][2] < -5  # parked below the ground
    assert store.spawn_pedestrians([Pedestrian("env_0/c", (0.0, 3.0, 0.0))]) == {0: [0]}


def test_the_pool_holds_64_and_a_65th_is_refused_with_nothing_changed():
    store, _ = _robots(1, peds=POOL_SIZE - 1)
    store.spawn_pedestrians([Pedestrian("env_0/last", (0.0, -3.0, 0.0))])
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: expected at most 0 more pedestrians (the pool holds 64, 64 in use), got 1")):
        store.spawn_pedestrians([Pedestrian("env_0/extra", (0.0, 3.0, 0.0))])
    assert len(list(store[0].pedestrians.slots)) == POOL_SIZE


def test_bad_requests_name_the_problem_and_change_nothing():
    store, _ = _robots(2, peds=1)
    counts = [store[e].compile_count for e in range(2)]
    with pytest.raises(SceneError, match=re.escape(
            "spawn_pedestrians: pedestrian 'nobody': expected an env id or an 'env_<id>/' name "
            "prefix, got neither")):
        store.spawn_pedestrians([Pedestrian("env_0/ok", (0, 0, 0)), Pedestrian("nobody")])
    with pytest.raises(SceneError, match=re.escape(
            "move_pedestrians: pedestrian 'env_1/p0': its prefix names env 1, but the request "
            "is for env 0")):
        store.move_pedestrians([Pedestrian("env_1/p0")], env_id=0)
    with pytest.raises(SceneError, match=re.escape("unknown pedestrian in env 1 'p01'; did you "
                                                   "mean 'p0'?")):
        store.delete_pedestrians(["env_0/p0", "env_1/p01"])  # env 0's is not deleted either
    with pytest.raises(SpawnError, match=re.escape(
            "env 1: duplicate name 'p0': a pedestrian of that name exists")):
        store.spawn_pedestrians([Pedestrian("env_0/new", (0, 0, 0)), Pedestrian("env_1/p0")])
    with pytest.raises(SceneError, match=re.escape("unknown env_id 7: expected 0 <= env_id < 2")):
        store.spawn_pedestrians([Pedestrian("env_7/x")])
    assert list(store[0].pedestrians.slots) == ["p0"] and list(store[1].pedestrians.slots) == ["p0"]
    assert [store[e].compile_count for e in range(2)] == counts


def test_the_lidar_sees_the_capsule_at_leg_height():
    store, sim = _robots(1)
    suite = SensorSuite(sim, [LidarSpec("robot", key="scan")], seed=0, hook=False)
    suite.reset()
    assert suite["scan"].ranges[0, 0] == np.inf  # nothing ahead in an empty world
    mount = next(m for m in store[0].robot("robot").sensor_mounts if m.kind == "lidar")
    store.spawn_pedestrians([Pedestrian("env_0/front", (1.2, 0.0, 0.0))])
    suite.reset()
    x, _, z = store[0].data.site(mount.site).xpos
    assert z < RADIUS  # below the capsule's straight part: its rounded foot is thinner there
    surface = 1.2 - np.sqrt(RADIUS**2 - (RADIUS - z) ** 2)
    assert suite["scan"].ranges[0, 0] == pytest.approx(surface - x, abs=MM)


def test_touching_a_pedestrian_is_a_pedestrian_collision():
    store, sim = _robots(2)
    suite = SensorSuite(sim, [CollisionSpec("robot")], seed=0, hook=False)
    store.spawn_pedestrians([Pedestrian("env_0/walker", (0.45, 0.0, 0.0))])
    store.spawn_pedestrians([Pedestrian("env_1/walker", (0.45, 5.0, 0.0))])  # out of the way
    suite.reset()
    for env in range(2):
        sim.set_cmd_vel(env, "robot", 0.2, 0.0)
    flags = []
    for _ in range(75):  # 3 s: 0.25 m to go
        sim.step(20)
        suite.update()
        flags.append(suite["robot/collision"].collided.copy())
    flags = np.array(flags)
    assert flags[:, 0].any() and not flags[:, 1].any()
    hit = int(np.flatnonzero(flags[:, 0])[0])
    assert hit > 5  # it drove into the pedestrian; it did not start touching it
    assert list(suite["robot/collision"].classes) == ["pedestrian", "none"]


def test_a_pedestrian_out_of_collision_detection_is_driven_through_in_a_batch():
    store, sim = _robots(2)
    suite = SensorSuite(sim, [CollisionSpec("robot")], seed=0, hook=False)
    store.spawn_pedestrians([Pedestrian(f"env_{e}/walker", (0.45, 0.0, 0.0)) for e in range(2)])
    store.scene(1).pedestrians.set_detection([0], contacts=[False])  # env 1's walker: out
    suite.reset()
    assert sim.groups() == [("batch", [0, 1])]  # the same layout: the switch is in place
    for env in range(2):
        sim.set_cmd_vel(env, "robot", 0.2, 0.0)
    flags = []
    for _ in range(75):
        sim.step(20)
        suite.update()
        flags.append(suite["robot/collision"].collided.copy())
    flags = np.array(flags)
    assert flags[:, 0].any() and not flags[:, 1].any()
    assert store[1].get_pose("robot/base_footprint")[0][0] > 0.45  # it drove through
    store.delete_pedestrians(["env_0/walker"])
    store.spawn_pedestrians([Pedestrian("env_1/second", (0.0, 2.0, 0.0))])
    assert store.scene(1).pedestrians.contacts[:2].tolist() == [False, True]
    assert not store.scene(0).pedestrians.contacts[0]


def test_a_store_sizes_its_pools_and_refuses_a_bad_size():
    store = SceneStore(1, pedestrian_pool=3)
    store.spawn_pedestrians([Pedestrian(f"env_0/p{k}", (k, 0.0, 0.0)) for k in range(3)])
    assert store[0].model.nmocap == 3
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: expected at most 0 more pedestrians (the pool holds 3, 3 in use), got 1")):
        store.spawn_pedestrians([Pedestrian("env_0/p3")])
    with pytest.raises(SceneError, match=re.escape(
            "pedestrian_pool: expected an integer in [1, 1000], got 0")):
        SceneStore(1, pedestrian_pool=0)


def test_a_pedestrian_makes_contacts_with_robots_only():
    """People overlapping the floor they stand on, a wall, a static and a movable box and each
    other make no contact (MuJoCo pairs no two bodies without degrees of freedom), so a crowd
    costs no narrow phase nor constraint rows; one touching the robot makes contacts."""
    store, sim = _robots(1)
    store[0].spawn_walls([Wall("wall", (2.0, -1.0), (2.0, 1.0))])
    store[0].spawn_prims([Prim("box", pose=(2.0, 2.0, 0.4, 0.0), scale=(0.8, 0.8, 0.8)),
                          Prim("cart", pose=(2.0, -2.0, 0.4, 0.0), scale=(0.8, 0.8, 0.8),
                               movable=True)])
    store.spawn_pedestrians([Pedestrian("env_0/at_wall", (2.1, 0.0, 0.0)),
                             Pedestrian("env_0/in_box", (2.2, 2.0, 0.0)),
                             Pedestrian("env_0/in_cart", (2.2, -2.0, 0.0)),
                             Pedestrian("env_0/twin", (2.1, 0.2, 0.0)),
                             Pedestrian("env_0/far", (-3.0, 0.0, 0.0))])
    sim.step(20)
    model, data = store[0].model, store[0].data
    people = {model.body_geomadr[model.body(store.scene(0).body_name(n)).id]
              for n in ("at_wall", "in_box", "in_cart", "twin", "far")}
    touching = [c for c in data.contact[: data.ncon] if {*c.geom} & people] if data.ncon else []
    assert len(touching) == 0
    store.update_pedestrians([Pedestrian("env_0/far", (0.3, 0.0, 0.0))])  # into the robot
    sim.step(1)
    data = store[0].data
    pairs = {tuple(sorted(model.body(model.geom_bodyid[g]).name for g in c.geom))
             for c in data.contact[: data.ncon] if {*c.geom} & people}
    robot = {model.body(b).name for b in range(model.nbody) if model.body(b).name.startswith(
        "env_0/robot/")}
    assert pairs and all(any(b in robot for b in pair) for pair in pairs)
