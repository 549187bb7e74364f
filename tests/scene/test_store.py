"""Scene store operations: spawning, editing, deleting, compile batching, state carry."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from arena_gym.errors import SceneError
from arena_gym.scene import Prim, PrimEdit, SceneStore, Slab, Wall
from arena_gym.scene.robot import collision_sensor_names
from arena_gym.sim import Simulator
from tests.conftest import assert_same, snapshot, spawn


def test_names_are_prefixed_per_env():
    store = SceneStore(2)
    store[1].spawn_prims([Prim("obstacles/a", pose=(1, 2, 0.25, 0), scale=(0.5, 0.5, 0.5))])
    model = store[1].model
    assert model.body("env_1/obstacles/a").id > 0
    assert list(store[1].entities) == ["obstacles/a"]
    assert list(store[0].entities) == []


def test_box_scale_is_full_extent_with_a_millimetre_floor():
    store = SceneStore(1)
    store[0].spawn_prims([Prim("box", pose=(0, 0, 0.5, 0), scale=(1.0, 0.4, 0.0001))])
    geom = store[0].model.geom("env_0/box/geom")
    np.testing.assert_allclose(geom.size, [0.5, 0.2, 0.0005])


def test_walls_and_slabs_have_the_requested_geometry():
    store = SceneStore(1)
    store[0].spawn_walls([Wall("north", start=(-3, 3), end=(3, 3), height=0.5)])
    store[0].spawn_floors([Slab("floor1", center=(0, 0, 2.0), size=(6, 4))])
    store[0].spawn_ceilings([Slab("roof", center=(0, 0, 3.0), size=(6, 4))])
    model, data = store[0].model, store[0].data
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
    store[0].spawn_prims([Prim(f"obstacles/box_{i}", pose=(i * 0.3, 5, 0.1, 0), scale=(0.2,) * 3)
                          for i in range(143)])
    store[0].spawn_prims([Prim("keep", pose=(0, -5, 0.1, 0))])
    _ = store[0].model
    before = store[0].compile_count
    deleted = store[0].delete(["obstacles/"])
    assert len(deleted) == 143
    assert store[0].compile_count == before  # deleting only edits the spec
    model = store[0].model
    assert store[0].compile_count == before + 1
    assert model.nbody == 3  # world, ground + keep
    assert list(store[0].entities) == ["keep"]


def test_spawn_burst_is_one_compile():
    store = SceneStore(1)
    before = store[0].compile_count
    for i in range(20):
        store[0].spawn_prims([Prim(f"b{i}", pose=(i, 0, 0.1, 0))])
    store[0].get_pose("b3")
    assert store[0].compile_count == before + 1


def test_reset_world_removes_everything_of_the_env(assets):
    store = SceneStore(2)
    for env in range(2):
        spawn(store, env, assets, "burger")
        store[env].spawn_prims([Prim("box", pose=(2, 0, 0.2, 0))])
    other = snapshot(store.scenes[1])
    store[0].reset_world()
    model = store[0].model
    assert (model.nbody, model.nu, model.nmesh, model.nexclude) == (2, 0, 0, 0)  # world, ground
    assert list(store[0].entities) == []
    assert_same(snapshot(store.scenes[1]), other)
    spawn(store, 0, assets, "burger")  # the name is free again
    assert store[0].model.nu == 2


def test_state_carries_across_a_recompile(assets):
    store = SceneStore(1)
    spawn(store, 0, assets, "burger")
    sim = Simulator(store)
    sim.set_cmd_vel(0, "burger", 0.2, 0.5)
    sim.step(500)
    data = store[0].data
    qpos, qvel, time = data.qpos.copy(), data.qvel.copy(), data.time
    store[0].spawn_prims([Prim("far", pose=(9, 9, 0.1, 0))])
    _ = store[0].model  # recompile
    data = store[0].data
    assert data.time == time
    np.testing.assert_array_equal(data.qpos, qpos)
    np.testing.assert_array_equal(data.qvel, qvel)
    # the robot keeps driving from where it was
    sim.step(100)
    assert store[0].data.time == pytest.approx(time + 0.2)


def test_edited_pose_moves_without_compile_and_survives_recompiles():
    store = SceneStore(1)
    store[0].spawn_prims([Prim("box", pose=(1, 1, 0.2, 0), scale=(0.4, 0.4, 0.4))])
    _ = store[0].model
    count = store[0].compile_count
    store[0].edit_prims([PrimEdit("box", pose=(3, -1, 0.2, math.pi / 2))])
    pos, quat = store[0].get_pose("box")
    np.testing.assert_allclose(pos, [3, -1, 0.2])
    np.testing.assert_allclose(quat, [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)])
    assert store[0].compile_count == count
    store[0].spawn_prims([Prim("other", pose=(5, 5, 0.1, 0))])
    pos, _ = store[0].get_pose("box")  # recompiled
    assert store[0].compile_count == count + 1
    np.testing.assert_allclose(pos, [3, -1, 0.2])


def test_a_tilted_prim_keeps_its_tilt_through_edits_and_recompiles():
    half = math.radians(30) / 2
    pitched = (math.cos(half), 0.0, math.sin(half), 0.0)
    store = SceneStore(1)
    store[0].spawn_prims([Prim("ramp", pose=(1, 1, 0.3, 0), scale=(1.0, 0.5, 0.05),
                               quat=tuple(2 * q for q in pitched))])  # scaled to unit length
    np.testing.assert_allclose(store[0].get_pose("ramp")[1], pitched, atol=1e-12)
    store[0].edit_prims([PrimEdit("ramp", scale=(2.0, 0.5, 0.05))])  # the tilt stays
    np.testing.assert_allclose(store[0].get_pose("ramp")[1], pitched, atol=1e-12)
    store[0].edit_prims([PrimEdit("ramp", pose=(2, 1, 0.3, 0), quat=(0.0, 1.0, 0.0, 0.0))])
    np.testing.assert_allclose(store[0].get_pose("ramp")[1], [0, 1, 0, 0], atol=1e-12)
    store[0].spawn_prims([Prim("other", pose=(5, 5, 0.1, 0))])  # recompiled
    np.testing.assert_allclose(store[0].get_pose("ramp")[1], [0, 1, 0, 0], atol=1e-12)
    store[0].edit_prims([PrimEdit("ramp", pose=(2, 1, 0.3, math.pi))])  # upright again
    np.testing.assert_allclose(store[0].get_pose("ramp")[1], [0, 0, 0, 1], atol=1e-12)


def test_a_bad_tilt_is_refused_naming_it():
    with pytest.raises(SceneError, match=re.escape(
            "Prim 'ramp' quat: expected a non-zero quaternion (w, x, y, z), got "
            "(0.0, 0.0, 0.0, 0.0)")):
        Prim("ramp", quat=(0, 0, 0, 0))
    with pytest.raises(SceneError, match=re.escape(
            "PrimEdit 'ramp': a quat comes with a pose, got none")):
        PrimEdit("ramp", scale=(1.0, 1.0, 1.0), quat=(1, 0, 0, 0))


def test_edited_scale_recompiles():
    store = SceneStore(1)
    store[0].spawn_prims([Prim("box", pose=(1, 1, 0.2, 0), scale=(0.4, 0.4, 0.4))])
    store[0].edit_prims([PrimEdit("box", scale=(1.0, 2.0, 0.4))])
    np.testing.assert_allclose(store[0].model.geom("env_0/box/geom").size, [0.5, 1.0, 0.2])


def test_sibling_envs_are_bitwise_untouched(assets):
    store = SceneStore(3)
    for env in range(3):
        spawn(store, env, assets, "burger")
        store[env].spawn_prims([Prim(f"box{i}", pose=(2, i, 0.2, 0)) for i in range(4)])
    sim = Simulator(store)
    for env in range(3):
        sim.set_cmd_vel(env, "burger", 0.1, 0.2)
    sim.step(200)
    siblings = [snapshot(store.scenes[e]) for e in (0, 2)]
    spawn(store, 1, assets, "jackal", pose=(-2, 0, 0))
    store[1].spawn_prims([Prim("new", pose=(0, 3, 0.2, 0))])
    store[1].delete(["box0", "box2"])
    _ = store[1].model
    assert list(store[1].entities) == ["burger", "box1", "box3", "jackal", "new"]
    for env, snap in zip((0, 2), siblings, strict=True):
        assert_same(snapshot(store.scenes[env]), snap)


def test_get_pose_accepts_entity_relative_and_full_names(assets):
    store = SceneStore(1)
    spawn(store, 0, assets, "burger", pose=(1, 2, 0))
    a = store[0].get_pose("burger")[0]
    b = store[0].get_pose("burger/base_footprint")[0]
    c = store[0].get_pose("env_0/burger/base_footprint")[0]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    with pytest.raises(KeyError, match="unknown body in env 0 'burger/base_foot'; did you mean"):
        store[0].get_pose("burger/base_foot")


def test_movable_prims_move_through_state_without_recompiling(assets):
    store = SceneStore(2)
    for env in range(2):
        store[env].spawn_prims([Prim("pool/box", pose=(1, 1, 0.2, 0), scale=(0.4,) * 3,
                                     movable=True)])
    sim = Simulator(store)
    sim.step(10)
    counts = [store[e].compile_count for e in range(2)]
    versions = [store.scenes[e].version for e in range(2)]
    store[1].edit_prims([PrimEdit("pool/box", pose=(-2, 3, 0.2, 0.5))])
    sim.step(10)
    assert [store[e].compile_count for e in range(2)] == counts
    assert [store.scenes[e].version for e in range(2)] == versions  # no regroup either
    np.testing.assert_allclose(store[1].get_pose("pool/box")[0], [-2, 3, 0.2])
    np.testing.assert_allclose(store[0].get_pose("pool/box")[0], [1, 1, 0.2])
    assert store[1].model.nmocap == 1


def test_collision_sensors_tell_walls_from_the_ground(assets):
    store = SceneStore(1)
    info = spawn(store, 0, assets, "burger")
    store[0].spawn_walls([Wall("wall", start=(0.5, -1), end=(0.5, 1), height=0.5)])
    sim = Simulator(store)
    sim.step(100)
    everything, grounds = collision_sensor_names(info)

    def count(names):
        data = store[0].data
        return sum(data.sensor(n).data[0] for n in names)

    assert count([everything]) == count(grounds) > 0  # standing on its feet
    sim.set_cmd_vel(0, "burger", 0.2, 0.0)
    sim.step(1500)  # 3 s: into the wall, 0.38 m away
    assert count([everything]) > count(grounds)
