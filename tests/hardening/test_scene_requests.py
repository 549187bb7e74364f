"""Every scene request is all-or-nothing: name clashes with any body, geom or site of the env
are a SpawnError naming both sides, and nothing of the request stays; sizes beyond 1 km are
refused before anything is added."""

from __future__ import annotations

import re

import pytest

from arena_gym.scene import Prim, SceneError, SceneStore, SpawnError, Wall
from tests.conftest import assert_same, snapshot, spawn


@pytest.fixture
def store(assets):
    store = SceneStore(2)
    for env in range(2):
        spawn(store, env, assets, "burger")
        store[env].spawn_prims([Prim("box0", pose=(2, 0, 0.2, 0), scale=(0.4, 0.4, 0.4))])
        _ = store[env].model
    return store


def test_a_prim_named_like_a_robot_body_is_refused_and_nothing_stays(store):
    before = [snapshot(s) for s in store.scenes]
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: prim 'burger/base_link' would add body 'env_0/burger/base_link', which "
            "clashes with the body 'env_0/burger/base_link' of robot 'burger'")):
        store[0].spawn_prims([Prim("ok", pose=(3, 3, 0.2, 0)), Prim("burger/base_link")])
    for scene, snap in zip(store.scenes, before, strict=True):
        assert_same(snapshot(scene), snap)
    store[0].reset_world()  # no unnamed body survives: the world is empty again
    assert [b.name for b in store.scenes[0].spec.bodies] == ["world", "ground"]


def test_a_wall_clashing_with_a_prim_name_is_refused(store):
    store[0].spawn_prims([Prim("door/geom", pose=(3, 3, 0.2, 0))])
    _ = store[0].model
    before = snapshot(store.scenes[0])
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: wall 'door' would add geom 'env_0/door/geom', which clashes with the "
            "body 'env_0/door/geom' of prim 'door/geom'")):
        store[0].spawn_walls([Wall("door", start=(0, 3), end=(1, 3))])  # a geom of the world
    assert_same(snapshot(store.scenes[0]), before)


def test_a_robot_whose_bodies_clash_with_a_prim_is_refused(assets):
    store = SceneStore(1)
    store[0].spawn_prims([Prim("burger/base_link", pose=(3, 3, 0.2, 0))])
    _ = store[0].model
    before = snapshot(store.scenes[0])
    with pytest.raises(SpawnError, match=re.escape(
            "env 0: robot 'burger' would add body 'env_0/burger/base_link', which clashes with "
            "the body 'env_0/burger/base_link' of prim 'burger/base_link'")):
        spawn(store, 0, assets, "burger")
    assert_same(snapshot(store.scenes[0]), before)


@pytest.mark.parametrize("make, message", [
    (lambda: Prim("huge", scale=(1e30, 1, 1)),
     "Prim 'huge' scale: expected sizes <= 1000 m, got (1e+30, 1.0, 1.0)"),
    (lambda: Prim("wide", scale=(1, 1000.5, 1)),
     "Prim 'wide' scale: expected sizes <= 1000 m, got (1.0, 1000.5, 1.0)"),
    (lambda: Wall("long", start=(0, 0), end=(2000, 0)),
     "Wall 'long': expected a length <= 1000 m, got 2000"),
])
def test_sizes_beyond_a_kilometre_are_refused(store, make, message):
    before = snapshot(store.scenes[0])
    with pytest.raises(SceneError, match=re.escape(message)):
        store[0].spawn_prims([Prim("fine", pose=(4, 4, 0.2, 0)), make()])
    assert_same(snapshot(store.scenes[0]), before)
