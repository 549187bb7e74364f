"""DistributedVectorEnv on a local Ray cluster (two actors): the local env, bit for bit,
through Gymnasium's checks, the SB3 adapter and the training command line."""

from __future__ import annotations

import re

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.utils.passive_env_checker import check_obs
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from arena_gym.envs.vector_env import ArenaVectorEnv
from tests.distributed.compare import assert_identical

# short episodes and a curriculum that moves every two episodes: the stage each shard's
# resets use must be the one the run's episodes, counted in env order, reached
STAGED = {"max_episode_steps": 30,
          "curriculum": {"stages": [[0, 1], [2, 4], [5, 8]], "window": 2, "advance": 0.0,
                         "fall_back": 0.0}}


def distributed(n: int, shards: int = 2, **kwargs):
    from arena_gym.distributed import DistributedVectorEnv

    on_failure = kwargs.pop("on_failure", "raise")
    return DistributedVectorEnv(n, distributed={"shards": shards, "on_failure": on_failure},
                                **kwargs)


def actions(env, rng: np.random.Generator) -> np.ndarray:
    space = env.action_space
    return rng.uniform(space.low, space.high).astype(np.float32)


def test_distributed_run_equals_the_local_run_bit_for_bit_over_200_steps(ray_cluster):
    local, remote = ArenaVectorEnv(4, **STAGED), distributed(4, **STAGED)
    assert_identical(remote.reset(seed=7), local.reset(seed=7))
    rng = np.random.default_rng(0)
    ended, stages = 0, {0}
    for _ in range(200):
        a = actions(local, rng)
        got, want = remote.step(a), local.step(a)
        assert_identical(got, want)
        ended += int((want[2] | want[3]).sum())
        stages.add(local.curriculum_stage)
        assert remote.curriculum_stage == local.curriculum_stage
    assert ended >= 24 and stages == {0, 2}  # episodes ended, the curriculum moved (0 -> 2)
    remote.close()
    local.close()


def test_seeded_masked_resets_equal_the_local_env(ray_cluster):
    local, remote = ArenaVectorEnv(3, max_episode_steps=30), distributed(3, max_episode_steps=30)
    local.reset(seed=1)
    remote.reset(seed=1)
    mask = np.array([False, True, True])  # across both shards (sizes 2 and 1)
    for _ in range(3):
        a = actions(local, np.random.default_rng(2))
        assert_identical(remote.step(a), local.step(a))
        assert_identical(remote.reset(seed=[10, 11, 12], options={"reset_mask": mask}),
                         local.reset(seed=[10, 11, 12], options={"reset_mask": mask}))
    remote.close()
    local.close()


def test_gymnasium_checks_for_a_vector_env(ray_cluster):
    env = distributed(3, max_episode_steps=5)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert env.observation_space.shape is None and env.observation_space["scan"].shape == (3, 90)
    obs, info = env.reset(seed=3)
    check_obs(obs, env.observation_space, "reset")
    assert info == {}
    again, _ = env.reset(seed=3)
    assert data_equivalence(obs, again, exact=True)  # same seed, same first observations
    zero = np.zeros((3, 2), np.float32)
    for t in range(1, 7):  # NEXT_STEP: step 5 ends the episodes, step 6 resets them
        obs, reward, terminated, truncated, info = env.step(zero)
        check_obs(obs, env.observation_space, "step")
        assert truncated.tolist() == [t == 5] * 3 and not terminated.any()
        if t == 6:
            assert reward.tolist() == [0.0] * 3 and info["_reward_terms"].tolist() == [False] * 3
            assert data_equivalence(obs, again, exact=False) is False  # new episodes (seeds go on)
    stats = RecordEpisodeStatistics(env)  # Gymnasium's vector wrappers compose
    stats.reset(seed=3)
    for _ in range(5):
        _, _, _, _, info = stats.step(zero)
    assert info["episode"]["l"].tolist() == [5, 5, 5]
    env.close()


def test_bad_input_gets_the_local_env_error_texts(ray_cluster):
    env = distributed(2, max_episode_steps=5)
    with pytest.raises(RuntimeError, match=re.escape(
            "step() called before reset(): expected env.reset() first")):
        env.step(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match=re.escape("seed: expected 2 seeds, got 3")):
        env.reset(seed=[1, 2, 3])
    env.reset(seed=0)
    with pytest.raises(ValueError, match=re.escape(
            "options['reset_mask'] must have shape (2,), got (3,)")):
        env.reset(options={"reset_mask": [True, False, True]})
    with pytest.raises(ValueError, match=re.escape("actions: expected shape (2, 2), got (3, 2)")):
        env.step(np.zeros((3, 2), np.float32))
    env.close()
    with pytest.raises(RuntimeError, match=re.escape("step() called after close()")):
        env.step(np.zeros((2, 2), np.float32))


def test_settings_are_checked_before_any_actor_starts():
    from arena_gym.distributed import DistributedVectorEnv

    with pytest.raises(ValueError, match=re.escape(
            "distributed: unknown key 'shard' (did you mean 'shards'?)")):
        DistributedVectorEnv(4, distributed={"shard": 2})
    with pytest.raises(ValueError, match=re.escape(
            "distributed.on_failure: expected one of ['raise', 'restart'], got 'retry'")):
        DistributedVectorEnv(4, distributed={"on_failure": "retry"})
    with pytest.raises(ValueError, match=re.escape(
            "distributed.shards: expected at most num_envs (2) shards, got 3")):
        DistributedVectorEnv(2, distributed={"shards": 3})


def test_wrapped_shards_equal_the_wrapped_local_env(ray_cluster):
    from functools import partial

    from arena_gym.wrappers.vector import ScanStack

    stack = partial(ScanStack, key="scan", k=3)  # picklable: built inside each actor
    local = stack(ArenaVectorEnv(3, max_episode_steps=4))
    remote = distributed(3, max_episode_steps=4, wrap=stack)
    assert remote.single_observation_space == local.single_observation_space
    assert_identical(remote.reset(seed=4), local.reset(seed=4))
    rng = np.random.default_rng(1)
    for _ in range(6):  # past an episode end: the stacks refill on the reset observation
        a = actions(local, rng)
        assert_identical(remote.step(a), local.step(a))
    remote.close()
    local.close()


def test_render_gathers_every_shards_frames_in_env_order(ray_cluster):
    local = ArenaVectorEnv(3, render_mode="rgb_array", render={"width": 64, "height": 48})
    remote = distributed(3, render_mode="rgb_array", render={"width": 64, "height": 48})
    local.reset(seed=9)
    remote.reset(seed=9)
    got, want = remote.render(), local.render()
    assert len(got) == 3 and got[0].shape == (48, 64, 3)
    assert [f.tobytes() for f in got] == [f.tobytes() for f in want]
    assert len({f.tobytes() for f in got}) == 3  # three different rooms, each in its place
    remote.close()
    local.close()
