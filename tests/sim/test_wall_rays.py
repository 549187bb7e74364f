"""Simulator.cast_rays on map worlds: the map's walls, boxes and floor cast by GeomRays (each
ray against the walls near it), the robots by MuJoCo on copies of the scenes without them; the
result equals a plain MuJoCo cast of the whole scene."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

from arena_gym.geometry.groups import GROUP_SELF, LIDAR_GROUPS
from arena_gym.scene import Prim, SceneStore
from arena_gym.sensors.lidar import geomgroup_mask
from arena_gym.sim import Simulator
from arena_gym.worlds.map_cover import walls_from_map
from arena_gym.worlds.occupancy import free_cells, load_map
from tests.conftest import ASSETS, spawn

MAPS = sorted(p.parent.parent.name for p in ASSETS.glob("worlds/*/map/map.yaml"))


def map_world(assets, name: str, num_envs: int):
    """Robots in free space of a shared map, each with two boxes about 0.6 m and 1 m away."""
    occupancy = load_map(assets / "worlds" / name / "map" / "map.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a coarsened map says so; not what this test is about
        walls = walls_from_map(occupancy)
    rows, cols = np.nonzero(free_cells(occupancy, 1.2))
    rng = np.random.default_rng(11)
    xy = occupancy.cell_centers(*(a[rng.choice(len(rows), num_envs)] for a in (rows, cols)))
    # off the cell centres: from a centre, 45-degree beams graze wall corners exactly, where
    # even MuJoCo's own answer is a matter of round-off
    xy += rng.uniform(-0.04, 0.04, xy.shape)
    store = SceneStore(num_envs, timestep=0.005)
    for env in range(num_envs):
        x, y = xy[env]
        spawn(store, env, assets, "burger", pose=(x, y, 0.3 * env))
        store[env].spawn_walls(walls)
        store[env].spawn_prims([Prim("box", pose=(x + 0.6, y, 0.2, 0.4), scale=(0.2, 0.3, 0.4)),
                                Prim("pole", pose=(x - 0.7, y + 0.7, 0.3, 0), scale=(0.1, 0.1, 0.6),
                                     movable=True)])
    return store, Simulator(store), xy


def fans(store, xy, beams: int, rings: tuple[float, ...]):
    n = store.num_envs
    az = np.linspace(-np.pi, np.pi, beams, endpoint=False)
    fan = np.concatenate([np.stack([np.cos(az) * np.cos(e), np.sin(az) * np.cos(e),
                                    np.full(beams, np.sin(e))], -1) for e in rings])
    origins = np.column_stack([xy, np.full(n, 0.25)])
    return origins, np.repeat(fan[None], n, axis=0)


def plain_cast(store, origins, directions, mask, exclude):
    n, nray = directions.shape[:2]
    dist, geomid = np.zeros((n, nray)), np.zeros((n, nray), np.int32)
    for env in range(n):
        model, data = store[env].model, store[env].data
        mujoco.mj_kinematics(model, data)
        mujoco.mj_multiRay(model, data, origins[env], directions[env].ravel(), mask, 1,
                           int(exclude[env]), geomid[env], dist[env], None, nray, mujoco.mjMAXVAL)
    return dist, geomid


@pytest.mark.parametrize("name", MAPS)
def test_cast_rays_equals_a_plain_cast_on_every_shared_map(assets, name):
    store, sim, xy = map_world(assets, name, 3)
    sim.set_cmd_vel(0, "burger", 0.2, 0.5)
    sim.step(200)  # the robot moved: the wall-less copies must follow the state
    origins, directions = fans(store, xy, 360, (0.0, 0.15, -0.1))
    mask = geomgroup_mask(LIDAR_GROUPS)
    exclude = np.array([store[e].model.body(store[e].robot("burger").root_body).id
                        for e in range(store.num_envs)])
    dist, geomid = sim.cast_rays(origins, directions, mask, exclude)
    assert [kind for kind, _ in sim.groups()] == ["batch"]
    prims = sim._groups[0]._prims  # GeomRays took every wall
    walls = [g for g in range(store[0].model.ngeom)
             if store[0].model.geom(g).name.startswith("env_0/map/wall_")]
    assert set(walls) <= set(prims.handled[0].tolist())
    ref, ref_id = plain_cast(store, origins, directions, mask, exclude)
    np.testing.assert_allclose(dist, ref, rtol=0, atol=1e-9)
    same = geomid == ref_id
    # where ids differ, overlapping walls tie at one face: both are walls at that distance
    assert same.mean() > 0.99
    assert all(store[0].model.geom(int(g)).name.startswith("env_0/map/wall_")
               for g in geomid[~same])
    seen = {store[e].model.geom(int(g)).name.split("/", 1)[-1]
            for e in range(store.num_envs) for g in np.unique(geomid[e]) if g >= 0}
    assert {"box/geom", "pole/geom", "ground"} <= seen  # not only walls
    assert sum(name.startswith("map/wall_") for name in seen) >= 3


def test_a_cutoff_only_turns_far_hits_into_misses(assets):
    store, sim, xy = map_world(assets, "hospital", 1)  # one env: a batch of one
    origins, directions = fans(store, xy, 720, (0.0,))
    full, full_id = sim.cast_rays(origins, directions)
    near, near_id = sim.cast_rays(origins, directions, cutoff=3.5)
    assert [kind for kind, _ in sim.groups()] == ["batch"]
    close = (full >= 0) & (full <= 3.5)
    # short and long casts take different routes (a cutoff culls by square): equal to round-off
    np.testing.assert_allclose(near[close], full[close], rtol=0, atol=1e-9)
    assert np.mean(near_id[close] == full_id[close]) > 0.99  # all but ties of overlapping walls
    assert np.all(near[~close] == -1)
    ref, _ = plain_cast(store, origins, directions, None, np.array([-1]))
    np.testing.assert_allclose(full, ref, rtol=0, atol=1e-9)


def test_geom_groups_switched_on_the_scene_hold_for_the_cast(assets):
    """A lidar hides its carrier by filing its geoms into another group for the cast."""
    store, sim, xy = map_world(assets, "hospital", 2)
    origins, directions = fans(store, xy, 360, (0.0,))
    mask = geomgroup_mask(LIDAR_GROUPS)
    _, before_id = sim.cast_rays(origins, directions, mask)
    model = store[0].model
    box = model.geom("env_0/box/geom").id
    assert (before_id[0] == box).sum() > 10
    model.geom_group[box] = GROUP_SELF
    after, after_id = sim.cast_rays(origins, directions, mask)
    assert not (after_id[0] == box).any()
    ref, _ = plain_cast(store, origins, directions, mask, np.array([-1, -1]))
    np.testing.assert_allclose(after, ref, rtol=0, atol=1e-9)
