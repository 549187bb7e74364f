"""Obstacle models from SDF folders: every shared model loads; a table is a table (things
rest on its top, fall between its legs, rays pass between its legs, robots drive under it)."""

from __future__ import annotations

import re
import warnings
from dataclasses import replace

import mujoco
import numpy as np
import pytest

from arena_gym.assets.obstacle_models import BOXES, ModelError, load_model
from arena_gym.errors import AssetWarning
from arena_gym.geometry.groups import GROUP_HIDDEN, GROUP_STATIC
from arena_gym.scene import SceneStore
from arena_gym.scene.requests import Prim
from arena_gym.sensors.lidar import LIDAR_MASK
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf

MODELS = ("Desk", "RecTable", "SquareShelf", "WoodenChair", "cafe_table", "office_chair",
          "pallet_jack_1", "shelf", "warehouse_shelf")
TEXTURED = {"Desk": 1, "SquareShelf": 1, "WoodenChair": 1, "office_chair": 1,
            "warehouse_shelf": 2, "pallet_jack_1": 2}


def _geoms(model: mujoco.MjModel, prefix: str) -> list[int]:
    return [i for i in range(model.ngeom) if model.geom(i).name.startswith(prefix)]


@pytest.mark.parametrize("name", MODELS)
def test_every_shared_model_loads_with_visual_parts_and_collision_pieces(assets, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", AssetWarning)  # nothing of a shared model is dropped
        model = load_model(name, [assets / "obstacles"])
        store = SceneStore(1)
        assert store[0].spawn_prims([Prim.of_model(model, name, pose=(1.0, 2.0, 0.5))]) == [name]
    compiled = store[0].model
    visual = _geoms(compiled, f"env_0/{name}/visual_")
    pieces = _geoms(compiled, f"env_0/{name}/collision_")
    assert visual and pieces
    assert set(compiled.geom_contype[visual]) == {0}
    assert set(compiled.geom_group[visual]) == {GROUP_STATIC}
    assert set(compiled.geom_group[pieces]) == {GROUP_HIDDEN}
    textured = [g for g in visual if compiled.geom_matid[g] >= 0]
    assert len(textured) == TEXTURED.get(name, 0)
    # the collision pieces fill the model's annotated or measured box, standing on the floor
    data = store[0].data
    lo, hi = _world_bounds(compiled, data, pieces)
    assert lo[2] == pytest.approx(0.0, abs=0.02)
    # CoACD's pieces may stand out of the mesh by a little (up to 2.2 cm seen)
    assert hi[2] - lo[2] == pytest.approx(model.box.size[2], abs=0.03)


def _world_bounds(model: mujoco.MjModel, data: mujoco.MjData, geoms: list[int]):
    """(lo, hi) world corners around geoms: mesh vertices, box corners."""
    corners = []
    for g in geoms:
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            mesh = model.geom_dataid[g]
            adr, n = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
            local = model.mesh_vert[adr:adr + n]
        else:
            local = model.geom_size[g] * np.array(
                [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        corners.append(local @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g])
    every = np.vstack(corners)
    return every.min(axis=0), every.max(axis=0)


def test_a_model_without_meshes_falls_back_to_its_annotated_box(tmp_path):
    folder = tmp_path / "Desk"
    folder.mkdir()
    (folder / "model.sdf").write_text(
        "<sdf version='1.6'><model name='Desk'><link name='l'/></model></sdf>")
    with pytest.warns(AssetWarning, match=re.escape(
            f"model 'Desk': {folder / 'model.sdf'} declares no usable visual or collision; "
            f"using its bounding box {BOXES['Desk'].size}")):
        model = load_model("Desk", [tmp_path])
    prim = Prim.of_model(model, "d", pose=(1.0, 0.0, 0.0))
    assert not prim.is_model and prim.scale == BOXES["Desk"].size
    assert prim.pose == pytest.approx((1.0 - 0.014, 0.0, 0.552 / 2, 0.0))


def test_a_missing_mesh_drops_that_shape_and_names_it(tmp_path, assets):
    folder = tmp_path / "Stool"
    (folder / "meshes").mkdir(parents=True)
    (folder / "model.sdf").write_text(
        "<sdf version='1.6'><model name='Stool'><link name='l'>"
        "<visual name='v'><geometry><mesh><uri>model://Stool/meshes/gone.obj</uri></mesh>"
        "</geometry></visual>"
        "<collision name='c'><geometry><box><size>0.4 0.4 0.5</size></box></geometry>"
        "<pose>0 0 0.25 0 0 0</pose></collision></link></model></sdf>")
    with pytest.warns(AssetWarning, match=re.escape(
            "model 'Stool': visual 'v' dropped: missing file 'meshes/gone.obj' in model "
            "'Stool'")):
        model = load_model("Stool", [tmp_path])
    assert model.visuals == () and len(model.collisions) == 1
    assert model.box.size == pytest.approx((0.4, 0.4, 0.5))


def test_unknown_model_without_a_box_is_an_error(tmp_path):
    with pytest.raises(ModelError, match=re.escape(
            f"model 'piano': expected a model folder, an .sdf or a mesh file under "
            f"[{str(tmp_path)!r}] or an annotated box, got no model folder or mesh file found")):
        load_model("piano", [tmp_path])


def test_bbox_prim_is_the_models_box(assets):
    model = load_model("RecTable", [assets / "obstacles"])
    prim = Prim.of_model(model, "t", pose=(2.0, 1.0, 0.0), bbox=True)
    assert not prim.is_model and prim.scale == (1.8, 1.0, 0.75)
    assert prim.pose == pytest.approx((2.0, 1.0, 0.375, 0.0))


# ------------------------------------------------------------------ the table
@pytest.fixture()
def table(assets) -> SceneStore:
    store = SceneStore(1)
    store[0].spawn_prims([Prim.of_model(load_model("RecTable", [assets / "obstacles"]), "table")])
    return store


def _drop_ball(store: SceneStore, xyz: tuple[float, float, float], seconds: float = 1.5) -> float:
    scene = store.scene(0)
    body = scene.spec.worldbody.add_body(name="ball", pos=list(xyz))
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.05], mass=0.2)
    scene.compile()
    model, data = store[0].model, store[0].data
    for _ in range(int(seconds / model.opt.timestep)):
        mujoco.mj_step(model, data)
    return float(data.body("ball").xpos[2])


