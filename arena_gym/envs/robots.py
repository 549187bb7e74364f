"""Resolving the config's `robot` key: a built-in name or a URDF path, its model params."""

from __future__ import annotations

from pathlib import Path

from arena_gym.config import ConfigError, EnvConfig

BUILTIN = {"arena_diffbot"}


def resolve_robot(cfg: EnvConfig) -> tuple[Path, tuple[str, ...], Path]:
    """(urdf, package_paths, model_params.yaml) for the configured robot."""
    if cfg.robot in BUILTIN:
        from arena_gym.worlds import builtin_robot_urdf

        urdf = builtin_robot_urdf()
    else:
        urdf = Path(cfg.robot).expanduser()
        if not urdf.is_file():
            raise ConfigError(
                f"robot: expected a built-in robot ({', '.join(sorted(BUILTIN))}) or a URDF "
                f"file, got {cfg.robot!r}"
            )
    params = Path(cfg.model_params) if cfg.model_params else urdf.parent / "model_params.yaml"
    if not params.is_file():
        raise ConfigError(f"model_params: expected a model_params.yaml file, got {str(params)!r}")
    return urdf, tuple(cfg.package_paths), params
