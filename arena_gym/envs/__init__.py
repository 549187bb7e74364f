"""Gymnasium environments: ArenaEnv (single) and ArenaVectorEnv (batched, lockstep)."""

from arena_gym.envs.registration import ENV_ID, register_envs

__all__ = ["ENV_ID", "register_envs"]
