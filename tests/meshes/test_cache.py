"""The mesh cache heals: a damaged entry is dropped and rebuilt with a warning naming its
folder; a cache that cannot be written still serves, converting uncached with one warning."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena_gym.assets import mesh_cache
from arena_gym.assets.mesh_parts import mesh_parts
from tests.meshes.test_parts import DINGO

CAFE = "obstacles/cafe_table/meshes/cafe_table.dae"


def _rebuilt(assets, cache, reason_of) -> None:
    """Damage the entry of the dingo chassis (reason_of(folder) -> the warning's reason),
    load again: one warning naming the folder, and the same parts as before."""
    parts = mesh_parts(assets / DINGO, cache)
    folder = parts[0].file.parent
    reason = reason_of(folder)
    with pytest.warns(mesh_cache.CacheWarning, match=re.escape(
            f"mesh cache entry {str(folder)!r}: {reason}; rebuilding it")) as caught:
        again = mesh_parts(assets / DINGO, cache)
    assert len(caught) == 1
    assert again == parts and all(p.file.is_file() for p in again)
    assert mesh_cache.read_entry(folder, required=("parts",)) is not None  # healed on disk


def test_a_manifest_without_parts_is_rebuilt(assets, tmp_path):
    def drop_parts(folder: Path) -> str:
        manifest = json.loads((folder / "manifest.json").read_text())
        del manifest["parts"]
        (folder / "manifest.json").write_text(json.dumps(manifest))
        return f"expected manifest.json to hold ['parts'], got keys {['hashes', 'source']}"

    _rebuilt(assets, tmp_path, drop_parts)


def test_an_entry_replaced_by_a_file_is_rebuilt(assets, tmp_path):
    def to_file(folder: Path) -> str:
        shutil.rmtree(folder)
        folder.write_text("not an entry")
        return "expected a folder, got a file"

    _rebuilt(assets, tmp_path, to_file)


def test_a_garbled_manifest_is_rebuilt(assets, tmp_path):
    def garble(folder: Path) -> str:
        (folder / "manifest.json").write_bytes(b"\x00{not json")
        return ("expected a readable manifest.json, got JSONDecodeError: Expecting value: "
                "line 1 column 1 (char 0)")

    _rebuilt(assets, tmp_path, garble)


# a process without the right to write the cache (root's capability dropped: chmod binds it)
READ_ONLY = """
import json, sys, warnings
from pathlib import Path
from arena_gym.assets.mesh_parts import mesh_parts
from arena_gym.scene.requests import Prim
from arena_gym.scene.store import SceneStore

assets, cache = Path(sys.argv[1]), Path(sys.argv[2])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    parts = [p for name in sys.argv[3:] for p in mesh_parts(assets / name, cache)]
    store = SceneStore(num_envs=1)  # a model with a converted mesh compiles
    store[0].spawn_prims([Prim("table", pose=(0, 0, 0, 0), mesh_path=assets / sys.argv[4])])
    store[0].flush()
print(json.dumps({"warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
                  "files": [str(p.file) for p in parts if p.file.is_file()],
                  "parts": len(parts)}))
"""


def test_a_read_only_cache_loads_uncached_with_one_warning(assets, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, 0o555)
    command = [sys.executable, "-c", READ_ONLY, str(assets), str(cache), DINGO, CAFE]
    if os.geteuid() == 0:
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "ARENA_GYM_CACHE": str(cache)}
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=root,
                         timeout=300)
    os.chmod(cache, 0o755)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    (warning,) = result["warnings"]
    assert re.fullmatch(re.escape(f"CacheWarning: mesh cache {str(cache)!r} cannot be written "
                                  "(Permission denied); converting meshes without caching them "
                                  "(in '") + r"/[^']+/arena_gym-uncached-[^']+" + re.escape(
                                      "', removed at exit)"), warning), warning
    assert result["parts"] >= 5 and len(result["files"]) == result["parts"]
    assert not any(f.startswith(str(cache)) for f in result["files"])
    assert list(cache.iterdir()) == []  # nothing written into the cache
    stand_in = re.search(r"\(in '([^']+)'", warning).group(1)
    assert not Path(stand_in).exists()  # removed at exit
