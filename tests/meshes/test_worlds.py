"""Mesh obstacles in the env's worlds: scenarios' statics as their models, the random
world's pool drawn from a model list as mocap bodies (episodes never recompile)."""

from __future__ import annotations

import math
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest

import arena_gym  # noqa: F401  (registers ArenaMujoco-v0)
from arena_gym.errors import AssetWarning
from arena_gym.scene import SceneStore
from arena_gym.worlds import load_scenario, spawn_scenario_statics

MODELS = ["Desk", "WoodenChair", "RecTable", "cafe_table"]


def test_scenario_statics_spawn_as_their_models(assets):
    scenario = load_scenario(assets / "worlds/map_empty_small/scenarios/default.json")
    store = SceneStore(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AssetWarning)
        prims = spawn_scenario_statics(store, 0, scenario)  # models from assets/obstacles
    assert [p.name for p in prims] == ["scenario/shelf1", "scenario/shelf2", "scenario/chair1"]
    assert all(p.is_model and p.pose[2] == 0.0 for p in prims)
    model, data = store[0].model, store[0].data
    # the shelf: 7 boxes seen and 7 colliding; the chair: its mesh and its collision pieces
    shelf = [model.geom(i).name for i in range(model.ngeom)
             if model.geom(i).name.startswith("env_0/scenario/shelf1/")]
    assert len(shelf) == 14
    assert model.geom("env_0/scenario/chair1/visual_0").contype == 0
    np.testing.assert_allclose(data.body("env_0/scenario/chair1").xpos, [2.0, 1.0, 0.0])


def test_an_unknown_scenario_model_spawns_the_default_box_with_a_warning(assets, tmp_path):
    folder = tmp_path / "worlds" / "w" / "scenarios"
    folder.mkdir(parents=True)
    path = folder / "s.json"
    path.write_text('{"obstacles": {"static": [{"name": "p", "model": "piano", "pos": [1, 2]}]}}')
    store = SceneStore(1)
    with pytest.warns(AssetWarning, match=re.escape(
            "model 'piano': expected a model folder, an .sdf or a mesh file under [] or an "
            "annotated box, got no model folder or mesh file found; using the default box "
            "(0.5, 0.5, 1.0)")):
        (prim,) = spawn_scenario_statics(store, 0, load_scenario(path))
    assert not prim.is_model and prim.scale == (0.5, 0.5, 1.0) and prim.pose == (1, 2, 0.5, 0)


def _env(assets, **kwargs):
    return gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point",
                        obstacles=MODELS, model_paths=[str(assets / "obstacles")], **kwargs)


def test_the_random_worlds_pool_is_drawn_from_the_model_list_and_never_recompiles(assets):
    envs = _env(assets)
    core = envs.unwrapped.core
    names = core.pool.names
    assert len(names) == 12 and {n.split("/")[1].rsplit("_", 1)[0] for n in names} <= set(MODELS)
    compiles = [core.store[e].compile_count for e in range(2)]
    episodes = core.reset_envs([0, 1])
    for _ in range(3):
        episodes += core.reset_envs([0, 1])
    assert [core.store[e].compile_count for e in range(2)] == compiles
    # a placed model's collision pieces are centred on the footprint the sampler placed
    ep = episodes[-1]
    model, data = core.store[1].model, core.store[1].data
    import mujoco

    mujoco.mj_kinematics(model, data)
    for j, x, y, yaw in ep.boxes:
        name = f"env_1/{names[int(j)]}"
        body = model.body(name).id
        pieces = np.flatnonzero((model.geom_bodyid == body) & (model.geom_contype == 1))
        centre = _xy_centre(model, data, pieces, yaw)
        assert centre == pytest.approx((x, y), abs=0.03), name


def _xy_centre(model, data, geoms, yaw) -> tuple[float, float]:
    """Centre of the geoms' footprint in the body's yawed frame, in world coordinates."""
    points = []
    for g in geoms:
        mesh = model.geom_dataid[g]
        adr, n = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
        local = model.mesh_vert[adr:adr + n]
        points.append(local @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g])
    every = np.vstack(points)[:, :2]
    c, s = math.cos(yaw), math.sin(yaw)
    frame = every @ np.array([[c, -s], [s, c]])  # into the yawed frame
    mid = (frame.min(axis=0) + frame.max(axis=0)) / 2
    return tuple(np.array([[c, -s], [s, c]]) @ mid)


def test_same_seed_same_furnished_episode(assets):
    a, b = _env(assets), _env(assets)
    obs_a, _ = a.reset(seed=3)
    obs_b, _ = b.reset(seed=3)
    actions = np.tile(a.single_action_space.sample(), (2, 1))
    for _ in range(5):
        obs_a, *_ = a.step(actions)
        obs_b, *_ = b.step(actions)
    assert obs_a["scan"].tobytes() == obs_b["scan"].tobytes()


def test_bbox_pool_uses_the_models_boxes(assets):
    envs = _env(assets, optim={"obstacles": "bbox"})
    model = envs.unwrapped.core.store[0].model
    name = envs.unwrapped.core.pool.names[0]
    geoms = np.flatnonzero(model.geom_bodyid == model.body(f"env_0/{name}").id)
    assert len(geoms) == 1 and model.geom_type[geoms[0]] == 6  # one box (mjGEOM_BOX)
