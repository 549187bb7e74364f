"""The one registry entry: `ArenaMujoco-v0`, single and vectorised."""

from __future__ import annotations

ENV_ID = "ArenaMujoco-v0"


def register_envs() -> None:
    from gymnasium.envs.registration import register, registry

    if ENV_ID not in registry:
        register(
            id=ENV_ID,
            entry_point="arena_gym.envs.single_env:ArenaEnv",
            vector_entry_point="arena_gym.envs.vector_env:ArenaVectorEnv",
        )
