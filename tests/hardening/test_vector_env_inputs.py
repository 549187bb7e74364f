"""The vector env: seeds as an int or a list of num_envs ints; complex and object actions
refused; step and reset after close() raise a clear error."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.envs.vector_env import ArenaVectorEnv


@pytest.fixture(scope="module")
def env():
    env = ArenaVectorEnv(3, max_episode_steps=20)
    yield env
    env.close()


def test_a_list_of_seeds_is_accepted_and_equals_the_int_form(env):
    a, _ = env.reset(seed=[5, 6, 7])
    b, _ = env.reset(seed=5)  # env i gets 5 + i
    assert all(np.array_equal(a[k], b[k]) for k in a)
    c, _ = env.reset(seed=np.array([5, 9, 7]))
    assert np.array_equal(c["goal"][0], a["goal"][0])
    assert not np.array_equal(c["goal"][1], a["goal"][1])


@pytest.mark.parametrize("seed, message", [
    ([1, 2], "seed: expected 3 seeds, got 2"),
    ([1, 2, -3], "seed: expected an integer >= 0 or a list of them, got [1, 2, -3]"),
    ([1, 2, 3.5], "seed: expected an integer >= 0 or a list of them, got [1, 2, 3.5]"),
    ("7", "seed: expected an integer >= 0 or a list of them, got '7'"),
])
def test_bad_seeds_are_refused(env, seed, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        env.reset(seed=seed)


@pytest.mark.parametrize("actions, message", [
    (np.full((3, 2), 0.1 + 1j), "actions: expected real numbers, got dtype complex128"),
    (np.array([[0.1, "a"]] * 3, dtype=object), "actions: expected real numbers, got dtype object"),
])
def test_complex_and_object_actions_are_refused_and_nothing_steps(env, actions, message):
    env.reset(seed=0)
    pose = env.core.task.pose.copy()
    with pytest.raises(ValueError, match=re.escape(message)):
        env.step(actions)
    env.core.task.read_poses()
    assert np.array_equal(env.core.task.pose, pose)


def test_step_and_reset_after_close_raise():
    env = ArenaVectorEnv(1, max_episode_steps=5)
    env.reset(seed=0)
    env.close()
    with pytest.raises(RuntimeError, match=re.escape(
            "step() called after close(): expected an open env (make a new one)")):
        env.step(np.zeros((1, 2)))
    with pytest.raises(RuntimeError, match=re.escape(
            "reset() called after close(): expected an open env (make a new one)")):
        env.reset(seed=0)


def test_a_float16_action_steps_as_the_same_float64_one(env):
    """numba takes no float16: the action is a number all the same (cast at the boundary)."""
    env.reset(seed=0)
    actions = np.array([[0.1, -0.25]] * 3, dtype=np.float16)
    obs, *_ = env.step(actions)
    twin = ArenaVectorEnv(3, max_episode_steps=50)
    twin.reset(seed=0)
    again, *_ = twin.step(actions.astype(np.float64))
    twin.close()
    np.testing.assert_array_equal(obs["scan"], again["scan"])
    np.testing.assert_array_equal(obs["last_action"], again["last_action"])


def test_an_unknown_reset_option_is_refused_and_nothing_resets(env):
    import gymnasium as gym

    import arena_gym  # noqa: F401 - registers the env

    env.reset(seed=0)
    env.step(np.full((3, 2), 0.2))
    pose = env.core.task.pose.copy()
    with pytest.raises(ValueError, match=re.escape(
            "options: expected only 'reset_mask', got 'bogus'")):
        env.reset(options={"bogus": 1})
    env.core.task.read_poses()
    assert np.array_equal(env.core.task.pose, pose)
    single = gym.make("ArenaMujoco-v0", max_episode_steps=5)
    with pytest.raises(ValueError, match=re.escape(
            "options: expected none (this env takes no reset options), got 'bogus'")):
        single.reset(options={"bogus": 1})
    single.close()
