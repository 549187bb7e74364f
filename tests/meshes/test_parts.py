"""Mesh parts: per-material OBJ parts with colours and textures, cached on disk."""

from __future__ import annotations

import re

import pytest

from arena_gym.assets import mesh_cache
from arena_gym.assets.mesh_parts import MeshPart, mesh_parts
from arena_gym.assets.meshes import MeshUnavailable
from tests.meshes.shapes import box, write_obj

DINGO = ("robots/dingo/packages/arena_simulation_setup/entities/robots/dingo/urdf/meshes/"
         "diff_chassis.dae")


def test_plain_stl_and_obj_are_read_by_mujoco_itself_with_the_geoms_colour(assets, tmp_path):
    stl = assets / "robots/dingo/packages/arena_simulation_setup/entities/robots/dingo/urdf/" \
        "meshes/wheel.stl"
    obj = write_obj(tmp_path / "plain.obj", *box((0, 0, 0), (1, 1, 1)))
    assert mesh_parts(stl, tmp_path / "cache") == (MeshPart(stl),)
    assert mesh_parts(obj, tmp_path / "cache") == (MeshPart(obj),)
    assert not (tmp_path / "cache").exists()  # nothing converted


def test_dingo_chassis_splits_into_its_four_materials(assets, tmp_path):
    parts = mesh_parts(assets / DINGO, tmp_path)
    colours = sorted(p.rgba for p in parts)
    # the file's four diffuse colours: dark grey body, yellow, red and white lights
    assert colours == [(0.0745, 0.0745, 0.0824, 1.0), (1.0, 0.0, 0.0, 1.0),
                       (1.0, 0.902, 0.0, 1.0), (1.0, 1.0, 1.0, 1.0)]
    assert all(p.file.suffix == ".obj" and p.file.is_file() for p in parts)


def test_textured_obj_gets_a_png_no_larger_than_1024_px(assets, tmp_path):
    from PIL import Image

    (part,) = mesh_parts(assets / "obstacles/Desk/meshes/desk.obj", tmp_path)
    assert part.texture is not None and part.rgba == (1.0, 1.0, 1.0, 1.0)
    with Image.open(part.texture) as image:
        assert max(image.size) <= 1024
    assert re.search(r"^vt ", part.file.read_text(), re.MULTILINE)  # texture coordinates


def test_collada_units_are_applied(assets, tmp_path):
    """cafe_table.dae is in inches (<unit meter="0.0254">): 0.913 m wide, 0.775 m tall."""
    import trimesh

    parts = mesh_parts(assets / "obstacles/cafe_table/meshes/cafe_table.dae", tmp_path)
    bounds = trimesh.util.concatenate([trimesh.load(p.file, force="mesh") for p in parts]).bounds
    assert bounds[1] - bounds[0] == pytest.approx([0.9144, 0.9144, 0.7747], abs=1e-3)


def test_a_second_load_reuses_the_cache_and_a_corrupt_part_is_rebuilt(assets, tmp_path):
    parts = mesh_parts(assets / DINGO, tmp_path)
    stamp = parts[0].file.stat().st_mtime_ns
    assert mesh_parts(assets / DINGO, tmp_path) == parts
    assert parts[0].file.stat().st_mtime_ns == stamp  # read, not rewritten
    good = parts[0].file.read_bytes()
    parts[0].file.write_bytes(good[: len(good) // 2])  # truncated by a crash or a disk error
    folder = parts[0].file.parent
    with pytest.warns(mesh_cache.CacheWarning, match=re.escape(
            f"mesh cache entry {str(folder)!r}: {parts[0].file.name} does not match its hash; "
            "rebuilding it")):
        again = mesh_parts(assets / DINGO, tmp_path)
    assert again[0].file.read_bytes() == good


@pytest.mark.parametrize("name, content, reason", [
    ("empty.obj", "o empty\n", "holds no triangles"),
    ("empty_mtl.obj", "mtllib none.mtl\no empty\n", "holds no triangles"),
    ("garbage.dae", "\x00\x01 not a mesh \xff" * 10, "cannot read"),
    # trimesh decodes the text with charset_normalizer when that is installed (ray pulls
    # it in) and then finds no facets; without it the decoding fails: either names the file
    ("garbage.stl", "solid x\n\x00\x01 not a mesh \xff" * 10, "cannot read|holds no triangles"),
])
def test_bad_files_name_the_file_and_the_reason(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_text(content, encoding="latin-1")
    with pytest.raises(MeshUnavailable, match=re.escape(f"{str(path)!r}")) as info:
        mesh_parts(path, tmp_path / "cache")
    assert re.search(reason, str(info.value))


def test_missing_file_is_named(tmp_path):
    path = tmp_path / "x.obj"
    with pytest.raises(MeshUnavailable, match=re.escape(f"missing file {str(path)!r}")):
        mesh_parts(path, tmp_path)


def test_a_file_above_200000_faces_becomes_one_hull_per_sub_mesh(tmp_path):
    import numpy as np
    import trimesh

    n = 320  # a 1 m egg crate of 320 x 320 points: 203,522 faces, its hull a thin box
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    vertices = np.column_stack([i.ravel() / (n - 1), j.ravel() / (n - 1),
                                0.1 * ((i + j) % 2).ravel()])
    a = (i[:-1, :-1] * n + j[:-1, :-1]).ravel()
    faces = np.vstack([np.column_stack([a, a + n, a + 1]),
                       np.column_stack([a + 1, a + n, a + n + 1])])
    crate = trimesh.Trimesh(vertices, faces, process=False)
    assert len(crate.faces) > 200_000
    path = tmp_path / "dense.stl"
    crate.export(path)
    (part,) = mesh_parts(path, tmp_path / "cache")
    assert part.file != path  # MuJoCo could not read it: the hull stands in
    hull = trimesh.load(part.file, force="mesh")
    assert len(hull.faces) < 100
    assert hull.bounds == pytest.approx(crate.bounds, abs=1e-6)


def test_textures_resolve_inside_the_model_folder_and_no_further(assets, tmp_path):
    """The pallet jack's DAE names its textures ../materials/textures/*.png: found with the
    model folder as root, refused (no texture, its colour kept) with the mesh's own folder."""
    folder = assets / "obstacles/pallet_jack_1"
    dae = folder / "sdf/meshes/aws_robomaker_warehouse_PalletJackB_01_visual.DAE"
    confined = mesh_parts(dae, tmp_path)
    assert [p.texture for p in confined] == [None]
    textured = mesh_parts(dae, tmp_path, root=folder)
    assert len(textured) == 2 and all(p.texture is not None for p in textured)
