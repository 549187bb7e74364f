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
MAX_COORD = 10_000.0  # m (and rad): a pose farther out loses all precision (1e300 * 0 ...)
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


def _pose(what: str, value: object, n: int) -> tuple[float, ...]:
    """`n` finite numbers, each within +-MAX_COORD (positions in m, angles in rad)."""
    out = _floats(what, value, n)
    if any(abs(v) > MAX_COORD for v in out):
        raise SceneError(f"{what}: expected numbers within +-{MAX_COORD:g} (m, rad), got "
                         f"{out}")
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
class Shape:
    """One part of an obstacle model, in the model's frame: a mesh file (scaled by `scale`)
    or, without one, a box of full extents `size`. `rgba` None: the prim's colour (a mesh
    part that declares its own colour keeps it)."""

    mesh_path: str | Path | None = None
    size: tuple[float, float, float] | None = None
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)  # w, x, y, z
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    rgba: tuple[float, float, float, float] | None = None
    root: str | Path | None = None  # where its textures may come from (default: its folder)

    def __post_init__(self) -> None:
        what = f"Shape {str(self.mesh_path) if self.mesh_path is not None else 'box'!r}"
        if self.mesh_path is None and self.size is None:
            raise SceneError(f"{what}: expected a mesh_path or a box size, got neither")
        if self.size is not None:
            size = _positive(f"{what} size", _floats(f"{what} size", self.size, 3))
            object.__setattr__(self, "size", size)
        object.__setattr__(self, "pos", _floats(f"{what} pos", self.pos, 3))
        quat = _floats(f"{what} quat", self.quat, 4)
        if math.hypot(*quat) < 1e-9:
            raise SceneError(f"{what} quat: expected a non-zero quaternion, got {quat}")
        object.__setattr__(self, "quat", quat)
        object.__setattr__(self, "scale", _positive(f"{what} scale",
                                                    _floats(f"{what} scale", self.scale, 3)))
        if self.rgba is not None:
            object.__setattr__(self, "rgba", _floats(f"{what} rgba", self.rgba, 4))


@dataclass(frozen=True)
class Prim:
    """A static obstacle: a box of full extents `scale`, or a model scaled by it.

    >>> Prim("box", pose=(1.0, 2.0, 0.4, 0.0), scale=(1.2, 0.8, 0.8))  # z: the box's centre
    >>> Prim("table", pose=(1.0, 2.0, 0.0, 0.0), mesh_path="table.obj")  # z: the model's origin

    A model prim (a `mesh_path`, `visuals` or `collisions`) shows its meshes per material
    (arena_gym.scene.mesh_parts; cameras and lidar see them, physics does not) and collides
    through `collisions`, or, when that is None, through the convex pieces of its visual
    meshes (arena_gym.scene.hulls). `visuals` are the model's further visual shapes.

    A movable prim is a mocap body: episodes move it through `MjData.mocap_pos`/`mocap_quat`
    (per env state, so batched envs keep one model layout); a static one is welded.
    """

    name: str
    pose: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # x, y, z, yaw
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    mesh_path: str | Path | None = None
    rgba: tuple[float, float, float, float] = (0.6, 0.45, 0.3, 1.0)
    movable: bool = False  # a mocap body: moved through state, without recompiling
    visuals: tuple[Shape, ...] = ()
    collisions: tuple[Shape, ...] | None = None

    def __post_init__(self) -> None:
        _name("Prim.name", self.name)
        object.__setattr__(self, "pose", _pose(f"Prim {self.name!r} pose", self.pose, 4))
        scale = _floats(f"Prim {self.name!r} scale", self.scale, 3)
        object.__setattr__(self, "scale", _positive(f"Prim {self.name!r} scale", scale))
        object.__setattr__(self, "rgba", _floats(f"Prim {self.name!r} rgba", self.rgba, 4))
        for field_name in ("visuals", "collisions"):
            shapes = getattr(self, field_name)
            if shapes is None:
                continue
            shapes = tuple(shapes) if isinstance(shapes, (list, tuple)) else shapes
            if not isinstance(shapes, tuple) or not all(isinstance(s, Shape) for s in shapes):
                raise SceneError(f"Prim {self.name!r} {field_name}: expected Shape records, "
                                 f"got {shapes!r}")
            object.__setattr__(self, field_name, shapes)

    @property
    def is_model(self) -> bool:
        """A mesh or model prim, not a plain box."""
        return self.mesh_path is not None or bool(self.visuals) or self.collisions is not None

    @property
    def visual_shapes(self) -> tuple[Shape, ...]:
        """Every visual shape: the `mesh_path` mesh first, then `visuals`."""
        main = (Shape(self.mesh_path),) if self.mesh_path is not None else ()
        return main + self.visuals

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
            object.__setattr__(self, "pose", _pose(f"PrimEdit {self.name!r} pose", self.pose, 4))
        if self.scale is not None:
            scale = _floats(f"PrimEdit {self.name!r} scale", self.scale, 3)
            object.__setattr__(self, "scale", _positive(f"PrimEdit {self.name!r} scale", scale))


@dataclass(frozen=True)
class Wall:
    """A vertical wall segment from `start` to `end` (x, y), its bottom at height `z`
    (the floor: 0)."""

    name: str
    start: tuple[float, float]
    end: tuple[float, float]
    height: float = 1.0
    thickness: float = WALL_THICKNESS
    rgba: tuple[float, float, float, float] = (0.75, 0.75, 0.78, 1.0)
    z: float = 0.0

    def __post_init__(self) -> None:
        _name("Wall.name", self.name)
        object.__setattr__(self, "start", _pose(f"Wall {self.name!r} start", self.start, 2))
        object.__setattr__(self, "end", _pose(f"Wall {self.name!r} end", self.end, 2))
        object.__setattr__(self, "z", _pose(f"Wall {self.name!r} z", (self.z,), 1)[0])
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
        object.__setattr__(self, "center", _pose(f"Slab {self.name!r} center", self.center, 3))
        size = _floats(f"Slab {self.name!r} size", self.size, 2)
        object.__setattr__(self, "size", _positive(f"Slab {self.name!r} size", size))
