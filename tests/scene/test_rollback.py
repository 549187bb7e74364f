"""Rejected requests raise a clear error naming the culprit and leave the scene bit for bit."""

from __future__ import annotations

import re

import pytest

from arena_gym.scene import Prim, SceneError, SceneStore, SpawnError, Wall
from arena_gym.sim import Simulator
from tests.conftest import assert_same, robot_paths, snapshot, spawn

GOOD_LINK = ('<link name="base"><inertial><mass value="1"/>'
             '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>')


@pytest.fixture
def busy_store(assets):
    """Two envs with a robot and boxes, stepped a little so state is not trivial."""
    store = SceneStore(2)
    for env in range(2):
        spawn(store, env, assets, "burger")
        store[env].spawn_prims([Prim(f"box{i}", pose=(2 + i, 0, 0.2, 0), scale=(0.4, 0.4, 0.4))
                                for i in range(3)])
    sim = Simulator(store)
    sim.set_cmd_vel(0, "burger", 0.1, 0.3)
    sim.step(100)
    store[0].data, store[1].data  # bring MjData up to date
    return store, sim


@pytest.mark.parametrize(
    "urdf, message",
    [
        ("<robot name='x'><link name='a'></robot>", "robot 'bad': malformed XML: mismatched tag"),
        (
            ("<robot name='x'><link name='a'><visual><geometry><box size='$(optenv SIZE 1) 1 1'/>"
            "</geometry></visual></link></robot>"),
            "robot 'bad': unexpanded xacro in <box> attribute size='$(optenv SIZE 1) 1 1'",
        ),
        (
            (f"<robot name='x'>{GOOD_LINK}<joint name='j' type='revolute'><parent link='base'/>"
            "<child link='ghost'/><axis xyz='0 0 1'/></joint></robot>"),
            "robot 'bad': MuJoCo rejected the URDF: XML Error: URDF joint parent or child missing",
        ),
        ("<sdf version='1.6'/>", "robot 'bad': expected a <robot> root element, got <sdf>"),
    ],
)
def test_bad_robot_leaves_scene_unchanged(busy_store, urdf, message):
    store, _ = busy_store
    before = [snapshot(s) for s in store.scenes]
    with pytest.raises(SpawnError, match=re.escape(message)):
        store[0].spawn_urdf("bad", urdf.replace("name='x'", "name='x'"), package_paths=())
    for scene, snap in zip(store.scenes, before, strict=True):
        assert_same(snapshot(scene), snap)


def test_error_messages_name_the_robot(busy_store):
    store, _ = busy_store
    with pytest.raises(SpawnError, match=r"^robot 'bad': malformed XML"):
        store[0].spawn_urdf("bad", "<robot name='x'><link name='a'></robot>")
    with pytest.raises(SpawnError, match=r"^URDF file not found: expected a readable file, "
                                         r"got '/nope.urdf'"):
        store[0].spawn_urdf("bad", "/nope.urdf")


def test_duplicate_robot_name(busy_store, assets):
    store, _ = busy_store
    before = snapshot(store.scenes[0])
    urdf, packages = robot_paths(assets, "burger")
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: duplicate name 'burger': a robot of that name exists")):
        store[0].spawn_urdf("burger", urdf, package_paths=packages)
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: duplicate name 'box1': a prim of that name exists")):
        store[0].spawn_prims([Prim("new", pose=(5, 5, 0.1, 0)), Prim("box1")])
    assert_same(snapshot(store.scenes[0]), before)


def test_unknown_env_id(busy_store):
    store, _ = busy_store
    with pytest.raises(SceneError, match=re.escape("unknown env_id 2: expected 0 <= env_id < 2")):
        store[2].spawn_prims([Prim("box")])
    with pytest.raises(SceneError, match=re.escape("env_id: expected an integer, got 1.0")):
        store[1.0].get_pose("burger")


@pytest.mark.parametrize("scale", [(0.5, -0.1, 0.5), (0.0, 1.0, 1.0)])
def test_negative_or_zero_scale(busy_store, scale):
    store, _ = busy_store
    before = snapshot(store.scenes[0])
    with pytest.raises(SceneError, match=re.escape(
            f"Prim 'flat' scale: expected sizes > 0, got {tuple(float(s) for s in scale)}")):
        store[0].spawn_prims([Prim("ok", pose=(4, 4, 0.2, 0)), Prim("flat", scale=scale)])
    assert_same(snapshot(store.scenes[0]), before)


def test_wall_with_no_length(busy_store):
    store, _ = busy_store
    with pytest.raises(SceneError, match=re.escape(
            "Wall 'w': start and end must differ, got (1.0, 1.0)")):
        store[0].spawn_walls([Wall("w", start=(1, 1), end=(1, 1), height=1.0)])


def test_failed_burst_is_rolled_back_and_named(busy_store):
    """A box burst that no longer compiles is removed; the scene returns to its last good state."""
    store, _ = busy_store
    scene = store.scenes[0]
    before = snapshot(scene)
    store[0].spawn_prims([Prim("fine", pose=(4, 4, 0.2, 0))])
    # sabotage the pending box so that MuJoCo rejects it at the next compile
    scene.spec.body("env_0/fine").first_geom().size = [-1, 1, 1]
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: 'fine' did not compile and was removed")):
        _ = store[0].model
    after = snapshot(scene)
    assert "fine" not in after["names"]
    for key in ("state", "body_pos", "geom_size", "names"):
        assert_same({key: after[key]}, {key: before[key]})


def test_unknown_names_suggest_close_matches(busy_store):
    store, _ = busy_store
    with pytest.raises(KeyError, match=re.escape(
            "unknown entity in env 0 'box7'; did you mean 'box2', 'box1', 'box0'?")):
        store[0].delete(["box7"])
