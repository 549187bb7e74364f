"""ArenaMujoco-v0 in RLlib's env registry, its vectorisation left to our batched env.

    from arena_gym.distributed import rllib
    from ray.rllib.algorithms.ppo import PPOConfig
    rllib.register()
    config = (PPOConfig()
              .environment("ArenaMujoco-v0", env_config={"config": "staged"})  # + "flat": True
              .env_runners(num_env_runners=4, num_envs_per_env_runner=32,
                           gym_env_vectorize_mode="vector_entry_point"))

RLlib's new API stack calls the creator with `num_envs` in the env config when its env
runner wants a vector env (gym_env_vectorize_mode "vector_entry_point"): each env runner
then holds one ArenaVectorEnv of that many lockstep envs, or a DistributedVectorEnv when
env_config has `distributed` (its shards are more Ray actors). Without `num_envs` (RLlib's
own vectorisation modes) it makes single ArenaEnvs. The other env_config keys are the
env's keyword arguments: `config` (a YAML file or built-in name) and EnvConfig overrides.
Needs Ray's RLlib (see docs/distributed.md for the install).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena_gym.envs import ENV_ID

RLLIB_HINT = ("RLlib's registry needs ray[tune]: pip install 'arena_gym[rllib]' "
              "(see docs/distributed.md)")


def make_env(env_config: Mapping[str, Any]):
    """RLlib's env creator: a vector env when `num_envs` is given, else one ArenaEnv;
    `flat` (default True) gives policy_obs's flat fixed-scale Box, which RLlib's default
    encoders take (they take no Dict)."""
    kwargs = dict(env_config)  # RLlib's EnvContext is a dict with worker attributes
    num_envs = kwargs.pop("num_envs", None)
    distributed = kwargs.pop("distributed", None)
    flat = kwargs.pop("flat", True)
    if num_envs is None:
        if distributed is not None:
            raise ValueError("env_config['distributed']: expected with a vector env "
                             "(gym_env_vectorize_mode='vector_entry_point'), got a single env")
        return _single(kwargs, flat)
    from arena_gym.distributed import vector_env
    from arena_gym.wrappers.policy_obs import FlatObservation

    env = vector_env(num_envs, distributed=distributed, **kwargs)
    return FlatObservation(env) if flat else env


def _single(kwargs: dict[str, Any], flat: bool):
    from gymnasium.wrappers import TransformObservation

    from arena_gym.envs.single_env import ArenaEnv
    from arena_gym.wrappers.policy_obs import flat_space, flatten

    env = ArenaEnv(**kwargs)
    if not flat:
        return env
    space = env.observation_space
    return TransformObservation(  # the vector rule on a batch of one: one scaling
        env, lambda obs: flatten({k: v[None] for k, v in obs.items()}, space)[0],
        flat_space(space))


def register(name: str = ENV_ID) -> str:
    """Register the env creator under `name` in RLlib's (Ray Tune's) registry; returns it."""
    try:
        from ray.tune.registry import register_env
    except ImportError as exc:
        raise ImportError(RLLIB_HINT) from exc
    register_env(name, make_env)
    return name
