"""Random bad mesh files: each costs its own obstacle, never the request or the scene."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_gym.errors import AssetWarning
from arena_gym.scene import Prim, SceneStore
from tests.meshes.shapes import box, write_obj


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blob=st.binary(max_size=400), suffix=st.sampled_from([".obj", ".stl", ".dae", ".glb"]))
def test_random_bytes_as_a_mesh_cost_one_obstacle(blob, suffix):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        bad = root / f"bad{suffix}"
        bad.write_bytes(blob)
        good = write_obj(root / "good.obj", *box((0, 0, 0), (0.5, 0.5, 0.5)))
        store = SceneStore(1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            spawned = store[0].spawn_prims([Prim("bad", mesh_path=bad),
                                            Prim("good", pose=(2, 0, 0, 0), mesh_path=good)])
        assert "good" in spawned
        if "bad" not in spawned:
            assert any("prim 'bad' not spawned" in str(w.message) for w in caught
                       if w.category is AssetWarning)
        _ = store[0].model  # compiles
        assert list(store[0].entities) == spawned
