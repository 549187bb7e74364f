"""MDL materials: each step of the fallback on hand-made .mdl files, and the tiled MuJoCo
material they become."""

from __future__ import annotations

import math
import re
import tempfile
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from arena_gym.assets.mdl import add_mdl_material, muted_colour, read_mdl
from arena_gym.errors import AssetWarning

HEAD = "mdl 1.4;\nimport ::OmniPBR::OmniPBR;\n\nexport material {name}(*)\n = OmniPBR::OmniPBR(\n"


def _mdl(folder: Path, body: str, name: str = "Wood") -> Path:
    path = folder / f"{name}.mdl"
    path.write_text(HEAD.format(name=name) + body + "\n);\n")
    return path


def _image(path: Path, rgb: tuple[int, int, int], fmt: str = "PNG") -> Path:
    Image.fromarray(np.full((4, 4, 3), rgb, np.uint8)).save(path, format=fmt)
    return path


def _compiled(mdl) -> mujoco.MjModel:
    spec = mujoco.MjSpec()
    material = add_mdl_material(spec, mdl)
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[1, 1, 1], material=material)
    return spec.compile()


def test_the_diffuse_texture_slot_comes_first_and_is_tiled(tmp_path):
    _image(tmp_path / "wood_col.png", (200, 100, 50))
    _image(tmp_path / "wood_albedo.png", (1, 2, 3))
    path = _mdl(tmp_path, '    diffuse_color_constant: color(0.1f, 0.2f, 0.3f),\n'
                '    diffuse_texture: texture_2d("./wood_col.png", ::tex::gamma_srgb),\n'
                '    normalmap_texture: texture_2d("./wood_albedo.png"),\n'
                '    texture_scale: float2(2.f, 0.5f)')
    mdl = read_mdl(path)
    assert (mdl.name, mdl.source, mdl.image.name, mdl.repeat) == ("Wood", "texture",
                                                                  "wood_col.png", (2.0, 0.5))
    model = _compiled(mdl)
    assert model.ntex == 1 and model.tex_data[:3].tolist() == [200, 100, 50]
    assert model.mat_texuniform[0] and model.mat_texrepeat[0].tolist() == [2.0, 0.5]
    np.testing.assert_array_equal(model.mat_rgba[0], [1, 1, 1, 1])


def test_else_an_albedo_image_the_file_references(tmp_path):
    _image(tmp_path / "Wood_BaseColor.jpg", (30, 160, 90), fmt="JPEG")
    path = _mdl(tmp_path, '    diffuse_color_constant: color(0.1f, 0.2f, 0.3f)\n'
                '    /* maps: "Wood_BaseColor.jpg" */')
    mdl = read_mdl(path)
    assert (mdl.source, mdl.image.name) == ("albedo", "Wood_BaseColor.jpg")
    rgb = _compiled(mdl).tex_data[:3].astype(int)
    np.testing.assert_allclose(rgb, [30, 160, 90], atol=3)  # JPEG, converted to PNG


def test_else_the_declared_diffuse_colour_and_a_missing_image_is_named(tmp_path):
    path = _mdl(tmp_path, '    diffuse_texture: texture_2d("./gone.png"),\n'
                '    diffuse_color_constant: color(0.1f, 0.2f, 0.3f)')
    with pytest.warns(AssetWarning, match=re.escape("Wood.mdl: image './gone.png' not found; "
                                                    "not used")):
        mdl = read_mdl(path)
    assert (mdl.source, mdl.rgba, mdl.image) == ("colour", (0.1, 0.2, 0.3, 1.0), None)
    model = _compiled(mdl)
    assert model.ntex == 0
    np.testing.assert_allclose(model.mat_rgba[0], [0.1, 0.2, 0.3, 1.0], atol=1e-7)


def test_else_a_muted_colour_from_the_name_with_a_warning(tmp_path):
    path = _mdl(tmp_path, '    reflection_roughness_constant: 0.5f', name="Rusty_Metal")
    with pytest.warns(AssetWarning, match=re.escape(
            "Rusty_Metal.mdl: material 'Rusty_Metal' declares no diffuse texture, albedo image "
            "or diffuse colour; using a muted colour from its name")):
        mdl = read_mdl(path)
    assert mdl.source == "name" and mdl.rgba[:3] == muted_colour("Rusty_Metal")
    rgb = np.array(mdl.rgba[:3])
    assert rgb.max() == pytest.approx(0.6) and rgb.min() == pytest.approx(0.6 * 0.7)  # muted
    assert muted_colour("Rusty_Metal") != muted_colour("Oak")


def test_an_image_outside_the_materials_folder_is_not_used(tmp_path):
    (tmp_path / "mats").mkdir()
    _image(tmp_path / "secret_albedo.png", (9, 9, 9))
    path = _mdl(tmp_path / "mats", '    diffuse_texture: texture_2d("../secret_albedo.png"),\n'
                '    base_color: color(0.5f)')
    with pytest.warns(AssetWarning, match=re.escape(
            "Wood.mdl: image '../secret_albedo.png' lies outside the material's folder; not "
            "used")):
        mdl = read_mdl(path)
    assert (mdl.source, mdl.rgba) == ("colour", (0.5, 0.5, 0.5, 1.0))



_PIECES = st.sampled_from(['diffuse_texture: texture_2d("', "color(", "0.5f", ",", ")",
                           '"x_albedo.png"', "texture_scale: float2(", "-1", "/*", "*/",
                           "export material ", "M(", "\n", " ", '"', "1e400"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_any_text_reads_as_a_usable_material(text):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "any.mdl"
        path.write_text(text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AssetWarning)
            mdl = read_mdl(path)
    assert all(0.0 <= c <= 1.0 for c in mdl.rgba)
    assert all(0 < r < math.inf for r in mdl.repeat)
