"""The MJX backend's optional dependencies: imported on first use, with an install hint,
and the choice of MJX's implementation (MuJoCo Warp on a GPU where installed, else JAX)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

INSTALL_HINT = ("the MJX backend needs JAX and MuJoCo MJX: pip install 'arena_gym[mjx]' "
                "(on a GPU also jax[cuda12] and, for MuJoCo Warp, mujoco-warp)")


def require() -> tuple[ModuleType, ModuleType, ModuleType]:
    """(jax, jax.numpy, mujoco.mjx), or ImportError with the install hint."""
    try:
        import jax
        import jax.numpy as jnp
        from mujoco import mjx
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} (missing: {exc.name})") from None
    return jax, jnp, mjx


def choose_impl(platform: str | None = None, warp_installed: bool | None = None) -> str:
    """MJX's implementation for this machine: "warp" (MuJoCo Warp through MJX) on a CUDA GPU
    with the `mujoco-warp` package (and its `warp-lang`) installed, else "jax" (XLA, any
    device). `platform` defaults to JAX's default backend ("cpu", "gpu", "tpu")."""
    if platform is None:
        jax, _, _ = require()
        platform = jax.default_backend()
    if warp_installed is None:
        warp_installed = all(importlib.util.find_spec(name) is not None
                             for name in ("mujoco_warp", "warp"))
    return "warp" if platform == "gpu" and warp_installed else "jax"
