"""The wall grid against MuJoCo's own cast of the same scene, on every shared map."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

from arena_gym.geometry.groups import GROUP_STATIC
from arena_gym.scene import SceneStore, Wall
from arena_gym.worlds.occupancy import free_cells, load_map, walls_from_map
from arena_gym.worlds.raycast import WallGrid
from tests.conftest import ASSETS

MAPS = sorted(p.parent.parent.name for p in ASSETS.glob("worlds/*/map/map.yaml"))


def map_scene(assets, name: str):
    occupancy = load_map(assets / "worlds" / name / "map" / "map.yaml")
    store = SceneStore(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a coarsened map says so; not what this test is about
        store[0].spawn_walls(walls_from_map(occupancy))
    return occupancy, store[0].model, store[0].data


def fans(occupancy, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """`count` origins 0.3 m up in free space, each with 360 level beams and 90 rising ones."""
    rows, cols = np.nonzero(free_cells(occupancy, 0.2))
    pick = rng.choice(len(rows), size=count, replace=False)
    xy = occupancy.cell_centers(rows[pick], cols[pick]) + rng.uniform(-0.04, 0.04, (count, 2))
    origins = np.column_stack([xy, np.full(count, 0.3)])
    az = np.linspace(-np.pi, np.pi, 360, endpoint=False)
    level = np.stack([np.cos(az), np.sin(az), np.zeros_like(az)], -1)
    up = np.stack([np.cos(az[::4]) * 0.9, np.sin(az[::4]) * 0.9, np.full(90, np.sqrt(0.19))], -1)
    directions = np.concatenate([level, up])
    return origins, np.repeat(directions[None], count, axis=0)


def mujoco_cast(model, data, origins, directions):
    """A plain cast of the whole scene's static group: what the grid must reproduce."""
    mask = np.zeros(mujoco.mjNGROUP, np.uint8)
    mask[GROUP_STATIC] = 1
    n, nray = directions.shape[:2]
    dist, geomid = np.zeros((n, nray)), np.zeros((n, nray), np.int32)
    for i in range(n):
        mujoco.mj_multiRay(model, data, origins[i], directions[i].ravel(), mask, 1, -1,
                           geomid[i], dist[i], None, nray, mujoco.mjMAXVAL)
    return dist, geomid


def assert_hits_inside(model, origins, directions, dist, geomid):
    """Each hit point lies on the box the grid names (overlapping boxes tie at a face)."""
    hit = geomid >= 0
    points = origins[:, None, :] + directions * dist[..., None]
    ids = geomid[hit]
    local = points[hit] - model.geom_pos[ids]
    rot = np.array([np.array(model.geom(int(g)).quat) for g in ids])
    yaw = 2 * np.arctan2(rot[:, 3], rot[:, 0])
    c, s = np.cos(yaw), np.sin(yaw)
    u = c * local[:, 0] + s * local[:, 1]
    v = -s * local[:, 0] + c * local[:, 1]
    half = model.geom_size[ids]
    assert np.all(np.abs(u) <= half[:, 0] + 1e-6)
    assert np.all(np.abs(v) <= half[:, 1] + 1e-6)


@pytest.mark.parametrize("cutoff", [3.5, np.inf])
@pytest.mark.parametrize("name", MAPS)
def test_equals_a_mujoco_cast_of_the_whole_scene(assets, name, cutoff):
    occupancy, model, data = map_scene(assets, name)
    origins, directions = fans(occupancy, 6, np.random.default_rng(7))
    grid = WallGrid.from_model(model, min_walls=1)
    assert len(grid) == model.ngeom - 1  # every wall, not the ground
    dist, geomid = grid.cast(origins, directions, cutoff=cutoff)
    ref, ref_id = mujoco_cast(model, data, origins, directions)
    near = (ref_id >= 0) & (ref <= cutoff)  # only walls stand above the ground here
    assert near.sum() >= 100  # the fans do see walls: the comparison means something
    np.testing.assert_allclose(dist[near], ref[near], rtol=0, atol=1e-9)
    if np.isinf(cutoff):
        np.testing.assert_array_equal(dist[~near], -1.0)
    else:  # beyond the cutoff the walk may stop: a miss, or the true hit
        far = ~near & (dist >= 0)
        np.testing.assert_allclose(dist[far], ref[far], rtol=0, atol=1e-9)
    assert_hits_inside(model, origins, directions, dist, geomid)
    assert np.mean(geomid[near] == ref_id[near]) > 0.99  # all but ties between overlapping boxes


@pytest.mark.parametrize("cutoff", [3.5, np.inf])  # bearing-culled fans; the grid walk
def test_rays_from_above_and_from_inside_read_what_mujoco_reads(cutoff):
    store = SceneStore(1)
    walls = [Wall(f"w{k}", (k * 0.5, 0.0), (k * 0.5, 2.0), height=1.0, thickness=0.2)
             for k in range(5)] + [Wall("long", (-1.0, 3.0), (4.0, 3.0), height=1.0)]
    store[0].spawn_walls(walls)
    model, data = store[0].model, store[0].data
    # above, inside, between
    origins = np.array([[-0.5, 1.0, 1.5], [0.0, 1.0, 0.5], [1.7, 2.5, 0.2]])
    rng = np.random.default_rng(3)
    directions = rng.normal(size=(3, 400, 3))
    directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
    grid = WallGrid.from_model(model, min_walls=1)
    dist, _ = grid.cast(origins, directions, cutoff=cutoff)
    ref, ref_id = mujoco_cast(model, data, origins, directions)
    walls_hit = (ref_id != model.geom("ground").id) & (ref <= cutoff)
    ground = ~walls_hit  # the grid knows walls only: compare where MuJoCo hit a wall first
    np.testing.assert_allclose(dist[walls_hit], ref[walls_hit], rtol=0, atol=1e-9)
    assert np.all((dist[ground] < 0) | (dist[ground] >= ref[ground] - 1e-9))
    assert walls_hit[0].sum() > 50 and walls_hit[1].sum() > 300  # tops from above; inside


def test_ids_are_the_scene_geoms_and_deleted_walls_are_gone():
    store = SceneStore(1)
    store[0].spawn_walls([Wall("near", (2.0, -1.0), (2.0, 1.0)),
                          Wall("far", (9.0, -1.0), (9.0, 1.0))])
    model = store[0].model
    grid = WallGrid.from_model(model, min_walls=1)
    dist, geomid = grid.cast(np.array([[0.0, 0.0, 0.3]]), np.array([[[1.0, 0, 0], [-1.0, 0, 0]]]))
    assert geomid.tolist() == [[model.geom("env_0/near/geom").id, -1]]
    np.testing.assert_allclose(dist, [[1.95, -1.0]], atol=1e-12)  # the face, 5 cm before the line
    store[0].delete(["near"])
    model = store[0].model
    dist, geomid = WallGrid.from_model(model, min_walls=1).cast(
        np.array([[0.0, 0.0, 0.3]]), np.array([[[1.0, 0, 0]]]))
    assert (dist.tolist(), geomid.tolist()) == ([[8.95]], [[model.geom("env_0/far/geom").id]])
    assert WallGrid.from_model(model) is None  # one wall: MuJoCo's cast is as fast
