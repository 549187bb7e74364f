"""Simulator.cast_rays on worlds with mesh obstacles (the shared models): the meshes tested
apart (sim/mesh_rays.py), the rest cast by MuJoCo with them hidden; the result equals a plain
MuJoCo `Batch.ray` of the whole scene, distances to 1e-9 and geom ids, within the cutoff."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from arena_gym.assets.obstacle_models import load_model
from arena_gym.geometry.groups import GROUP_SELF
from arena_gym.scene import SceneStore
from arena_gym.scene.requests import Prim
from arena_gym.sensors.lidar import NO_ROBOT_MASK, geomgroup_mask
from arena_gym.sim import Simulator
from tests.conftest import spawn

MODELS = ("Desk", "RecTable", "SquareShelf", "WoodenChair", "cafe_table", "office_chair",
          "pallet_jack_1", "shelf", "warehouse_shelf")
CUTOFF = 3.5
MASK = NO_ROBOT_MASK  # a lidar on the env's only robot: obstacles, walls, floor


@pytest.fixture(scope="module")
def furnished(assets):
    """Three envs: the burger among every shared model on a ring 1.3-2.6 m around it, turned,
    every other one movable (mocap), the others welded to the world; the layout differs per
    env. Env 1's first movable model stands 0.3 m up, env 2's leans 10 degrees."""
    n = 3
    rng = np.random.default_rng(5)
    store = SceneStore(n, timestep=0.005)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # models falling back to boxes say so
        models = [load_model(name, [assets / "obstacles"]) for name in MODELS]
        for env in range(n):
            spawn(store, env, assets, "burger", pose=(0.0, 0.0, 0.0))
            angles = rng.permutation(len(MODELS)) * 2 * math.pi / len(MODELS)
            radius = rng.uniform(1.3, 2.6, len(MODELS))
            store[env].spawn_prims([
                Prim.of_model(m, f"m{i}", movable=i % 2 == 0,
                              pose=(r * math.cos(a), r * math.sin(a), rng.uniform(-3, 3)))
                for i, (m, a, r) in enumerate(zip(models, angles, radius, strict=True))])
    sim = Simulator(store)
    assert [kind for kind, _ in sim.groups()] == ["batch"]
    sim.state(1, "mocap_pos")[0, 2] += 0.3
    lean = math.radians(10) / 2
    sim.state(2, "mocap_quat")[0] = (math.cos(lean), math.sin(lean), 0.0, 0.0)
    sim.set_cmd_vel(0, "burger", 0.2, 0.6)
    sim.step(100)  # the robot moved; the batch holds the state
    return store, sim


def fan(n: int, origins_z: float, rings: tuple[float, ...], beams: int = 720, turn=0.0):
    az = np.linspace(-np.pi, np.pi, beams, endpoint=False) + turn
    ring = np.concatenate([np.stack([np.cos(az) * np.cos(e), np.sin(az) * np.cos(e),
                                     np.full(beams, np.sin(e))], -1) for e in rings])
    return np.repeat(ring[None], n, axis=0)


def origins(store, sim, height: float) -> np.ndarray:
    qpos = sim.gather("qpos", np.arange(3))  # the burger's free joint: x, y, z first
    return np.column_stack([qpos[:, :2], np.full(store.num_envs, height)])


def plain(sim, pnt, vecs, mask):
    batch = sim.stepping_groups()[0].batch
    return batch.ray(pnt[:, None, :], vecs, geomgroup=mask, flg_static=True)


def assert_as_plain(sim, pnt, vecs, mask, cutoff=CUTOFF) -> tuple[np.ndarray, np.ndarray]:
    dist, geomid = sim.cast_rays(pnt, vecs, mask, cutoff=cutoff)
    ref, ref_id = plain(sim, pnt, vecs, mask)
    near = (ref >= 0) & (ref <= cutoff)
    np.testing.assert_allclose(dist[near], ref[near], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(geomid[near], ref_id[near])
    # beyond the cutoff a hit may read as a miss, never as a hit within it
    assert ((dist[~near] < 0) | (dist[~near] > cutoff)).all()
    return dist, geomid


def mesh_hits(store, geomid) -> set[str]:
    names = set()
    for env in range(store.num_envs):
        model = store[env].model
        for g in np.unique(geomid[env]):
            if g >= 0 and model.geom_type[g] == 7:  # mjGEOM_MESH
                names.add(model.geom(int(g)).name.split("/", 1)[1])
    return names


def test_a_planar_lidar_fan_sees_what_a_plain_cast_sees(furnished):
    store, sim = furnished
    pnt = origins(store, sim, 0.17)
    for turn in (0.0, 0.0037):  # two fans: rays between the first fan's beams too
        dist, geomid = assert_as_plain(sim, pnt, fan(3, 0.17, (0.0,), turn=turn), MASK)
    meshes = sim.stepping_groups()[0]._meshes[MASK.tobytes()]
    assert meshes is not None and meshes.cells is not None  # the meshes went apart
    models = {name.split("/")[0] for name in mesh_hits(store, geomid)}
    assert len(models) >= 6  # the legs and sides of most models, hit as meshes


def test_a_tilted_fan_and_a_lifted_or_leaning_model_stay_exact(furnished):
    store, sim = furnished
    pnt = origins(store, sim, 0.3)
    dist, geomid = assert_as_plain(sim, pnt, fan(3, 0.3, (0.0, 0.15, -0.1)), MASK)
    model = store[2].model
    leaning = {model.geom_bodyid[g] for g in np.unique(geomid[2]) if g >= 0
               and model.body_mocapid[model.geom_bodyid[g]] == 0}
    assert leaning  # the leaning model is hit, through the whole-mesh test


def test_any_cutoff_and_a_mask_seeing_the_hidden_pieces(furnished):
    store, sim = furnished
    pnt = origins(store, sim, 0.17)
    vecs = fan(3, 0.17, (0.0, 0.05))
    assert_as_plain(sim, pnt, vecs, MASK, cutoff=1.5)
    assert_as_plain(sim, pnt, 2.0 * vecs, MASK, cutoff=1.5)  # distances in units of the vectors
    every_but_self = geomgroup_mask((0, 1, 2, 3, 4))  # pieces, robot meshes too
    assert_as_plain(sim, pnt, vecs, every_but_self)


def test_a_mesh_made_transparent_or_filed_away_goes_unseen_as_by_mujoco(furnished):
    """mj_ray skips geoms whose colour (or material) has alpha 0, and groups the mask leaves
    out; all switched in place on an env's own model, as the lidar switches its carrier."""
    store, sim = furnished
    pnt = origins(store, sim, 0.17)
    vecs = fan(3, 0.17, (0.0,))
    _, before = sim.cast_rays(pnt, vecs, MASK, cutoff=CUTOFF)
    model = store[0].model
    meshes = [int(g) for g in np.unique(before[0]) if g >= 0 and model.geom_type[g] == 7]
    plain_colour = [g for g in meshes if model.geom_matid[g] < 0]
    textured = [g for g in meshes if model.geom_matid[g] >= 0]
    assert plain_colour and textured
    faded, material = plain_colour[0], int(model.geom_matid[textured[0]])
    filed = next(g for g in meshes if g != faded and model.geom_matid[g] != material)
    tinted = np.flatnonzero(model.geom_matid == material)  # every geom of that material
    kept = model.geom_rgba[faded].copy(), model.mat_rgba[material].copy(), model.geom_group[filed]
    try:
        model.geom_rgba[faded, 3] = 0.0
        model.mat_rgba[material, 3] = 0.0
        model.geom_group[filed] = GROUP_SELF
        _, after = assert_as_plain(sim, pnt, vecs, MASK)
        assert not np.isin(after[0], [faded, filed, *tinted]).any()
    finally:
        model.geom_rgba[faded], model.mat_rgba[material], model.geom_group[filed] = kept
    _, again = assert_as_plain(sim, pnt, vecs, MASK)
    assert np.array_equal(again, before)


