"""ArenaMujoco-v0 through RLlib's registry, vectorised by our env (needs the [rllib] extra:
without it these tests skip, and fail when CI=true)."""

from __future__ import annotations

import numpy as np
import pytest

from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.wrappers.policy_obs import flatten
from tests.conftest import require
from tests.distributed.compare import assert_identical


@pytest.fixture
def registry(ray_cluster):
    require("ray.tune", "pip install 'arena_gym[rllib]'")
    from ray.rllib.env.env_context import EnvContext
    from ray.tune.registry import ENV_CREATOR, _global_registry

    from arena_gym.distributed import rllib

    name = rllib.register()

    def make(config: dict):
        return _global_registry.get(ENV_CREATOR, name)(EnvContext(config, worker_index=0))

    return make


def test_the_registry_builds_our_vector_env_and_the_distributed_one(registry):
    local = ArenaVectorEnv(4, max_episode_steps=20)
    want, _ = local.reset(seed=0)
    env = registry({"num_envs": 4, "max_episode_steps": 20, "flat": False})
    assert type(env) is ArenaVectorEnv
    assert_identical(env.reset(seed=0)[0], want)
    flat = registry({"num_envs": 4, "max_episode_steps": 20, "distributed": {"shards": 2}})
    assert type(flat.unwrapped).__name__ == "DistributedVectorEnv"
    obs, _ = flat.reset(seed=0)
    assert obs.shape == (4, 94) and obs.tobytes() == flatten(
        want, local.single_observation_space).tobytes()
    single = registry({"max_episode_steps": 20})  # RLlib's own vectorisation: single envs
    first, _ = single.reset(seed=2)
    assert first.tobytes() == flatten(want, local.single_observation_space)[2].tobytes()
    for e in (local, env, flat, single):
        e.close()


def test_rllib_ppo_names_the_env_and_samples_our_vector_env(registry):
    from ray.rllib.algorithms.ppo import PPOConfig

    config = (PPOConfig()
              .environment("ArenaMujoco-v0", env_config={"max_episode_steps": 20})
              .env_runners(num_env_runners=0, num_envs_per_env_runner=2,
                           gym_env_vectorize_mode="vector_entry_point")
              .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
              .rl_module(model_config={"fcnet_hiddens": [16]}))
    algo = config.build_algo()
    try:
        env = algo.env_runner.env.unwrapped
        assert type(env) is ArenaVectorEnv and env.num_envs == 2
        result = algo.train()["env_runners"]
        assert result["num_env_steps_sampled"] == 64
        assert result["episode_len_max"] == 20 and result["num_episodes"] == 2  # our limit
        assert np.isfinite(result["episode_return_mean"])
    finally:
        algo.stop()
