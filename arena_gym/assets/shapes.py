"""Shapes an asset is made of: a mesh file or a box, posed in the asset's frame."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from arena_gym import checks
from arena_gym.errors import SceneError


@dataclass(frozen=True)
class Shape:
    """One part of an obstacle model, in the model's frame: a mesh file (scaled by `scale`)
    or, without one, a box of full extents `size`. `rgba` None: the prim's colour (a mesh
    part that declares its own colour keeps it). `name`: the visual's name in its model; a
    `glow_<material>` visual glows with a light (arena_gym.scene.mesh_prims)."""

    mesh_path: str | Path | None = None
    size: tuple[float, float, float] | None = None
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)  # w, x, y, z
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    rgba: tuple[float, float, float, float] | None = None
    root: str | Path | None = None  # where its textures may come from (default: its folder)
    name: str = ""

    def __post_init__(self) -> None:
        what = f"Shape {str(self.mesh_path) if self.mesh_path is not None else 'box'!r}"
        if self.mesh_path is None and self.size is None:
            raise SceneError(f"{what}: expected a mesh_path or a box size, got neither")
        if self.size is not None:
            size = checks.positive(f"{what} size", checks.floats(f"{what} size", self.size, 3))
            object.__setattr__(self, "size", size)
        object.__setattr__(self, "pos", checks.floats(f"{what} pos", self.pos, 3))
        quat = checks.floats(f"{what} quat", self.quat, 4)
        if math.hypot(*quat) < 1e-9:
            raise SceneError(f"{what} quat: expected a non-zero quaternion, got {quat}")
        object.__setattr__(self, "quat", quat)
        object.__setattr__(self, "scale", checks.positive(f"{what} scale",
                                                    checks.floats(f"{what} scale", self.scale, 3)))
        if not isinstance(self.name, str):
            raise SceneError(f"{what} name: expected a visual's name, got {self.name!r}")
        if self.rgba is not None:
            object.__setattr__(self, "rgba", checks.floats(f"{what} rgba", self.rgba, 4))