def test_a_skipped_geom_switched_into_a_seen_group_is_cast_again(furnished):
    """Casts go to copies of the scenes without the geoms the mask skips; one of those
    switched into a seen group in place (a collision piece made visible) must be seen."""
    store, sim = furnished
    pnt = origins(store, sim, 0.17)
    vecs = fan(3, 0.17, (0.0,))
    model = store[0].model
    pieces = np.flatnonzero((model.geom_group == 4) & (model.geom_type == 7))
    kept = model.geom_group[pieces].copy()
    try:
        model.geom_group[pieces] = 0
        _, geomid = assert_as_plain(sim, pnt, vecs, MASK)
        assert np.isin(geomid[0], pieces).any()
    finally:
        model.geom_group[pieces] = kept
    _, geomid = assert_as_plain(sim, pnt, vecs, MASK)
    assert not np.isin(geomid[0], pieces).any()


def test_only_leaning_meshes_are_tested_whole(assets):
    """No mesh upright: no band is built from them, every mesh is tested whole."""
    store = SceneStore(2, timestep=0.005)
    table = load_model("RecTable", [assets / "obstacles"])
    for env in range(2):
        store[env].spawn_prims([Prim.of_model(table, "t", pose=(1.2 + 0.3 * env, 0.0, 0.4),
                                              movable=True)])
    sim = Simulator(store)
    lean = math.radians(8) / 2
    for env in range(2):
        sim.state(env, "mocap_quat")[0] = (math.cos(lean), 0.0, math.sin(lean), 0.0)
    pnt = np.array([[0.0, 0.0, 0.3]] * 2)
    _, geomid = assert_as_plain(sim, pnt, fan(2, 0.3, (0.0, 0.1)), MASK)
    assert (mesh_hits(store, geomid) >= {"t/visual_0"})
