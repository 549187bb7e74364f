"""Collision hulls: CoACD pieces of non-convex meshes, at most 16 of at most 32 vertices,
cached on disk with hashes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.assets import hulls, mesh_cache
from arena_gym.assets.hulls import MAX_HULL_VERTICES, MAX_PIECES, collision_hulls
from arena_gym.assets.meshes import MeshUnavailable
from tests.meshes.shapes import box, l_prism, write_obj


def _vertices(path) -> np.ndarray:
    return np.array([[float(v) for v in line.split()[1:]] for line in path.read_text().splitlines()
                     if line.startswith("v ")])


def test_an_l_prism_is_cut_into_convex_pieces_that_keep_its_notch(tmp_path):
    path = write_obj(tmp_path / "l.obj", *l_prism())
    pieces = collision_hulls([path], tmp_path / "cache")[path]
    assert 2 <= len(pieces) <= MAX_PIECES
    for piece in pieces:
        points = _vertices(piece)
        assert len(points) <= MAX_HULL_VERTICES
        # no piece reaches into the notch: x > 0.25 and y > 0.25 is empty space
        assert not np.any((points[:, 0] > 0.3) & (points[:, 1] > 0.3)), points


def test_separate_convex_parts_are_kept_without_decomposing(tmp_path, monkeypatch):
    """A table's collision mesh of a top and four legs: five hulls, CoACD never runs."""
    parts = [box((-0.9, -0.5, 0.7), (0.9, 0.5, 0.75))] + [
        box((x - 0.05, y - 0.05, 0), (x + 0.05, y + 0.05, 0.7))
        for x in (-0.8, 0.8) for y in (-0.4, 0.4)]
    vertices = np.vstack([v for v, _ in parts])
    faces = np.vstack([f + 8 * i for i, (_, f) in enumerate(parts)])
    path = write_obj(tmp_path / "table.obj", vertices, faces)
    monkeypatch.setattr(hulls, "_coacd", lambda *a: pytest.fail("CoACD ran on convex parts"))
    pieces = collision_hulls([path], tmp_path / "cache")[path]
    tops = sorted(round(_vertices(p)[:, 2].max(), 6) for p in pieces)
    assert tops == [0.7, 0.7, 0.7, 0.7, 0.75]


def test_second_load_decomposes_nothing_and_a_corrupt_hull_is_rebuilt(tmp_path):
    """Cold and warm loads measured in one run: the warm one spends no time decomposing."""
    path = write_obj(tmp_path / "l.obj", *l_prism())
    cache = tmp_path / "cache"
    before = dict(hulls.stats)
    cold = collision_hulls([path], cache)[path]
    cold_seconds = hulls.stats["seconds"] - before["seconds"]
    assert hulls.stats["decomposed"] == before["decomposed"] + 1 and cold_seconds > 0
    texts = [p.read_text() for p in cold]
    warm = collision_hulls([path], cache)[path]
    assert warm == cold
    assert hulls.stats["decomposed"] == before["decomposed"] + 1  # warm: read, not decomposed
    assert hulls.stats["seconds"] - before["seconds"] == cold_seconds  # 0 s of decomposition
    cold[0].write_text("v 0 0 0\n")  # a corrupt piece: its hash no longer matches
    with pytest.warns(mesh_cache.CacheWarning, match=re.escape(
            f"mesh cache entry {str(cold[0].parent)!r}: {cold[0].name} does not match its "
            "hash; rebuilding it")):
        again = collision_hulls([path], cache)[path]
    assert hulls.stats["decomposed"] == before["decomposed"] + 2
    assert [p.read_text() for p in again] == texts


def test_each_file_has_its_own_result_in_one_parallel_request(tmp_path):
    good = write_obj(tmp_path / "l.obj", *l_prism())
    empty = tmp_path / "empty.obj"
    empty.write_text("o nothing\n")
    missing = tmp_path / "missing.obj"
    out = collision_hulls([good, empty, missing], tmp_path / "cache", workers=2)
    assert len(out[good]) >= 2
    assert isinstance(out[empty], MeshUnavailable)
    assert str(out[empty]) == f"{str(empty)!r} holds no triangles"
    assert str(out[missing]) == f"missing file {str(missing)!r}"


def test_coacd_prints_nothing(tmp_path, capfd):
    path = write_obj(tmp_path / "l.obj", *l_prism(0.3))
    collision_hulls([path], tmp_path / "cache")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_a_flat_mesh_gives_no_solid_piece(tmp_path):
    path = write_obj(tmp_path / "flat.obj", np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]]),
                     np.array([[0, 1, 2]]))
    result = collision_hulls([path], tmp_path / "cache")[path]
    assert isinstance(result, MeshUnavailable)
    assert re.fullmatch(re.escape(f"{str(path)!r} gives no solid convex piece"), str(result))
