"""ArenaMujoco-v0 through Gymnasium: checks, vectorisation modes, pickling, validation."""

from __future__ import annotations

import pickle
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import TimeAwareObservation
from gymnasium.wrappers.vector import NormalizeReward, RecordEpisodeStatistics

import arena_gym  # noqa: F401  (registers the id)
from arena_gym.config import ConfigError
from arena_gym.envs.vector_env import ArenaVectorEnv

SMALL = {"max_episode_steps": 60}


# the only advice check_env gives: the robot's action range and the unbounded goal distance
ADVICE = ("For Box action spaces, we recommend using a symmetric and normalized space",
          "A Box observation space maximum value is infinity")


def test_check_env_passes_on_the_single_env():
    env = gym.make("ArenaMujoco-v0", **SMALL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)
    messages = [str(w.message) for w in caught]
    unexpected = [m for m in messages if not any(a in m for a in ADVICE)]
    assert unexpected == []  # an observation outside its space, a bad dtype, ... would be here
    assert all(any(a in m for m in messages) for a in ADVICE)
    env.close()


def test_max_episode_steps_in_make_truncates_with_gymnasium_time_limit():
    env = gym.make("ArenaMujoco-v0", max_episode_steps=5)
    env.reset(seed=0)
    for t in range(1, 6):
        _, _, terminated, truncated, info = env.step(np.zeros(2, np.float32))
        assert truncated == (t == 5) and not terminated
    assert "episode_result" not in info  # documented: the env itself did not end it
    env.close()


def test_max_episode_steps_in_make_vec_reaches_the_env_and_its_results():
    envs = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point",
                        max_episode_steps=5)
    envs.reset(seed=0)
    for t in range(1, 6):
        _, _, terminated, truncated, info = envs.step(np.zeros((2, 2), np.float32))
        assert truncated.tolist() == [t == 5] * 2 and not terminated.any()
    assert info["episode_result"]["result"].tolist() == ["timeout", "timeout"]
    assert info["episode_result"]["steps"].tolist() == [5, 5]
    envs.close()


def test_spec_carries_max_episode_steps_for_time_aware_observation():
    assert gym.spec("ArenaMujoco-v0").max_episode_steps == 300
    env = TimeAwareObservation(gym.make("ArenaMujoco-v0"), flatten=False)
    obs, _ = env.reset(seed=0)
    assert obs["time"] == 0
    for k in range(1, 4):
        obs, *_ = env.step(np.zeros(2, np.float32))
        assert obs["time"] == k
    env.close()


def test_record_episode_statistics_and_normalize_reward_over_the_vector_env():
    raw = ArenaVectorEnv(2, max_episode_steps=5)
    envs = RecordEpisodeStatistics(NormalizeReward(ArenaVectorEnv(2, max_episode_steps=5)))
    raw.reset(seed=3)
    envs.reset(seed=3)
    normalize = envs.env
    returns = np.zeros(2)
    action = np.tile([0.2, 0.5], (2, 1))
    for _ in range(5):
        _, expected, *_ = raw.step(action)
        _, reward, _, truncated, info = envs.step(action)
        scale = np.sqrt(normalize.return_rms.var + normalize.epsilon)
        np.testing.assert_allclose(reward, expected / scale, rtol=1e-6)
        returns += reward
    assert truncated.all()
    assert info["episode"]["l"].tolist() == [5, 5]
    np.testing.assert_allclose(info["episode"]["r"], returns, rtol=1e-6)
    assert info["episode_result"]["result"].tolist() == ["timeout", "timeout"]
    envs.close()
    raw.close()


def test_render_mode_none_is_accepted_and_unknown_modes_raise_type_error():
    env = gym.make("ArenaMujoco-v0", render_mode=None, **SMALL)
    assert env.unwrapped.render_mode is None
    env.close()
    envs = ArenaVectorEnv(1, render_mode=None)
    assert envs.render_mode is None
    envs.close()
    refused = re.escape("render_mode: expected None or one of ['human', 'rgb_array'], got 'rgb'")
    with pytest.raises(TypeError, match=refused):  # a TypeError: SB3's make_vec_env retries
        ArenaVectorEnv(1, render_mode="rgb")
    with pytest.warns(UserWarning, match="render_mode='rgb' that is not in the possible"), \
            pytest.raises(TypeError, match=refused):
        gym.make("ArenaMujoco-v0", render_mode="rgb", **SMALL)


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync", "async"])
def test_make_vec_in_every_mode(mode):
    # async workers start fresh ("spawn"): a fork of this test process would copy the locks
    # its other threads hold (a test's Ray cluster lives as long as the process)
    extra = {"vector_kwargs": {"context": "spawn"}} if mode == "async" else {}
    envs = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode=mode, **SMALL, **extra)
    obs, _ = envs.reset(seed=1)
    assert obs["scan"].shape == (2, 90) and obs["goal"].shape == (2, 2)
    obs, reward, terminated, _, _ = envs.step(envs.action_space.sample())
    assert reward.shape == (2,) and terminated.dtype == bool
    assert envs.observation_space.contains(obs)
    envs.close()


def test_vector_env_equals_sync_vector_env_step_by_step():
    kwargs = {"max_episode_steps": 25}
    ours = gym.make_vec("ArenaMujoco-v0", num_envs=3, vectorization_mode="vector_entry_point",
                        **kwargs)
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
        for x, y in zip(a[1:4], b[1:4], strict=True):
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
    envs = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point",
                        **SMALL)
    envs.reset(seed=0)
    before = envs.unwrapped.core.sim.step_count
    with pytest.raises(ValueError, match=re.escape("actions: expected shape (2, 2), got (2,)")):
        envs.step(np.zeros(2))
    with pytest.raises(ValueError, match=re.escape(
            "actions: expected finite numbers, got nan at [1, 0]")):
        envs.step(np.array([[0.1, 0.0], [np.nan, 0.0]]))
    assert envs.unwrapped.core.sim.step_count == before
    obs, *_ = envs.step(np.array([[5.0, -9.0], [0.1, 0.2]]))  # out of range: clipped
    np.testing.assert_allclose(obs["last_action"], [[0.22, -2.84], [0.1, 0.2]], rtol=1e-6)
    envs.close()


def test_unknown_config_key_suggests_the_close_one():
    with pytest.raises(ConfigError, match=re.escape(
            "unknown config key 'physcs_dt'; did you mean 'physics_dt'?")):
        gym.make("ArenaMujoco-v0", physcs_dt=0.002)
    with pytest.raises(ConfigError, match=re.escape(
            "unknown config key 'reward.gaol'; did you mean 'reward.goal'?")):
        gym.make("ArenaMujoco-v0", reward={"gaol": 1.0})
    with pytest.raises(ConfigError, match=re.escape(
            "control_dt: expected a whole multiple of physics_dt (0.025), got 0.06")):
        gym.make("ArenaMujoco-v0", control_dt=0.06)


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
    with pytest.raises(ConfigError, match=re.escape(
            "unknown config key 'reward.colision'; did you mean 'reward.collision'?")):
        load_config(bad)