def test_a_ball_dropped_above_the_table_rests_on_its_top(table):
    assert _drop_ball(table, (0.0, 0.0, 1.0)) == pytest.approx(0.75 + 0.05, abs=0.005)


def test_a_ball_dropped_between_the_legs_falls_to_the_floor(table):
    assert _drop_ball(table, (0.0, 0.0, 0.6)) == pytest.approx(0.05, abs=0.005)


def test_a_ray_at_leg_height_passes_between_the_legs_and_hits_a_leg(table):
    sim = Simulator(table)
    along_x = np.array([[[1.0, 0.0, 0.0]]])
    # along +x between the legs (y = 0), then along the legs' centre line (y = 0.385)
    between, _ = sim.cast_rays(np.array([[-3.0, 0.0, 0.3]]), along_x, geomgroup=LIDAR_MASK)
    assert between[0, 0] == -1  # nothing between the legs (the room is empty)
    at_leg, geom = sim.cast_rays(np.array([[-3.0, 0.385, 0.3]]), along_x, geomgroup=LIDAR_MASK)
    assert table[0].model.geom(geom[0, 0]).name == "env_0/table/visual_0"
    # the visual leg is splayed: its outer face runs from x = -0.768 at the foot to -0.716 at
    # the top (RecTable.obj), so at 0.3 m it is 2.23-2.28 m from the origin
    assert 2.23 < at_leg[0, 0] < 2.28


@pytest.mark.parametrize("height, passes", [(1.0, True), (0.2, False)])
def test_the_robot_drives_under_a_table_high_enough_for_it(assets, height, passes):
    """arena_diffbot is 0.15 m tall: under the 0.75 m table it drives through between the
    legs; the same table squashed to 0.15 m (z scale 0.2) stops it at the table's edge."""
    store = SceneStore(1, timestep=0.005)
    store[0].spawn_urdf("bot", builtin_robot_urdf(), pose=(-2.0, 0.0, 0.0))
    prim = Prim.of_model(load_model("RecTable", [assets / "obstacles"]), "table")
    store[0].spawn_prims([replace(prim, scale=(1.0, 1.0, height))])
    sim = Simulator(store)
    sim.set_cmd_vel(0, "bot", 0.2, 0.0)
    sim.step(int(20 / 0.005))
    x = store[0].get_pose("bot")[0][0]
    if passes:
        assert x > 1.5  # 3.5 m driven: under the table and out the other side
    else:
        assert -1.1 < x < -0.9  # stopped at the edge (x = -0.9) by its radius (0.075 m)


def test_optim_obstacles_takes_mesh_or_bbox():
    from arena_gym.config import ConfigError, load_config

    assert load_config(optim={"obstacles": "bbox"}).optim.obstacles == "bbox"
    with pytest.raises(ConfigError, match=re.escape(
            "optim.obstacles: expected 'mesh' or 'bbox', got 'boxes'")):
        load_config(optim={"obstacles": "boxes"})
