"""What `gymnasium.make` and `make_vec` build: the one registry entry, `ArenaMujoco-v0`,
single and vectorised, on either backend.

`gymnasium.make_vec("ArenaMujoco-v0", num_envs=N)` builds the CPU ArenaVectorEnv;
`backend="mjx"` the same task on MJX (arena_gym.mjx.MjxVectorEnv, JAX on a GPU or CPU).
"""

from __future__ import annotations

from typing import Any

from arena_gym.envs import ENV_ID


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
            vector_entry_point="arena_gym.make:make_vector_env",
            max_episode_steps=EnvConfig().max_episode_steps,
        )


BACKENDS = ("cpu", "mjx")


def make_vector_env(num_envs: int = 1, backend: str = "cpu", **kwargs: Any) -> Any:
    """The vector env of `backend`: "cpu" (MuJoCo, ArenaVectorEnv) or "mjx" (MjxVectorEnv)."""
    if backend == "cpu":
        from arena_gym.envs.vector_env import ArenaVectorEnv

        return ArenaVectorEnv(num_envs, **kwargs)
    if backend == "mjx":
        from arena_gym.mjx.vector_env import MjxVectorEnv

        # the MJX task reads a free joint's pose: it runs the wheeled base (docs/mjx.md)
        kwargs.setdefault("base", "wheeled")
        return MjxVectorEnv(num_envs, **kwargs)
    raise ValueError(f"backend: expected one of {BACKENDS}, got {backend!r}")
