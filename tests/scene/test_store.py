"""Scene store operations: spawning, editing, deleting, compile batching, state carry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena_gym.scene import Prim, PrimEdit, SceneStore, Slab, Wall
from arena_gym.scene.robot import collision_sensor_names
from arena_gym.sim import Simulator
from tests.conftest import assert_same, snapshot, spawn


def test_names_are_prefixed_per_env():
    store = SceneStore(2)
    store.spawn_prims(1, [Prim("obstacles/a", pose=(1, 2, 0.25, 0), scale=(0.5, 0.5, 0.5))])
    model = store.model(1)
    assert model.body("env_1/obstacles/a").id > 0
    assert store.names(1) == ["obstacles/a"]
    assert store.names(0) == []


def test_box_scale_is_full_extent_with_a_millimetre_floor():
    store = SceneStore(1)
    store.spawn_prims(0, [Prim("box", pose=(0, 0, 0.5, 0), scale=(1.0, 0.4, 0.0001))])
    geom = store.model(0).geom("env_0/box/geom")
    np.testing.assert_allclose(geom.size, [0.5, 0.2, 0.0005])


def test_walls_and_slabs_have_the_requested_geometry():
    store = SceneStore(1)
    store.spawn_walls(0, [Wall("north", start=(-3, 3), end=(3, 3), height=0.5)])
    store.spawn_floors(0, [Slab("floor1", center=(0, 0, 2.0), size=(6, 4))])
    store.spawn_ceilings(0, [Slab("roof", center=(0, 0, 3.0), size=(6, 4))])
    model, data = store.model(0), store.data(0)
    wall = model.geom("env_0/north/geom")
    np.testing.assert_allclose(wall.size, [3.0, 0.05, 0.25])
    np.testing.assert_allclose(data.geom("env_0/north/geom").xpos, [0, 3, 0.25], atol=1e-12)
    floor = data.geom("env_0/floor1/geom")
    assert floor.xpos[2] + model.geom("env_0/floor1/geom").size[2] == pytest.approx(2.0)
    roof = data.geom("env_0/roof/geom")
    assert roof.xpos[2] - model.geom("env_0/roof/geom").size[2] == pytest.approx(3.0)
    assert model.geom("env_0/roof/geom").size[2] * 2 == pytest.approx(0.02)


def test_delete_burst_is_one_compile():
    store = SceneStore(1)
    store.spawn_prims(0, [Prim(f"obstacles/box_{i}", pose=(i * 0.3, 5, 0.1, 0), scale=(0.2,) * 3)
                          for i in range(143)])
    store.spawn_prims(0, [Prim("keep", pose=(0, -5, 0.1, 0))])
    store.model(0)
    before = store.compile_count(0)
    deleted = store.delete_prims(0, ["obstacles/"])
    assert len(deleted) == 143
    assert store.compile_count(0) == before  # deleting only edits the spec
    model = store.model(0)
    assert store.compile_count(0) == before + 1
    assert model.nbody == 3  # world, ground + keep
    assert store.names(0) == ["keep"]


def test_spawn_burst_is_one_compile():
    store = SceneStore(1)
    before = store.compile_count(0)
    for i in range(20):
        store.spawn_prims(0, [Prim(f"b{i}", pose=(i, 0, 0.1, 0))])
    store.get_pose(0, "b3")
    assert store.compile_count(0) == before + 1


def test_reset_world_removes_everything_of_the_env(assets):
    store = SceneStore(2)
    for env in range(2):
        spawn(store, env, assets, "burger")
        store.spawn_prims(env, [Prim("box", pose=(2, 0, 0.2, 0))])
    other = snapshot(store.scenes[1])
    store.reset_world(0)
    model = store.model(0)
    assert (model.nbody, model.nu, model.nmesh, model.nexclude) == (2, 0, 0, 0)  # world, ground
    assert store.names(0) == []
    assert_same(snapshot(store.scenes[1]), other)
    spawn(store, 0, assets, "burger")  # the name is free again
    assert store.model(0).nu == 2


def test_state_carries_across_a_recompile(assets):
    store = SceneStore(1)
    spawn(store, 0, assets, "burger")
    sim = Simulator(store)
    sim.set_cmd_vel(0, "burger", 0.2, 0.5)
    sim.step(500)
    data = store.data(0)
    qpos, qvel, time = data.qpos.copy(), data.qvel.copy(), data.time
    store.spawn_prims(0, [Prim("far", pose=(9, 9, 0.1, 0))])
    store.model(0)  # recompile
    data = store.data(0)
    assert data.time == time
    np.testing.assert_array_equal(data.qpos, qpos)
    np.testing.assert_array_equal(data.qvel, qvel)
    # the robot keeps driving from where it was
    sim.step(100)
    assert store.data(0).time == pytest.approx(time + 0.2)


def test_edited_pose_moves_without_compile_and_survives_recompiles():
    store = SceneStore(1)
    store.spawn_prims(0, [Prim("box", pose=(1, 1, 0.2, 0), scale=(0.4, 0.4, 0.4))])
    store.model(0)
    count = store.compile_count(0)
    store.edit_prims(0, [PrimEdit("box", pose=(3, -1, 0.2, math.pi / 2))])
    pos, quat = store.get_pose(0, "box")
    np.testing.assert_allclose(pos, [3, -1, 0.2])
    np.testing.assert_allclose(quat, [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)])
    assert store.compile_count(0) == count
    store.spawn_prims(0, [Prim("other", pose=(5, 5, 0.1, 0))])
    pos, _ = store.get_pose(0, "box")  # recompiled
    assert store.compile_count(0) == count + 1
    np.testing.assert_allclose(pos, [3, -1, 0.2])


def test_edited_scale_recompiles():
    store = SceneStore(1)
    store.spawn_prims(0, [Prim("box", pose=(1, 1, 0.2, 0), scale=(0.4, 0.4, 0.4))])
    store.edit_prims(0, [PrimEdit("box", scale=(1.0, 2.0, 0.4))])
    np.testing.assert_allclose(store.model(0).geom("env_0/box/geom").size, [0.5, 1.0, 0.2])


def test_sibling_envs_are_bitwise_untouched(assets):
    store = SceneStore(3)
    for env in range(3):
        spawn(store, env, assets, "burger")
        store.spawn_prims(env, [Prim(f"box{i}", pose=(2, i, 0.2, 0)) for i in range(4)])
    sim = Simulator(store)
    for env in range(3):
        sim.set_cmd_vel(env, "burger", 0.1, 0.2)
    sim.step(200)
    siblings = [snapshot(store.scenes[e]) for e in (0, 2)]
    spawn(store, 1, assets, "jackal", pose=(-2, 0, 0))
    store.spawn_prims(1, [Prim("new", pose=(0, 3, 0.2, 0))])
    store.delete_prims(1, ["box0", "box2"])
    store.model(1)
    assert store.names(1) == ["burger", "box1", "box3", "jackal", "new"]
    for env, snap in zip((0, 2), siblings, strict=True):
        assert_same(snapshot(store.scenes[env]), snap)


def test_get_pose_accepts_entity_relative_and_full_names(assets):
    store = SceneStore(1)
    spawn(store, 0, assets, "burger", pose=(1, 2, 0))
    a = store.get_pose(0, "burger")[0]
    b = store.get_pose(0, "burger/base_footprint")[0]
    c = store.get_pose(0, "env_0/burger/base_footprint")[0]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    with pytest.raises(KeyError, match="unknown body in env 0 'burger/base_foot'; did you mean"):
        store.get_pose(0, "burger/base_foot")


def test_movable_prims_move_through_state_without_recompiling(assets):
    store = SceneStore(2)
    for env in range(2):
        store.spawn_prims(env, [Prim("pool/box", pose=(1, 1, 0.2, 0), scale=(0.4,) * 3,
                                     movable=True)])
    sim = Simulator(store)
    sim.step(10)
    counts = [store.compile_count(e) for e in range(2)]
    versions = [store.scenes[e].version for e in range(2)]
    store.edit_prims(1, [PrimEdit("pool/box", pose=(-2, 3, 0.2, 0.5))])
    sim.step(10)
    assert [store.compile_count(e) for e in range(2)] == counts
    assert [store.scenes[e].version for e in range(2)] == versions  # no regroup either
    np.testing.assert_allclose(store.get_pose(1, "pool/box")[0], [-2, 3, 0.2])
    np.testing.assert_allclose(store.get_pose(0, "pool/box")[0], [1, 1, 0.2])
    assert store.model(1).nmocap == 1


def test_collision_sensors_tell_walls_from_the_ground(assets):
    store = SceneStore(1)
    info = spawn(store, 0, assets, "burger")
    store.spawn_walls(0, [Wall("wall", start=(0.5, -1), end=(0.5, 1), height=0.5)])
    sim = Simulator(store)
    sim.step(100)
    everything, grounds = collision_sensor_names(info)

    def count(names):
        data = store.data(0)
        return sum(data.sensor(n).data[0] for n in names)

    assert count([everything]) == count(grounds) > 0  # standing on its feet
    sim.set_cmd_vel(0, "burger", 0.2, 0.0)
    sim.step(1500)  # 3 s: into the wall, 0.38 m away
    assert count([everything]) > count(grounds)
