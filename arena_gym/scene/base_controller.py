"""What a robot declares about its base controller: the wheel separation multiplier.

ros2_control robots name their controllers' parameter file in the Gazebo plugin
(`<plugin filename="libgazebo_ros2_control.so"><parameters>package://.../control.yaml`);
a `diff_drive_controller` in it may set `wheel_separation_multiplier`, the factor by which
the controller widens the wheel track when it turns omega into wheel speeds. Skid-steer
bases declare it to make up for their wheels scrubbing sideways (the Jackal: 1.5); the
skid-steer drive uses it as its feedforward (arena_gym/sim/drive.py).
"""

from __future__ import annotations

import warnings
from pathlib import Path

from arena_gym.assets.gazebo import PluginDecl
from arena_gym.assets.meshes import MeshUnavailable, resolve_uri
from arena_gym.files import read_text

PARAMETER_KEYS = ("parameters",)  # gazebo_ros2_control's <parameters> element
MULTIPLIER = "wheel_separation_multiplier"


def _find(node: object, key: str) -> list[float]:
    """Every numeric value under `key` anywhere in a loaded YAML tree."""
    found: list[float] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, (int, float)) and not isinstance(v, bool):
                found.append(float(v))
            else:
                found += _find(v, key)
    elif isinstance(node, list):
        for v in node:
            found += _find(v, key)
    return found


def separation_multiplier(
    plugins: list[PluginDecl], package_paths: tuple[Path, ...], base_dir: Path, source: str
) -> float:
    """The declared wheel_separation_multiplier, 1.0 when the robot declares none.

    A parameter file that cannot be found or read is warned about, as Gazebo would, and
    the robot drives without the multiplier.
    """
    import yaml

    for plugin in plugins:
        for key in PARAMETER_KEYS:
            uri = plugin.params.get(key)
            if not uri or not uri.endswith((".yaml", ".yml")):
                continue
            try:
                path = resolve_uri(uri, base_dir, package_paths)
                values = _find(yaml.safe_load(read_text(path, str(path))), MULTIPLIER)
            except (MeshUnavailable, OSError, ValueError, yaml.YAMLError) as exc:
                warnings.warn(f"{source}: controller parameters {uri!r} not read: {exc}",
                              stacklevel=4)
                continue
            positive = [v for v in values if v > 0]
            if positive:
                return positive[0]
    return 1.0
