"""Records that describe what to spawn: boxes and meshes (Prim), walls, floors and ceilings.

They validate on construction, so a bad request fails before the scene is touched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from arena_gym.scene.errors import SceneError

MIN_HALF_EXTENT = 0.0005  # 1 mm per side at least: MuJoCo rejects zero-size geoms
MAX_SIZE = 1000.0  # m: a bigger thing breaks the physics (a 1e30 box diverges forever)
SLAB_THICKNESS = 0.02
WALL_THICKNESS = 0.1


def _floats(what: str, value: object, n: int) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in value)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise SceneError(f"{what}: expected {n} numbers, got {value!r}") from None
    if len(out) != n:
        raise SceneError(f"{what}: expected {n} numbers, got {len(out)} ({value!r})")
    if not all(math.isfinite(v) for v in out):
        raise SceneError(f"{what}: expected finite numbers, got {value!r}")
    return out


def _name(what: str, name: object) -> str:
    if not isinstance(name, str) or not name or name.endswith("/"):
        raise SceneError(f"{what}: expected a non-empty name not ending in '/', got {name!r}")
    return name


def _positive(what: str, values: tuple[float, ...]) -> tuple[float, ...]:
    bad = [v for v in values if v <= 0]
    if bad:
        raise SceneError(f"{what}: expected sizes > 0, got {values}")
    if any(v > MAX_SIZE for v in values):
        raise SceneError(f"{what}: expected sizes <= {MAX_SIZE:g} m, got {values}")
    return values


@dataclass(frozen=True)
class Prim:
    """A static obstacle: a box of full extents `scale`, or (later) a mesh scaled by it.

    >>> Prim("table", pose=(1.0, 2.0, 0.4, 0.0), scale=(1.2, 0.8, 0.8))

    A movable prim is a mocap body: episodes move it through `MjData.mocap_pos`/`mocap_quat`
    (per env state, so batched envs keep one model layout); a static one is welded.
    """

    name: str
    pose: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # x, y, z (centre), yaw
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    mesh_path: str | Path | None = None
    rgba: tuple[float, float, float, float] = (0.6, 0.45, 0.3, 1.0)
    movable: bool = False  # a mocap body: moved through state, without recompiling

    def __post_init__(self) -> None:
        _name("Prim.name", self.name)
        object.__setattr__(self, "pose", _floats(f"Prim {self.name!r} pose", self.pose, 4))
        scale = _floats(f"Prim {self.name!r} scale", self.scale, 3)
        object.__setattr__(self, "scale", _positive(f"Prim {self.name!r} scale", scale))
        object.__setattr__(self, "rgba", _floats(f"Prim {self.name!r} rgba", self.rgba, 4))

    @property
    def half_extents(self) -> tuple[float, float, float]:
        return tuple(max(s / 2, MIN_HALF_EXTENT) for s in self.scale)  # type: ignore[return-value]


@dataclass(frozen=True)
class PrimEdit:
    """A change to a spawned prim: a new pose, a new scale, or both."""

    name: str
    pose: tuple[float, float, float, float] | None = None
    scale: tuple[float, float, float] | None = None

    def __post_init__(self) -> None:
        _name("PrimEdit.name", self.name)
        if self.pose is None and self.scale is None:
            raise SceneError(f"PrimEdit {self.name!r}: expected a pose or a scale, got neither")
        if self.pose is not None:
            object.__setattr__(self, "pose", _floats(f"PrimEdit {self.name!r} pose", self.pose, 4))
        if self.scale is not None:
            scale = _floats(f"PrimEdit {self.name!r} scale", self.scale, 3)
            object.__setattr__(self, "scale", _positive(f"PrimEdit {self.name!r} scale", scale))


@dataclass(frozen=True)
class Wall:
    """A vertical wall segment from `start` to `end` (x, y), standing on z = 0."""

    name: str
    start: tuple[float, float]
    end: tuple[float, float]
    height: float = 1.0
    thickness: float = WALL_THICKNESS
    rgba: tuple[float, float, float, float] = (0.75, 0.75, 0.78, 1.0)

    def __post_init__(self) -> None:
        _name("Wall.name", self.name)
        object.__setattr__(self, "start", _floats(f"Wall {self.name!r} start", self.start, 2))
        object.__setattr__(self, "end", _floats(f"Wall {self.name!r} end", self.end, 2))
        dims = _floats(f"Wall {self.name!r} height/thickness", (self.height, self.thickness), 2)
        _positive(f"Wall {self.name!r} height/thickness", dims)
        if self.length < 2 * MIN_HALF_EXTENT:
            raise SceneError(f"Wall {self.name!r}: start and end must differ, got {self.start}")
        if self.length > MAX_SIZE:
            raise SceneError(f"Wall {self.name!r}: expected a length <= {MAX_SIZE:g} m, got "
                             f"{self.length:g}")

    @property
    def length(self) -> float:
        return math.dist(self.start, self.end)


@dataclass(frozen=True)
class Slab:
    """A 2 cm thick horizontal slab (floor or ceiling) centred at `center`, `size` = (sx, sy)."""

    name: str
    center: tuple[float, float, float]
    size: tuple[float, float]
    rgba: tuple[float, float, float, float] = field(default=(0.55, 0.55, 0.55, 1.0))

    def __post_init__(self) -> None:
        _name("Slab.name", self.name)
        object.__setattr__(self, "center", _floats(f"Slab {self.name!r} center", self.center, 3))
        size = _floats(f"Slab {self.name!r} size", self.size, 2)
        object.__setattr__(self, "size", _positive(f"Slab {self.name!r} size", size))
