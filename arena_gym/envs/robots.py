"""Resolving the config's `robot` key: a built-in name or a URDF path, its model params."""

from __future__ import annotations

from pathlib import Path

from arena_gym.assets.model_params import MODEL_PARAMS_FILE
from arena_gym.config import ConfigError, EnvConfig
from arena_gym.errors import SpawnError
from arena_gym.scene.sensor_mounts import find_model_params
from arena_gym.worlds import builtin_robot_urdf

BUILTIN = {"arena_diffbot"}


def resolve_robot(cfg: EnvConfig) -> tuple[Path, tuple[str, ...], Path]:
    """(urdf, package_paths, model_params.yaml) for the configured robot."""
    if cfg.robot in BUILTIN:

        urdf = builtin_robot_urdf()
    else:
        urdf = Path(cfg.robot).expanduser()
        if not urdf.is_file():
            raise ConfigError(
                f"robot: expected a built-in robot ({', '.join(sorted(BUILTIN))}) or a URDF "
                f"file, got {cfg.robot!r}"
            )
    explicit = cfg.model_params or None
    try:
        params = find_model_params(urdf, explicit)  # the scene's lookup: one rule for both
    except SpawnError:
        params = None
    if params is None:
        where = explicit or str(urdf.parent / MODEL_PARAMS_FILE)
        raise ConfigError(f"model_params: expected a model_params.yaml file, got {where!r}")
    return urdf, tuple(cfg.package_paths), params
