"""Arena-Rosnav robot parameters (`model_params.yaml`): action ranges, radius, laser.

Parsed by the one reader of the file, arena_gym.assets.model_params.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_gym.assets.model_params import read_model_params


@dataclass(frozen=True)
class LaserParams:
    """A robot's 2-D laser as model_params.yaml declares it: beams, range (m), angles (rad) and rate
    (Hz)."""

    num_beams: int
    range: float
    angle_min: float
    angle_max: float
    update_rate: float


@dataclass(frozen=True)
class RobotParams:
    """What the navigation task needs to know about a robot."""

    name: str
    radius: float
    holonomic: bool
    low: tuple[float, ...]  # continuous action bounds: (v, omega) or (vx, vy, omega)
    high: tuple[float, ...]
    discrete: tuple[tuple[float, float, float], ...]  # (vx, vy, omega) per discrete action
    discrete_names: tuple[str, ...]
    laser: LaserParams | None


def _range(value: Any, key: str, path: Path) -> tuple[float, float]:
    if not (isinstance(value, (list, tuple)) and len(value) == 2):
        raise ValueError(f"{path}: {key}: expected [min, max], got {value!r}")
    return float(value[0]), float(value[1])


def load_robot_params(path: str | Path) -> RobotParams:
    path = Path(path)
    data = read_model_params(path)
    try:
        actions = data["actions"]
        continuous = actions["continuous"]
        radius = float(data["robot_radius"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: expected Arena robot parameters, missing key {exc}") from None
    holonomic = bool(data.get("is_holonomic", False))
    angular = _range(continuous["angular_range"], "actions.continuous.angular_range", path)
    linear = continuous["linear_range"]
    if isinstance(linear, dict):
        vx = _range(linear["x"], "actions.continuous.linear_range.x", path)
        vy = _range(linear.get("y", [0.0, 0.0]), "actions.continuous.linear_range.y", path)
    else:
        vx, vy = _range(linear, "actions.continuous.linear_range", path), (0.0, 0.0)
    if holonomic:
        low, high = (vx[0], vy[0], angular[0]), (vx[1], vy[1], angular[1])
    else:
        low, high = (vx[0], angular[0]), (vx[1], angular[1])
    discrete, names = [], []
    for item in actions.get("discrete", []) or []:
        lin = item.get("linear", 0.0)
        lx, ly = (lin.get("x", 0.0), lin.get("y", 0.0)) if isinstance(lin, dict) else (lin, 0.0)
        discrete.append((float(lx), float(ly), float(item.get("angular", 0.0))))
        names.append(str(item.get("name", f"action_{len(names)}")))
    laser = None
    if isinstance(data.get("laser"), dict):
        block = data["laser"]
        angle = block.get("angle", {})
        laser = LaserParams(
            num_beams=int(block.get("num_beams", 360)),
            range=float(block.get("range", 3.5)),
            angle_min=float(angle.get("min", 0.0)),
            angle_max=float(angle.get("max", 6.283185307)),
            update_rate=float(block.get("update_rate", 10.0)),
        )
    return RobotParams(
        name=str(data.get("robot_model", path.parent.name)),
        radius=radius,
        holonomic=holonomic,
        low=low,
        high=high,
        discrete=tuple(discrete),
        discrete_names=tuple(names),
        laser=laser,
    )
