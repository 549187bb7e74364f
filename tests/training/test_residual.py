"""A policy learned as a residual on a prior controller (`arena-gym train --prior reactive`):
its action is added to the prior's in training, in evaluation and in a shipped file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from arena_gym.envs.vector_env import ArenaVectorEnv
from tests.conftest import require


@pytest.fixture(autouse=True)
def sb3():
    return require("stable_baselines3", "pip install 'arena_gym[train]'")


def reactive(env):
    from arena_gym.train.policies import make_policy

    return make_policy("reactive", env)


def test_a_zero_residual_drives_exactly_as_its_prior():
    from arena_gym.wrappers.policy_obs import flatten
    from arena_gym.wrappers.sb3 import ArenaSB3VecEnv

    residual_env, prior_env = ArenaVectorEnv(3), ArenaVectorEnv(3)
    try:
        venv = ArenaSB3VecEnv(residual_env, seed=7, prior=reactive(residual_env))
        flat = venv.reset()
        obs, _ = prior_env.reset(seed=7)
        follow = reactive(prior_env)
        for _ in range(60):  # long enough for episodes to end and restart in both
            venv.step_async(np.zeros((3, 2), np.float32))
            flat, reward, done, _ = venv.step_wait()
            obs, expected, terminated, truncated, _ = prior_env.step(follow(obs))
            assert np.array_equal(done, terminated | truncated)
            assert np.array_equal(reward, expected.astype(np.float32))
            if done.any():
                obs, _ = prior_env.reset(options={"reset_mask": done})
        assert np.array_equal(flat, flatten(obs, prior_env.single_observation_space))
    finally:
        residual_env.close()
        prior_env.close()


def test_the_residual_moves_the_prior_action_by_half_the_range_and_stays_in_it():
    from arena_gym.wrappers.sb3 import robot_actions

    low, high = np.array([-0.2, -2.0]), np.array([0.2, 2.0])
    prior = np.array([[0.1, 0.5], [0.1, 0.5]])
    got = robot_actions(np.array([[-0.5, 0.25], [1.0, -1.0]]), low, high, prior)
    assert np.allclose(got, [[0.0, 1.0], [0.2, -1.5]], rtol=0, atol=1e-15)


def test_a_model_trained_on_a_prior_is_evaluated_and_shipped_with_it(tmp_path):
    import torch

    from arena_gym.cli import main
    from arena_gym.train.model_files import ModelFileError, model_prior
    from arena_gym.train.policies import make_policy, sb3_policy
    from arena_gym.train.pretrained import export_policy
    from arena_gym.train.training import TrainSettings, train

    out = tmp_path / "run"
    train(TrainSettings(num_envs=2, timesteps=32, n_steps=16, batch_size=16, n_epochs=1,
                        eval_every_s=1e9, eval_episodes=2, eval_envs=2, out=str(out),
                        progress_bar=False, prior="reactive"),
          {"max_episode_steps": 20})
    assert json.loads((out / "run.json").read_text())["settings"]["prior"] == "reactive"
    assert model_prior(out / "final_model.zip") == "reactive"
    shipped = export_policy(out / "final_model.zip", tmp_path / "small.zip", "default")
    assert model_prior(shipped) == "reactive"

    # the trained weights with a zero action head: the policy is its prior, through eval's door
    import stable_baselines3 as sb3

    model = sb3.PPO.load(shipped, device="cpu")
    with torch.no_grad():
        model.policy.action_net.weight.zero_()
        model.policy.action_net.bias.zero_()
    model.save(tmp_path / "zero.zip")
    env = ArenaVectorEnv(4)
    try:
        obs, _ = env.reset(seed=3)
        for _ in range(5):
            acted = make_policy(str(tmp_path / "zero.zip"), env)(obs)
            expected = reactive(env)(obs)
            assert np.array_equal(acted, expected)
            obs, *_ = env.step(acted)
        with pytest.raises(ModelFileError) as error:
            sb3_policy(tmp_path / "zero.zip", env.single_observation_space,
                       env.single_action_space)
    finally:
        env.close()
    assert str(error.value) == (f"model file {str(tmp_path / 'zero.zip')!r}: expected the "
                                "policy it was trained on as prior ('reactive'), got none")
    assert main(["eval", str(tmp_path / "zero.zip"), "--episodes", "4", "--num-envs", "2"]) == 0


def test_an_unknown_prior_is_named_with_the_registered_policies(tmp_path, capsys):
    from arena_gym.cli import main

    assert main(["train", "--prior", "follower", "--steps", "16", "--num-envs", "2",
                 "--out", str(tmp_path / "run"), "--no-progress"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "arena-gym: error: prior 'follower': expected a registered policy, one of "
        "random, reactive")
    assert not (tmp_path / "run").exists()
