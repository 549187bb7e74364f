"""The SB3 adapter, training and evaluation entry points (needs the [train] extra)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="pip install 'arena_gym[train]'")

from stable_baselines3.common.env_checker import check_env as sb3_check_env

from arena_gym.cli import main
from arena_gym.envs.single_env import ArenaEnv
from arena_gym.wrappers.sb3 import ArenaSB3VecEnv


def test_sb3_check_env_passes_on_the_single_env():
    env = ArenaEnv(max_episode_steps=50)
    with pytest.warns(UserWarning):  # SB3's advice on the robot-range action Box only
        sb3_check_env(env)
    env.close()


def test_terminal_observation_is_kept_and_the_env_restarts_in_the_same_step():
    venv = ArenaSB3VecEnv(2, seed=0)
    obs = venv.reset()
    assert obs.shape == (2, 360 + 2 + 2) and obs.dtype == np.float32
    forward = np.tile([1.0, 0.0], (2, 1))  # normalised: full speed ahead, into something
    for _ in range(400):
        venv.step_async(forward)
        obs, reward, done, infos = venv.step_wait()
        if done.any():
            break
    e = int(np.flatnonzero(done)[0])
    info = infos[e]
    terminal = info["terminal_observation"]
    assert info["episode_metrics"]["result"] == "collision"
    assert reward[e] <= -15.0
    assert info["TimeLimit.truncated"] is False and info["is_success"] is False
    assert terminal.min() < 0.1  # the scan that saw the collision, not the new episode's
    assert not np.array_equal(terminal, obs[e])
    assert obs[e][-2:].tolist() == [0.0, 0.0]  # the new episode's first observation
    venv.close()


def test_time_limit_is_reported_as_truncation():
    venv = ArenaSB3VecEnv(1, seed=3, max_episode_steps=5)
    venv.reset()
    for t in range(5):
        venv.step_async(np.zeros((1, 2)))
        _, _, done, infos = venv.step_wait()
    assert done[0] and infos[0]["TimeLimit.truncated"] is True
    assert infos[0]["episode_metrics"]["result"] == "timeout"
    venv.close()


def test_train_then_eval_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--minutes", "0.05", "--num-envs", "4", "--eval-every", "1000",
                 "--out", str(out), "--no-progress", "--set", "max_episode_steps=20"]) == 0
    assert (out / "final_model.zip").is_file() and (out / "curve.csv").is_file()
    assert main(["eval", str(out / "final_model.zip"), "--episodes", "4", "--num-envs", "2",
                 "--set", "max_episode_steps=20"]) == 0
    printed = capsys.readouterr().out
    assert "4 episodes: success" in printed


def test_baselines_evaluate(capsys):
    assert main(["eval", "reactive", "--episodes", "6", "--num-envs", "3"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("reactive: 6 episodes: success")
