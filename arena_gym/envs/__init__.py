"""Gymnasium environments: ArenaEnv (single) and ArenaVectorEnv (batched, lockstep); the
id they are registered under (arena_gym.make registers it)."""

ENV_ID = "ArenaMujoco-v0"

__all__ = ["ENV_ID"]
