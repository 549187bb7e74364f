"""The SB3 adapter, training and evaluation entry points (needs the [train] extra; without
it these tests skip, and fail when CI=true)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from gymnasium.wrappers.vector import NormalizeReward, RecordEpisodeStatistics

from arena_gym.envs.single_env import ArenaEnv
from arena_gym.envs.vector_env import ArenaVectorEnv
from tests.conftest import require


@pytest.fixture(autouse=True)
def sb3():
    return require("stable_baselines3", "pip install 'arena_gym[train]'")


def adapter(env, **kwargs):
    from arena_gym.wrappers.sb3 import ArenaSB3VecEnv

    return ArenaSB3VecEnv(env, **kwargs)


def test_sb3_check_env_passes_on_the_single_env():
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = ArenaEnv(max_episode_steps=50)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_check_env(env)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and messages[0].startswith(  # the robot-range action Box only
        "We recommend you to use a symmetric and normalized Box action space")
    env.close()


def test_terminal_observation_is_kept_and_the_env_restarts_in_the_same_step():
    venv = adapter(ArenaVectorEnv(2), seed=0)
    obs = venv.reset()
    assert obs.shape == (2, 90 + 2 + 2) and obs.dtype == np.float32
    forward = np.tile([1.0, 0.0], (2, 1))  # normalised: full speed ahead, into something
    for _ in range(400):
        venv.step_async(forward)
        obs, reward, done, infos = venv.step_wait()
        if done.any():
            break
    e = int(np.flatnonzero(done)[0])
    info = infos[e]
    terminal = info["terminal_observation"]
    assert info["episode_result"]["result"] == "collision"
    assert reward[e] <= -25.0
    assert info["TimeLimit.truncated"] is False and info["is_success"] is False
    max_range, radius = venv.env.core.max_range, venv.env.core.params.radius
    hit, fresh = terminal[:90].min() * max_range, obs[e][:90].min() * max_range
    assert hit < radius + 0.1  # the scan that saw the collision: something at the footprint
    assert fresh > hit + 0.05  # the new episode starts with room around the robot
    assert obs[e][-2:].tolist() == [0.0, 0.0]  # the new episode's first observation
    venv.close()


def test_time_limit_is_reported_as_truncation():
    venv = adapter(ArenaVectorEnv(1, max_episode_steps=5), seed=3)
    venv.reset()
    for _ in range(5):
        venv.step_async(np.zeros((1, 2)))
        _, _, done, infos = venv.step_wait()
    assert done[0] and infos[0]["TimeLimit.truncated"] is True
    assert infos[0]["episode_result"]["result"] == "timeout"
    venv.close()


FORWARD = np.tile(np.float32([0.1, 0.0]), (2, 1))


def test_adapter_over_a_wrapped_vector_env_uses_its_front_door():
    inner = ArenaVectorEnv(2, max_episode_steps=5)
    venv = adapter(RecordEpisodeStatistics(NormalizeReward(inner)), seed=1)
    first = venv.reset()
    steps = inner.core.sim.step_count
    for _ in range(5):
        venv.step_async(FORWARD)  # the robots move: their last scan is not the first
        obs, _, done, infos = venv.step_wait()
    assert done.tolist() == [True, True]
    assert inner.core.sim.step_count == steps + 5 * inner.cfg.substeps  # no hidden steps
    for e, info in enumerate(infos):
        assert info["episode"]["l"] == 5  # RecordEpisodeStatistics' record, per env
        assert info["episode_result"]["result"] == "timeout"
        assert info["TimeLimit.truncated"] is True and info["is_success"] is False
        assert info["terminal_observation"][-2:].tolist() == FORWARD[e].tolist()
        assert not np.array_equal(info["terminal_observation"], first[e])
    fresh = ArenaVectorEnv(2, max_episode_steps=5)
    fresh.reset(seed=1)
    for _ in range(5):
        fresh.step(FORWARD)
    restarted, *_ = fresh.step(np.zeros((2, 2)))  # NEXT_STEP: the next episodes' first obs
    from arena_gym.wrappers.policy_obs import flatten

    assert obs.tobytes() == flatten(restarted, fresh.single_observation_space).tobytes()
    venv.close()
    fresh.close()


def test_adapter_over_gymnasium_sync_vector_env():
    import gymnasium as gym

    envs = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="sync",
                        max_episode_steps=5)
    venv = adapter(envs, seed=0)
    venv.reset()
    for _ in range(5):
        venv.step_async(np.tile([0.5, 0.5], (2, 1)).astype(np.float32))
        obs, _, done, infos = venv.step_wait()
    assert done.tolist() == [True, True]
    for e, info in enumerate(infos):
        assert info["TimeLimit.truncated"] is True and info["is_success"] is False
        assert info["terminal_observation"][-1] != 0.0  # the last action of the ended episode
        assert obs[e][-2:].tolist() == [0.0, 0.0]  # the new episode's first observation
    venv.close()


def test_adapter_rejects_what_is_not_a_vector_env():
    with pytest.raises(TypeError, match=re.escape(
            "env: expected a gymnasium VectorEnv, got ArenaEnv")):
        adapter(ArenaEnv())


def test_sb3_make_vec_env_reaches_the_env_and_ppo_learns():
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("ArenaMujoco-v0", n_envs=2, seed=0, env_kwargs={"max_episode_steps": 20})
    assert venv.get_attr("render_mode") == ["rgb_array", "rgb_array"]  # SB3's default
    obs = venv.reset()
    assert obs["scan"].shape == (2, 90)
    model = PPO("MultiInputPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                device="cpu")
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256
    venv.close()


def test_train_then_eval_from_the_command_line(tmp_path, capsys):
    from arena_gym.cli import main

    out = tmp_path / "run"
    assert main(["train", "--minutes", "0.05", "--num-envs", "4", "--eval-every", "1000",
                 "--out", str(out), "--no-progress", "--set", "max_episode_steps=20"]) == 0
    assert (out / "final_model.zip").is_file() and (out / "curve.csv").is_file()
    assert main(["eval", str(out / "final_model.zip"), "--episodes", "4", "--num-envs", "2",
                 "--set", "max_episode_steps=20"]) == 0
    printed = capsys.readouterr().out
    assert "4 episodes: success" in printed


def test_baselines_evaluate(capsys):
    from arena_gym.cli import main

    assert main(["eval", "reactive", "--episodes", "6", "--num-envs", "3"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("reactive: 6 episodes: success")


def test_the_learners_flags_reach_the_model(tmp_path):
    import stable_baselines3 as sb3

    from arena_gym.cli import main

    out = tmp_path / "run"
    assert main(["train", "--steps", "64", "--num-envs", "2", "--eval-every", "1000",
                 "--out", str(out), "--no-progress", "--set", "max_episode_steps=20",
                 "--learning-rate", "0.001", "--n-steps", "16", "--batch-size", "8",
                 "--n-epochs", "2", "--gamma", "0.95", "--net", "32,16",
                 "--log-std-init", "-1"]) == 0
    model = sb3.PPO.load(out / "final_model.zip", device="cpu")
    assert (model.learning_rate, model.n_steps, model.batch_size, model.n_epochs,
            model.gamma) == (0.001, 16, 8, 2, 0.95)
    layers = [m.out_features for m in model.policy.mlp_extractor.policy_net
              if hasattr(m, "out_features")]
    assert layers == [32, 16]
    # started at -1 (PPO's own start is 0); 16 Adam steps of 0.001 move it at most 0.016
    assert model.policy_kwargs["log_std_init"] == -1.0
    assert abs(model.policy.log_std.detach().numpy() + 1.0).max() <= 0.02


def test_a_log_std_that_is_no_finite_number_is_named(capsys):
    from arena_gym.cli import main

    assert main(["train", "--log-std-init", "nan"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "arena-gym: error: argument --log-std-init: expected a finite number, got nan")


def test_a_net_that_is_no_list_of_sizes_is_named(capsys):
    from arena_gym.cli import main

    assert main(["train", "--net", "64,x"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "arena-gym: error: argument --net: expected positive layer sizes separated by "
        "commas, e.g. 64,64, got '64,x'")
