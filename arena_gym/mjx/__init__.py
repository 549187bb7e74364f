"""ArenaMujoco-v0 on MJX: the navigation task for thousands of envs on a GPU (docs/mjx.md).

    import gymnasium
    envs = gymnasium.make_vec("ArenaMujoco-v0", num_envs=4096, backend="mjx")

or the functional API for JAX-native loops:

    from arena_gym.mjx import MjxTask
    task = MjxTask.make(load_config())
    state = task.reset(jax.vmap(jax.random.PRNGKey)(jnp.arange(n)))   # State, batched
    state = task.step(state, actions)                                  # (n, 2) twists

Importing this package imports no JAX (every name loads on first use); without JAX and
mujoco-mjx installed, using it raises ImportError with the install hint.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "MjxTask": "arena_gym.mjx.task",
    "State": "arena_gym.mjx.task",
    "MjxVectorEnv": "arena_gym.mjx.vector_env",
    "choose_impl": "arena_gym.mjx.deps",
    "INSTALL_HINT": "arena_gym.mjx.deps",
    "UnsupportedConfig": "arena_gym.mjx.model",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'arena_gym.mjx' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
