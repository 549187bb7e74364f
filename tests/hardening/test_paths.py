"""Mesh and model paths: package:// stays inside its package, a SceneStore can confine plain
paths to given roots, and package_paths is a list. A refused spawn changes nothing."""

from __future__ import annotations

import re
import struct
import warnings
from pathlib import Path

import pytest

from arena_gym.scene import Prim, SceneError, SceneStore, SpawnError
from tests.conftest import assert_same, snapshot

LINK = ('<link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" '
        'ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry><mesh filename="{uri}"/>'
        '</geometry></collision></link>')
def _stl() -> bytes:
    """A binary STL tetrahedron (MuJoCo reads binary STL only)."""
    v = [(0, 0, 0), (0.1, 0, 0), (0, 0.1, 0), (0, 0, 0.1)]
    faces = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    out = b"\0" * 80 + struct.pack("<I", len(faces))
    for f in faces:
        out += struct.pack("<12fH", 0, 0, 0, *v[f[0]], *v[f[1]], *v[f[2]], 0)
    return out


def _urdf(uri: str) -> str:
    return f'<robot name="r">{LINK.format(uri=uri)}</robot>'


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """packages/pkg/meshes/part.stl inside, secret.stl beside the packages, a symlink out."""
    meshes = tmp_path / "packages" / "pkg" / "meshes"
    meshes.mkdir(parents=True)
    (meshes / "part.stl").write_bytes(_stl())
    (tmp_path / "secret.stl").write_bytes(_stl())
    (meshes / "link.stl").symlink_to(tmp_path / "secret.stl")
    return tmp_path


def _store_with_a_box(**kwargs) -> SceneStore:
    store = SceneStore(2, **kwargs)
    for env in range(2):
        store[env].spawn_prims([Prim("box", pose=(2, 0, 0.2, 0), scale=(0.4, 0.4, 0.4))])
        _ = store[env].model
    return store


def test_a_package_mesh_inside_its_package_loads(tree):
    store = _store_with_a_box()
    store[0].spawn_urdf("r", _urdf("package://pkg/meshes/part.stl"),
                     package_paths=[tree / "packages"])
    assert store[0].model.nmesh == 1


@pytest.mark.parametrize("uri", [
    "package://pkg/../../secret.stl",  # exists outside the package
    "package://pkg/../../no_such_file.stl",  # does not: the same message, nothing told
    "package://pkg/meshes/link.stl",  # a symlink inside pointing out
])
def test_a_package_uri_leaving_its_package_is_refused_naming_the_uri(tree, uri):
    store = _store_with_a_box()
    before = [snapshot(s) for s in store.scenes]
    message = (f"robot 'r': collision mesh of link 'base' refused: {uri!r} leaves package 'pkg'")
    with pytest.raises(SpawnError, match=re.escape(message) + "$"):
        store[0].spawn_urdf("r", _urdf(uri), package_paths=[tree / "packages"])
    for scene, snap in zip(store.scenes, before, strict=True):
        assert_same(snapshot(scene), snap)


def test_a_package_named_dotdot_is_refused(tree):
    store = _store_with_a_box()
    with pytest.raises(SpawnError, match=re.escape(
            "robot 'r': collision mesh of link 'base' refused: 'package://../secret.stl' names "
            "no package")):
        store[0].spawn_urdf("r", _urdf("package://../secret.stl"),
                         package_paths=[tree / "packages"])
    assert list(store[0].entities) == ["box"]


def test_plain_and_file_paths_resolve_as_written(tree):
    store = _store_with_a_box()
    store[0].spawn_urdf("a", _urdf(str(tree / "secret.stl")))
    store[1].spawn_urdf("b", _urdf(f"file://{tree / 'secret.stl'}"))
    assert store[0].model.nmesh == store[1].model.nmesh == 1


def test_path_roots_confine_plain_paths_urdf_files_and_package_paths(tree):
    roots = [tree / "packages"]
    store = _store_with_a_box(path_roots=roots)
    before = [snapshot(s) for s in store.scenes]
    outside = str(tree / "secret.stl")
    with pytest.raises(SpawnError, match=re.escape(
            f"robot 'r': collision mesh of link 'base' refused: {outside!r} is outside the "
            "allowed roots")):
        store[0].spawn_urdf("r", _urdf(outside))
    with pytest.raises(SpawnError, match=re.escape(
            f"robot 'r': collision mesh of link 'base' refused: 'file://{outside}' is outside "
            "the allowed roots")):
        store[0].spawn_urdf("r", _urdf(f"file://{outside}"))
    (tree / "r.urdf").write_text(_urdf("package://pkg/meshes/part.stl"))
    with pytest.raises(SpawnError, match=re.escape(
            f"URDF file {str(tree / 'r.urdf')!r}: expected a path inside the allowed roots")):
        store[0].spawn_urdf("r", tree / "r.urdf", package_paths=roots)
    with pytest.raises(SpawnError, match=re.escape(
            f"package_paths: {str(tree)!r} is outside the allowed roots")):
        store[0].spawn_urdf("r", _urdf("package://pkg/meshes/part.stl"), package_paths=[tree])
    for scene, snap in zip(store.scenes, before, strict=True):
        assert_same(snapshot(scene), snap)
    inside = str(tree / "packages" / "pkg" / "meshes" / "part.stl")
    store[0].spawn_urdf("r", _urdf(inside), package_paths=roots)  # inside the roots: fine
    assert list(store[0].entities) == ["box", "r"]


def test_package_paths_must_be_a_list(tree):
    store = _store_with_a_box()
    before = snapshot(store.scenes[0])
    with pytest.raises(SpawnError, match=re.escape(
            "package_paths: expected a list of paths, got a single path 'robots/jackal/packages' "
            "(write [path])")):
        store[0].spawn_urdf("r", _urdf("package://pkg/meshes/part.stl"),
                         package_paths="robots/jackal/packages")
    assert_same(snapshot(store.scenes[0]), before)
    with pytest.raises(SceneError, match=re.escape(
            "path_roots: expected a list of folders, got '/srv'")):
        SceneStore(1, path_roots="/srv")


def test_a_missing_package_mesh_still_only_warns(tree):
    """Missing (not hostile) meshes are dropped like Gazebo does, as before."""
    store = _store_with_a_box()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store[0].spawn_urdf("r", _urdf("package://pkg/meshes/none.stl"),
                         package_paths=[tree / "packages"])
    assert any("missing file 'meshes/none.stl' in package 'pkg'" in str(w.message) for w in caught)
    assert store[0].model.nmesh == 0
