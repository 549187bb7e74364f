"""Simulator.cast_rays over every env of a batch group (one prepared Batch.ray call): the
distances and geoms a plain MuJoCo cast finds, excluded bodies passed through, bad input
refused with Batch.ray's own error."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

from arena_gym.scene import Prim, SceneStore
from arena_gym.sim import Simulator


@pytest.fixture
def two_rooms():
    """Two envs, each a box 1 m and a box 2 m ahead along +x (the far one 0.5 m further in
    env 1), cast from z = 0.2."""
    store = SceneStore(2, timestep=0.005)
    for env in range(2):
        store[env].spawn_prims([Prim("near", pose=(1.0, 0.0, 0.2, 0.0), scale=(0.2, 0.4, 0.4)),
                                Prim("far", pose=(2.0 + 0.5 * env, 0.0, 0.2, 0.0),
                                     scale=(0.2, 0.4, 0.4))])
    sim = Simulator(store)
    assert sim.groups() == [("batch", [0, 1])]
    return store, sim


def _plain(store: SceneStore, env: int, origin, direction, exclude: int) -> tuple[float, int]:
    model, data = store[env].model, store[env].data
    mujoco.mj_kinematics(model, data)
    geom = np.array([-1], dtype=np.int32)
    dist = mujoco.mj_ray(model, data, origin, direction, None, 1, exclude, geom)
    return dist, int(geom[0])


def test_every_env_in_one_call_equals_a_plain_cast_and_honours_exclusions(two_rooms):
    store, sim = two_rooms
    origins = np.array([[0.0, 0.0, 0.2], [0.0, 0.05, 0.2]])
    fan = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    directions = np.repeat(fan[None], 2, axis=0)
    for _ in range(2):  # the second call reuses what the first prepared
        dist, geomid = sim.cast_rays(origins, directions)
        assert dist[:, 0] == pytest.approx([0.9, 0.9])  # the near box's face at x = 0.9
        np.testing.assert_array_equal(dist[:, 1], [-1.0, -1.0])  # nothing to the side
        for env in range(2):
            assert (dist[env, 0], geomid[env, 0]) == _plain(store, env, origins[env], fan[0], -1)
    near = np.array([store[e].model.body(f"env_{e}/near").id for e in range(2)])
    dist, geomid = sim.cast_rays(origins, directions, bodyexclude=near)
    assert dist[:, 0] == pytest.approx([1.9, 2.4])  # through to each env's far box
    for env in range(2):
        assert (dist[env, 0], geomid[env, 0]) == _plain(store, env, origins[env], fan[0],
                                                      int(near[env]))


def test_a_body_id_out_of_range_is_refused_and_the_next_cast_works(two_rooms):
    _, sim = two_rooms
    origins = np.zeros((2, 3)) + [0.0, 0.0, 0.2]
    directions = np.repeat(np.array([[[1.0, 0.0, 0.0]]]), 2, axis=0)
    nbody = sim.store[0].model.nbody
    with pytest.raises(ValueError, match=re.escape(f"bodyexclude must be in [-1, {nbody})")):
        sim.cast_rays(origins, directions, bodyexclude=np.array([0, nbody]))
    dist, _ = sim.cast_rays(origins, directions)
    assert dist[:, 0] == pytest.approx([0.9, 0.9])
