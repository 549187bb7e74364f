"""`arena-gym bridge --arena`'s options, before anything starts: Arena's workspace root from
--arena-root or $ARENA_WS_DIR (else an error naming both), its files readable and nothing
else, a world or robot of ours refused, a bound below the envs asked for refused."""

from __future__ import annotations

import re

import pytest

from arena_gym.ros.files import ASSETS, arena_root
from arena_gym.ros.run import ARENA_MAX_ENVS, arena_store, check_arena


def test_the_workspace_root_comes_from_the_flag_or_arenas_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_WS_DIR", raising=False)
    with pytest.raises(ValueError, match=re.escape(
            "--arena: expected Arena's workspace root (--arena-root DIR, or $ARENA_WS_DIR as "
            "Arena's arena.bash sets it), got neither")):
        arena_root(None)
    monkeypatch.setenv("ARENA_WS_DIR", str(tmp_path))
    assert arena_root(None) == tmp_path
    other = tmp_path / "other"
    other.mkdir()
    assert arena_root(str(other)) == other  # the flag first
    with pytest.raises(ValueError, match=re.escape(
            f"--arena-root: expected a folder, got {str(tmp_path / 'gone')!r}")):
        arena_root(str(tmp_path / "gone"))


def test_a_session_reads_the_workspace_and_nothing_else(tmp_path):
    from arena_gym.errors import SpawnError
    from arena_gym.scene.requests import Prim
    from tests.meshes.shapes import box, write_obj

    ws, outside = tmp_path / "ws", tmp_path / "elsewhere"
    ws.mkdir()
    outside.mkdir()
    store, roots, bound = arena_store(1, None, str(ws), ())
    assert bound == ARENA_MAX_ENVS and store.num_envs == 1
    assert set(roots) == {ws.resolve(), ASSETS.resolve()}
    inside = write_obj(ws / "in.obj", *box((0, 0, 0), (0.5, 0.5, 0.5)))
    store[0].spawn_prims([Prim("in", mesh_path=inside)])
    refused = write_obj(outside / "out.obj", *box((0, 0, 0), (0.5, 0.5, 0.5)))
    with pytest.raises(SpawnError, match=re.escape(
            f"env 0: spawn_prims refused: {str(refused)!r} is outside the allowed roots")):
        store[0].spawn_prims([Prim("out", mesh_path=refused)])
    assert "out" not in store[0].entities


def test_a_world_or_robot_of_ours_and_a_bound_below_the_envs_are_refused(tmp_path):
    with pytest.raises(ValueError, match=re.escape(
            "--arena: expected no --robot (an Arena session spawns its world and robots over "
            "/mujoco/Spawn*), got 'jackal.urdf'")):
        check_arena("default", "jackal.urdf", None, None)
    with pytest.raises(ValueError, match=re.escape("--arena: expected no --world")):
        check_arena("random", "builtin", None, None)
    with pytest.raises(ValueError, match=re.escape(
            "--arena: expected no --model (an Arena session spawns its world and robots over "
            "/mujoco/Spawn*), got 'humanoid.xml'")):
        check_arena("default", "builtin", None, "humanoid.xml")
    with pytest.raises(ValueError, match=re.escape(
            "--max-envs: expected at least --envs (4), got 2")):
        arena_store(4, 2, str(tmp_path), ())
