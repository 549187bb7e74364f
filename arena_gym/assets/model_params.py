"""The one reader of Arena's `model_params.yaml` (a robot's radius, actions and laser).

Reads the ROS 2 parameter-file form (`/**: ros__parameters: {...}`) and the plain one. The
task (arena_gym.assets.robot_params) and the sensor mounts (a lidar the URDF lacks) both read
through it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena_gym.files import read_text

MODEL_PARAMS_FILE = "model_params.yaml"


class ModelParamsError(ValueError):
    """A model_params.yaml that cannot be read as a mapping of parameters."""


def read_model_params(path: str | Path) -> dict[str, Any]:
    """The parameters of a model_params.yaml as a mapping (ROS 2 wrapping removed)."""
    import yaml

    try:
        data = yaml.safe_load(read_text(path, f"model_params {str(path)!r}",
                                        error=ModelParamsError)) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ModelParamsError(
            f"model_params {str(path)!r}: expected readable YAML, got {exc}") from None
    if isinstance(data, dict) and "/**" in data:
        data = (data["/**"] or {}).get("ros__parameters", {}) or {}
    if not isinstance(data, dict):
        raise ModelParamsError(
            f"model_params {str(path)!r}: expected a mapping, got {type(data).__name__}")
    return data
