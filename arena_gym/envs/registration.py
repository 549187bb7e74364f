"""The one registry entry: `ArenaMujoco-v0`, single and vectorised."""

from __future__ import annotations

ENV_ID = "ArenaMujoco-v0"


def register_envs() -> None:
    from gymnasium.envs.registration import register, registry

    from arena_gym.config import EnvConfig

    if ENV_ID not in registry:
        # the spec's limit is the config's default, so that `make` (Gymnasium's TimeLimit)
        # and `make_vec` (passed to the vector env's config) end episodes at the same step,
        # and spec readers (TimeAwareObservation) find it
        register(
            id=ENV_ID,
            entry_point="arena_gym.envs.single_env:ArenaEnv",
            vector_entry_point="arena_gym.envs.vector_env:ArenaVectorEnv",
            max_episode_steps=EnvConfig().max_episode_steps,
        )
