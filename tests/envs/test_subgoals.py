"""The navigation task with a global path: the subgoal observation, path progress, episodes
on maps, time limits from the path length; and the default task without any of it."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from arena_gym.config import load_config
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.train.policies import make_policy

SUBGOAL = {"subgoal": True, "lookahead": 1.5}


def test_the_default_task_has_no_subgoal_and_plans_nothing():
    env = ArenaVectorEnv(2)
    obs, _ = env.reset(seed=0)
    assert sorted(obs) == ["goal", "last_action", "scan"]
    assert sorted(env.single_observation_space.spaces) == ["goal", "last_action", "scan"]
    assert env.core.task.paths is None and (env.core.task.max_steps == 300).all()
    env.close()


def test_in_the_room_the_subgoal_lies_on_the_line_to_the_goal():
    env = ArenaVectorEnv(4, paths=SUBGOAL)
    obs, _ = env.reset(seed=3)
    goal, sub = obs["goal"], obs["subgoal"]
    # the room's path is the straight line: the subgoal 1.5 m along it, same bearing
    np.testing.assert_allclose(sub[:, 0], np.minimum(goal[:, 0], 1.5), atol=1e-6)
    np.testing.assert_allclose(sub[:, 1], goal[:, 1], atol=1e-5)
    assert env.single_observation_space["subgoal"] == env.single_observation_space["goal"]
    env.close()


def test_same_seed_same_path_episode_bit_for_bit():
    runs = []
    for _ in range(2):
        env = ArenaVectorEnv(3, paths={**SUBGOAL, "progress": "path"})
        obs, _ = env.reset(seed=11)
        rewards = []
        for _ in range(5):
            obs, reward, *_ = env.step(np.tile([0.2, 0.3], (3, 1)))
            rewards.append(reward)
        runs.append((obs["subgoal"], np.array(rewards)))
        env.close()
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def _to_go(path: np.ndarray, p: np.ndarray) -> float:
    """Distance from p to its projection on the nearest segment, plus the path after it."""
    best, out = math.inf, math.inf
    for k in range(len(path) - 1):
        a, b = path[k], path[k + 1]
        seg = b - a
        t = float(np.clip(np.dot(p - a, seg) / np.dot(seg, seg), 0.0, 1.0))
        foot = a + t * seg
        gap = float(np.hypot(*(p - foot)))
        if gap < best - 1e-9:
            rest = np.hypot(*np.diff(path[k + 1:], axis=0).T).sum() if k + 2 < len(path) else 0
            best, out = gap, gap + float(np.hypot(*(b - foot))) + float(rest)
    return out


def test_on_a_map_progress_is_paid_along_the_path(assets):
    world = str(assets / "worlds" / "experiment_rooms" / "map" / "map.yaml")
    env = ArenaVectorEnv(4, world=world, curriculum={"stages": [[0, 0]]},
                         paths={**SUBGOAL, "progress": "path", "min_length": 5.0})
    obs, _ = env.reset(seed=0)
    core = env.core
    paths = [core.task.paths.follower.path(e) for e in range(4)]
    for e in range(4):
        assert core.task.paths.follower.path_length[e] >= 5.0
        assert _to_go(paths[e], core.task.pose[e, :2]) == pytest.approx(
            core.task.paths.follower.path_length[e], abs=1e-6)
    policy = make_policy("reactive", env)
    for _ in range(10):
        before = core.task.pose[:, :2].copy()
        obs, _, terminated, truncated, info = env.step(policy(obs))
        assert not (terminated | truncated).any()
        assert core.task.paths.follower.replans.sum() == 0
        gained = np.array([_to_go(paths[e], before[e]) - _to_go(paths[e], core.task.pose[e, :2])
                           for e in range(4)])
        expected = np.where(gained >= 0, 0.3 * gained, 0.4 * gained)
        np.testing.assert_allclose(info["reward_terms"]["progress"], expected, atol=1e-9)
    env.close()


def test_the_time_limit_scales_with_the_path_length(assets):
    world = str(assets / "worlds" / "experiment_rooms" / "map" / "map.yaml")
    env = ArenaVectorEnv(2, world=world, curriculum={"stages": [[0, 0]]},
                         paths={**SUBGOAL, "min_length": 3.0, "time_base": 0.5,
                                "time_per_metre": 0.2})
    env.reset(seed=4)
    ended = None
    for _ in range(200):
        _, _, terminated, truncated, info = env.step(np.zeros((2, 2)))
        if "episode_result" in info:
            ended = {k: v[np.flatnonzero(info["_episode_result"])[0]]
                     for k, v in info["episode_result"].items()}
            break
    assert ended is not None and ended["result"] == "timeout"
    # 0.5 s + 0.2 s per metre of path, in steps of 0.1 s
    assert ended["steps"] == math.ceil((0.5 + 0.2 * ended["planned_length"]) / 0.1 - 1e-9)
    path = ended["global_path"]
    np.testing.assert_allclose(path[0], ended["trajectory"][0, :2], atol=1e-9)
    np.testing.assert_array_equal(path[-1], ended["goal"])
    assert ended["subgoals"].shape == (ended["steps"] + 1, 2)
    env.close()


def test_env_e_builds_worlds_e_mod_n(assets):
    world = str(assets / "worlds" / "experiment_rooms" / "map" / "map.yaml")
    env = ArenaVectorEnv(3, worlds=[world, "random"], paths=SUBGOAL)
    env.reset(seed=0)
    walls = [sorted(n for n in list(env.core.store[e].entities) if "wall" in n) for e in range(3)]
    assert walls[0] == walls[2] and len(walls[0]) >= 4 and walls[0][0].startswith("map/")
    assert walls[1] == ["walls/east", "walls/north", "walls/south", "walls/west"]
    assert env.core.layouts[0] is env.core.layouts[2]  # the map is loaded once
    env.close()


def test_a_world_path_with_an_unset_variable_names_it(monkeypatch):
    monkeypatch.delenv("ARENA_GYM_NOT_SET", raising=False)
    with pytest.raises(ValueError, match=re.escape(
            "world '$ARENA_GYM_NOT_SET/map.yaml': expected its environment variables set (e.g. "
            "ARENA_GYM_ASSETS, the shared assets folder), got '$ARENA_GYM_NOT_SET/map.yaml'")):
        ArenaVectorEnv(1, world="$ARENA_GYM_NOT_SET/map.yaml")


def test_the_maps_config_loads_and_asks_for_subgoals():
    cfg = load_config("maps")
    assert cfg.paths.subgoal and cfg.paths.progress == "path"
    names = [w if w == "random" else Path(w).parent.parent.name for w in cfg.worlds]
    # experiment_rooms twice (its narrow doors); evaluation_floor stays unseen
    assert names == ["experiment_rooms", "experiment_rooms", "hospital", "map1_small", "random"]
    assert load_config().paths.subgoal is False  # the default task stays as it was


def _blue_pixels(png) -> int:
    from PIL import Image

    rgb = np.asarray(Image.open(png).convert("RGB")).astype(int)
    return int((np.abs(rgb - (31, 119, 180)).sum(axis=-1) < 30).sum())  # tab:blue


def test_eval_plot_draws_each_episode_with_its_global_path(tmp_path, capsys):
    from arena_gym.cli import main

    args = ["eval", "reactive", "--episodes", "2", "--num-envs", "2", "--set",
            "max_episode_steps=15"]
    assert main([*args, "--set", "paths.subgoal=true", "--plot", str(tmp_path / "on")]) == 0
    assert main([*args, "--plot", str(tmp_path / "off")]) == 0
    for name in ("episode_000.png", "episode_001.png"):
        assert _blue_pixels(tmp_path / "on" / name) > 50  # the dashed global path
        assert _blue_pixels(tmp_path / "off" / name) == 0  # none planned, none drawn
    assert "reactive: 2 episodes" in capsys.readouterr().out
