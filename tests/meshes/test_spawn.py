"""spawn_prims with meshes: visual parts that physics ignores, collision pieces that cameras
and lidar ignore, one bad asset costing one obstacle, assets freed after deletion."""

from __future__ import annotations

import re
import warnings

import mujoco
import numpy as np
import pytest

from arena_gym.assets.shapes import Shape
from arena_gym.errors import AssetWarning, SpawnError
from arena_gym.geometry.groups import GROUP_HIDDEN, GROUP_STATIC
from arena_gym.scene import Prim, PrimEdit, SceneStore
from tests.meshes.shapes import l_prism, write_obj

DINGO = ("robots/dingo/packages/arena_simulation_setup/entities/robots/dingo/urdf/meshes/"
         "diff_chassis.dae")


def _geoms(model: mujoco.MjModel, prefix: str) -> list[int]:
    return [i for i in range(model.ngeom) if model.geom(i).name.startswith(prefix)]


def test_visual_parts_are_seen_but_do_not_collide_and_pieces_collide_unseen(assets):
    store = SceneStore(1)
    assert store[0].spawn_prims([Prim("chassis", pose=(1, 2, 0, 0.5), mesh_path=assets / DINGO)]) \
        == ["chassis"]
    model = store[0].model
    visual = _geoms(model, "env_0/chassis/visual_")
    pieces = _geoms(model, "env_0/chassis/collision_")
    assert len(visual) == 4 and len(pieces) >= 1
    assert set(model.geom_contype[visual]) == {0} and set(model.geom_conaffinity[visual]) == {0}
    assert set(model.geom_group[visual]) == {GROUP_STATIC}
    assert set(model.geom_group[pieces]) == {GROUP_HIDDEN}
    assert set(model.geom_contype[pieces]) == {1}
    colours = sorted(tuple(np.round(model.geom_rgba[g], 4)) for g in visual)
    assert colours[-1] == (1.0, 1.0, 1.0, 1.0) and (1.0, 0.0, 0.0, 1.0) in colours
    assert all(model.mesh_graph.size and n <= 32 for n in _hull_vertex_counts(model, pieces))


def _hull_vertex_counts(model: mujoco.MjModel, geoms: list[int]) -> list[int]:
    counts = []
    for g in geoms:
        mesh = model.geom_dataid[g]
        adr = model.mesh_graphadr[mesh]
        counts.append(int(model.mesh_graph[adr]))  # numvert of the compiled hull
    return counts


def test_a_textured_part_gets_its_material_and_texture(assets):
    store = SceneStore(1)
    store[0].spawn_prims([Prim("desk", mesh_path=assets / "obstacles/Desk/meshes/desk.obj")])
    model = store[0].model
    (visual,) = _geoms(model, "env_0/desk/visual_")
    material = model.geom_matid[visual]
    assert material >= 0
    texture = model.mat_texid[material, mujoco.mjtTextureRole.mjTEXROLE_RGB]
    assert texture >= 0 and max(model.tex_width[texture], model.tex_height[texture]) <= 1024


def test_one_bad_asset_costs_one_obstacle(tmp_path, assets):
    good = write_obj(tmp_path / "l.obj", *l_prism())
    empty = tmp_path / "empty.obj"
    empty.write_text("o nothing\n")
    triangle = write_obj(tmp_path / "triangle.obj", np.eye(3), np.array([[0, 1, 2]]))
    garbage = tmp_path / "garbage.dae"
    garbage.write_bytes(b"\x00\xff not collada")
    store = SceneStore(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spawned = store[0].spawn_prims([
            Prim("good", mesh_path=good),
            Prim("missing", pose=(2, 0, 0, 0), mesh_path=tmp_path / "missing.obj"),
            Prim("empty", pose=(4, 0, 0, 0), mesh_path=empty),
            Prim("garbage", pose=(6, 0, 0, 0), mesh_path=garbage),
            Prim("triangle", pose=(7, 0, 0, 0), mesh_path=triangle),
            Prim("box", pose=(8, 0, 0.5, 0)),
        ])
    assert spawned == ["good", "box"]
    assert list(store[0].entities) == ["good", "box"]
    texts = sorted(str(w.message) for w in caught if w.category is AssetWarning)
    assert texts == sorted([
        f"env 0: prim 'missing' not spawned: visual mesh: missing file "
        f"{str(tmp_path / 'missing.obj')!r}",
        f"env 0: prim 'empty' not spawned: visual mesh: {str(empty)!r} holds no triangles",
        f"env 0: prim 'garbage' not spawned: visual mesh: cannot read {str(garbage)!r}: "
        "DaeMalformedError: XML Parsing Error: not well-formed (invalid token): line 1, column 1",
        f"env 0: prim 'triangle' not spawned: visual mesh: {str(triangle)!r} has 3 vertices; "
        "MuJoCo needs at least 4",
    ])
    assert store[0].model.nbody == 4  # world, ground and the two good obstacles


def test_a_mesh_that_cannot_be_decomposed_stays_visible_and_collides_with_nothing(tmp_path):
    flat = write_obj(tmp_path / "flat.obj",
                     np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.0]]),
                     np.array([[0, 1, 2], [0, 2, 3]]))
    store = SceneStore(1)
    with pytest.warns(AssetWarning, match=re.escape(
            f"env 0: prim 'sign' collides with nothing from collision mesh {str(flat)!r}: "
            f"{str(flat)!r} gives no solid convex piece")):
        store[0].spawn_prims([Prim("sign", mesh_path=flat)])
    model = store[0].model
    assert len(_geoms(model, "env_0/sign/visual_")) == 1
    assert _geoms(model, "env_0/sign/collision_") == []


