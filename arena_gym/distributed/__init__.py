"""ArenaMujoco-v0 beyond one machine: its envs as Ray actors (needs the [distributed] extra).

    from arena_gym.distributed import DistributedVectorEnv, vector_env
    envs = DistributedVectorEnv(32, distributed={"shards": 4})  # equals ArenaVectorEnv(32)
    envs = vector_env(32, distributed=None)                     # the local ArenaVectorEnv

Importing this package imports no Ray: Ray loads when a DistributedVectorEnv is made.
RLlib: arena_gym.distributed.rllib.register() (see docs/distributed.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena_gym.distributed.settings import DistributedSettings
from arena_gym.distributed.vector_env import DistributedVectorEnv, ShardDiedError

__all__ = ["DistributedSettings", "DistributedVectorEnv", "ShardDiedError", "vector_env"]


def vector_env(num_envs: int, distributed: DistributedSettings | Mapping | None = None,
               **kwargs: Any):
    """The run's vector env: ArenaVectorEnv, or a DistributedVectorEnv when `distributed`
    is given. Other keyword arguments go to the env (config, render_mode, overrides)."""
    if distributed is None:
        from arena_gym.envs.vector_env import ArenaVectorEnv

        return ArenaVectorEnv(num_envs, **kwargs)
    return DistributedVectorEnv(num_envs, distributed=distributed, **kwargs)
