"""Diverging physics at any step of an episode, the first after a reset included, ends that
env's episode truncated with info["diverged"] and reward 0; the other envs go on. MuJoCo's
auto-reset at a clock of 0 leaves no lag to see: its warnings tell (sim/divergence.py)."""

from __future__ import annotations

import numpy as np
import pytest

from arena_gym.envs.vector_env import ArenaVectorEnv

BAD = 1


@pytest.fixture
def env():
    env = ArenaVectorEnv(3)
    env.reset(seed=0)
    yield env
    env.close()


def _robot_xy(env: ArenaVectorEnv) -> np.ndarray:
    return env.core.task.pose[:, :2].copy()


@pytest.mark.parametrize("value", [1e10, np.nan], ids=["1e10", "nan"])
@pytest.mark.parametrize("after_steps", [0, 3], ids=["first-step", "later"])
def test_a_blow_up_ends_that_env_truncated_diverged_with_reward_0(env, value, after_steps):
    actions = np.tile([0.2, 0.3], (3, 1))
    for _ in range(after_steps):
        env.step(actions)
    env.core.sim.state(BAD, "qvel")[:] = value
    before = _robot_xy(env)
    obs, reward, terminated, truncated, info = env.step(actions)
    np.testing.assert_array_equal(truncated, [False, True, False])
    np.testing.assert_array_equal(terminated, [False, False, False])
    np.testing.assert_array_equal(info["diverged"], [False, True, False])
    assert reward[BAD] == 0.0 and all(v[BAD] == 0.0 for v in info["reward_terms"].values())
    assert info["episode_result"]["result"][BAD] == "diverged"
    assert all(np.isfinite(v).all() for v in obs.values())  # a finite (reset) observation
    others = [e for e in range(3) if e != BAD]
    moved = np.hypot(*(_robot_xy(env)[others] - before[others]).T)
    assert (moved > 1e-3).all() and (reward[others] != 0).all()  # the others drove on
    # the next step restarts it (NEXT_STEP autoreset); nothing diverges any more
    obs, reward, terminated, truncated, info = env.step(actions)
    assert "diverged" not in info and reward[BAD] == 0.0 and not truncated.any()


def test_mujoco_resetting_an_env_at_its_first_step_is_a_divergence(env):
    """A spawn overlapping a wall blows up in the first physics step after the reset, where
    MuJoCo's auto-reset restarts the env with its clock where it would have been."""
    core = env.core
    core.sim.state(BAD, "qvel")[:] = 9e9  # below mjMAXVAL: MuJoCo steps, its qacc blows up
    _, reward, _, truncated, info = env.step(np.zeros((3, 2)))
    np.testing.assert_array_equal(truncated, [False, True, False])
    np.testing.assert_array_equal(info["diverged"], [False, True, False])
    assert reward[BAD] == 0.0