def test_a_path_outside_the_allowed_roots_refuses_the_request(tmp_path):
    inside = tmp_path / "inside"
    inside.mkdir()
    outside = write_obj(tmp_path / "l.obj", *l_prism())
    store = SceneStore(1, path_roots=[inside])
    with pytest.raises(SpawnError, match=re.escape(
            f"env 0: spawn_prims refused: {str(outside)!r} is outside the allowed roots")):
        store[0].spawn_prims([Prim("l", mesh_path=outside)])
    assert list(store[0].entities) == []


def test_deleting_frees_meshes_materials_and_textures_nothing_uses(assets):
    store = SceneStore(1)
    desk = assets / "obstacles/Desk/meshes/desk.obj"
    store[0].spawn_prims([Prim("a", mesh_path=desk), Prim("b", pose=(2, 0, 0, 0), mesh_path=desk)])
    model = store[0].model
    counts = (model.nmesh, model.nmat, model.ntex)
    assert counts[1:] == (1, 1)  # one material and texture shared by both desks
    store[0].delete(["a"])
    model = store[0].model
    assert (model.nmesh, model.nmat, model.ntex) == counts  # b still uses them
    store[0].delete(["b"])
    model = store[0].model
    assert (model.nmesh, model.nmat, model.ntex) == (0, 0, 0)


def test_edit_scale_switches_the_meshes_to_that_scale(tmp_path):
    path = write_obj(tmp_path / "l.obj", *l_prism(0.5))
    store = SceneStore(1)
    store[0].spawn_prims([Prim("l", pose=(1, 0, 0, 0), mesh_path=path),
                          Prim("box", pose=(3, 0, 0.5, 0))])
    store[0].edit_prims([PrimEdit("l", scale=(2, 2, 2)), PrimEdit("box", scale=(0.2, 0.2, 0.2))])
    model, data = store[0].model, store[0].data
    (visual,) = _geoms(model, "env_0/l/visual_")
    mesh = model.geom_dataid[visual]
    local = model.mesh_vert[model.mesh_vertadr[mesh]:][:model.mesh_vertnum[mesh]]
    world = local @ data.geom_xmat[visual].reshape(3, 3).T + data.geom_xpos[visual]
    np.testing.assert_allclose(world.min(axis=0), [1, 0, 0], atol=1e-5)  # at the prim's pose
    np.testing.assert_allclose(world.max(axis=0), [3, 2, 1], atol=1e-5)  # twice the L
    np.testing.assert_allclose(model.geom("env_0/box/geom").size, [0.1, 0.1, 0.1])
    assert model.nmesh == len(_geoms(model, "env_0/l/"))  # the scale-1 meshes are gone
    np.testing.assert_allclose(data.xpos[model.body("env_0/l").id], [1, 0, 0])


def test_model_shapes_place_boxes_and_meshes_in_the_model_frame(tmp_path):
    path = write_obj(tmp_path / "l.obj", *l_prism(0.5))
    store = SceneStore(1)
    store[0].spawn_prims([Prim(
        "m", pose=(1, 0, 0, 0), scale=(2, 2, 2),
        visuals=(Shape(size=(0.1, 0.1, 0.1), pos=(0, 0, 1), rgba=(0, 1, 0, 1)),
                 Shape(path, pos=(0.5, 0, 0))),
        collisions=(Shape(size=(0.2, 0.2, 0.2), pos=(0, 0, 0.1)),))])
    model, data = store[0].model, store[0].data
    box = model.geom("env_0/m/visual_0").id
    np.testing.assert_allclose(data.geom_xpos[box], [1, 0, 2])
    np.testing.assert_allclose(model.geom_size[box], [0.1, 0.1, 0.1])
    np.testing.assert_allclose(model.geom_rgba[box], [0, 1, 0, 1])
    collision = model.geom("env_0/m/collision_0").id
    np.testing.assert_allclose(model.geom_size[collision], [0.2, 0.2, 0.2])
    assert model.geom_contype[collision] == 1 and model.geom_group[collision] == GROUP_HIDDEN
