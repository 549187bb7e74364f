"""Meshes that cannot be read and sensors on missing links are dropped with a warning."""

from __future__ import annotations

import re

import pytest

from arena_gym.scene import SceneStore
from tests.conftest import robot_paths


def _burger_text(assets, old, new):
    urdf, packages = robot_paths(assets, "burger")
    text = urdf.read_text()
    assert old in text
    return text.replace(old, new, 1), packages


@pytest.mark.parametrize(
    "uri, reason",
    [
        ("package://turtlebot3_description/meshes/bases/no_such_base.stl", "missing file"),
        ("package://no_such_package/meshes/bases/burger_base.stl",
         "unknown package 'no_such_package'"),
    ],
)
def test_unreadable_mesh_is_dropped_with_a_warning(assets, uri, reason):
    text, packages = _burger_text(
        assets, "package://turtlebot3_description/meshes/bases/burger_base.stl", uri
    )
    store = SceneStore(1)
    with pytest.warns(UserWarning, match=reason) as record:
        store[0].spawn_urdf("burger", text, package_paths=packages)
    assert any("robot 'burger': visual of link 'base_link' dropped" in str(w.message)
               for w in record)
    model = store[0].model
    assert model.body("env_0/burger/base_link").geomnum == 1  # the collision box stays
    assert model.nmesh == 3  # tires and lds only


def test_jackal_gps_sensor_on_a_missing_link_is_dropped(assets):
    urdf, packages = robot_paths(assets, "jackal")
    store = SceneStore(1)
    with pytest.warns(UserWarning, match="sensor 'gps_sensor' dropped: its reference 'gps_link'"):
        info = store[0].spawn_urdf("jackal", urdf, package_paths=packages)
    assert [s.name for s in info.sensors] == ["imu_sensor", "front_laser"]


def test_dash_names_are_folded(assets):
    text, packages = _burger_text(assets, 'name="base_scan"', 'name="base-scan"')
    text = text.replace('link="base_scan"', 'link="base-scan"').replace(
        'reference="base_scan"', 'reference="base-scan"')
    store = SceneStore(1)
    info = store[0].spawn_urdf("burger", text, package_paths=packages)
    assert store[0].model.body("env_0/burger/base_scan") is not None
    assert [s.link for s in info.sensors if s.is_ray] == ["base_scan"]


def test_dingo_collada_chassis_loads_as_its_four_material_parts(assets, tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_GYM_CACHE", str(tmp_path))
    urdf, packages = robot_paths(assets, "dingo")
    store = SceneStore(1)
    store[0].spawn_urdf("dingo", urdf, package_paths=packages)
    assert len(list((tmp_path / "parts").glob("*/part_*.obj"))) == 4
    model = store[0].model
    chassis = model.body("env_0/dingo/chassis_link")
    assert chassis.geomnum == 5  # 4 DAE visual parts + the STL collision
    geoms = range(chassis.geomadr[0], chassis.geomadr[0] + 4)
    colours = sorted(tuple(model.geom_rgba[g].round(3)) for g in geoms)
    assert colours == [(0.074, 0.074, 0.082, 1.0), (1.0, 0.0, 0.0, 1.0),
                       (1.0, 0.902, 0.0, 1.0), (1.0, 1.0, 1.0, 1.0)]


def test_a_collada_mesh_without_trimesh_says_what_to_install(assets, tmp_path, monkeypatch):
    import sys

    from arena_gym.assets.mesh_parts import mesh_parts

    dae = next((assets / "robots" / "dingo").rglob("*.dae"))
    monkeypatch.setenv("ARENA_GYM_CACHE", str(tmp_path))  # nothing converted yet
    monkeypatch.setitem(sys.modules, "trimesh", None)  # as if it were not installed
    with pytest.raises(ImportError, match=re.escape(
            "converting meshes needs trimesh and pycollada: pip install trimesh pycollada")):
        mesh_parts(dae)
    assert not any(tmp_path.rglob("*.obj"))
