"""ArenaMujoco-v0 through Gymnasium: checks, vectorisation modes, pickling, validation."""

from __future__ import annotations

import pickle
import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import arena_gym  # noqa: F401  (registers the id)
from arena_gym.config import ConfigError

SMALL = {"max_episode_steps": 60}


def test_check_env_passes_on_the_single_env():
    env = gym.make("ArenaMujoco-v0", **SMALL)
    with pytest.warns(UserWarning):  # only Gymnasium's advice on bounds, no failure
        check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync", "async"])
def test_make_vec_in_every_mode(mode):
    envs = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode=mode, **SMALL)
    obs, _ = envs.reset(seed=1)
    assert obs["scan"].shape == (2, 360) and obs["goal"].shape == (2, 2)
    obs, reward, terminated, _, _ = envs.step(envs.action_space.sample())
    assert reward.shape == (2,) and terminated.dtype == bool
    assert envs.observation_space.contains(obs)
    envs.close()


def test_vector_env_equals_sync_vector_env_step_by_step():
    kwargs = {"max_episode_steps": 25}
    ours = gym.make_vec("ArenaMujoco-v0", num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    sync = gym.make_vec("ArenaMujoco-v0", num_envs=3, vectorization_mode="sync", **kwargs)
    for env in (ours, sync):
        env.reset(seed=5)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(60):  # crosses timeouts and autoresets
        action = rng.uniform(ours.action_space.low, ours.action_space.high).astype(np.float32)
        a, b = ours.step(action), sync.step(action)
        for key in a[0]:
            assert a[0][key].tobytes() == b[0][key].tobytes(), key
        for x, y in zip(a[1:4], b[1:4]):
            assert x.tobytes() == y.tobytes()
        ends += int((a[2] | a[3]).sum())
    assert ends >= 3
    ours.close()
    sync.close()


def test_pickled_env_resets_to_the_same_episode():
    env = gym.make("ArenaMujoco-v0", **SMALL).unwrapped
    clone = pickle.loads(pickle.dumps(env))
    a, _ = env.reset(seed=4)
    b, _ = clone.reset(seed=4)
    for key in a:
        assert a[key].tobytes() == b[key].tobytes()
    assert clone.cfg == env.cfg


def test_actions_are_checked_before_anything_steps():
    envs = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point", **SMALL)
    envs.reset(seed=0)
    before = envs.unwrapped.core.sim.step_count
    with pytest.raises(ValueError, match=re.escape("actions: expected shape (2, 2), got (2,)")):
        envs.step(np.zeros(2))
    with pytest.raises(ValueError, match=re.escape("actions: expected finite numbers, got nan at [1, 0]")):
        envs.step(np.array([[0.1, 0.0], [np.nan, 0.0]]))
    assert envs.unwrapped.core.sim.step_count == before
    obs, *_ = envs.step(np.array([[5.0, -9.0], [0.1, 0.2]]))  # out of range: clipped
    np.testing.assert_allclose(obs["last_action"], [[0.22, -2.84], [0.1, 0.2]], rtol=1e-6)
    envs.close()


def test_unknown_config_key_suggests_the_close_one():
    with pytest.raises(ConfigError, match=re.escape("unknown config key 'physcs_dt'; did you mean 'physics_dt'?")):
        gym.make("ArenaMujoco-v0", physcs_dt=0.002)
    with pytest.raises(ConfigError, match=re.escape("unknown config key 'reward.gaol'; did you mean 'reward.goal'?")):
        gym.make("ArenaMujoco-v0", reward={"gaol": 1.0})
    with pytest.raises(ConfigError, match=re.escape("control_dt: expected a whole multiple of physics_dt (0.005), got 0.012")):
        gym.make("ArenaMujoco-v0", control_dt=0.012)


def test_discrete_actions_come_from_model_params():
    env = gym.make("ArenaMujoco-v0", action="discrete", **SMALL).unwrapped
    assert env.action_space == gym.spaces.Discrete(7)
    env.reset(seed=0)
    obs, *_ = env.step(0)  # move_forward: 0.22 m/s
    np.testing.assert_allclose(obs["last_action"], [0.22, 0.0])
    with pytest.raises(ValueError, match=re.escape("action: expected an integer in [0, 7), got 9")):
        env.step(9)


def test_shipped_configs_load(tmp_path):
    from pathlib import Path

    from arena_gym.config import EnvConfig, load_config

    root = Path(__file__).resolve().parents[2] / "configs"
    assert load_config(root / "default.yaml") == EnvConfig()
    staged = load_config(root / "staged.yaml", physics_dt=0.002)
    assert staged.curriculum.stages[0] == (0, 2) and staged.physics_dt == 0.002
    # by name: the copies shipped inside the package (what a wheel install has)
    assert load_config("staged") == load_config(root / "staged.yaml")
    assert load_config("default") == EnvConfig()
    bad = tmp_path / "bad.yaml"
    bad.write_text("reward:\n  colision: -10\n")
    with pytest.raises(ConfigError, match=re.escape("unknown config key 'reward.colision'; did you mean 'reward.collision'?")):
        load_config(bad)
