"""Records that describe what to spawn: boxes and meshes (Prim), walls, floors and ceilings.

They validate on construction, so a bad request fails before the scene is touched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from arena_gym import checks
from arena_gym.assets.mdl import MdlMaterial
from arena_gym.assets.obstacle_models import ObstacleModel
from arena_gym.assets.shapes import Shape
from arena_gym.errors import SceneError
from arena_gym.geometry.rotations import yaw_quat

SLAB_THICKNESS = 0.02
WALL_THICKNESS = 0.1


@dataclass(frozen=True)
class Prim:
    """A static obstacle: a box of full extents `scale`, or a model scaled by it.

    >>> Prim("box", pose=(1.0, 2.0, 0.4, 0.0), scale=(1.2, 0.8, 0.8))  # z: the box's centre
    >>> Prim("table", pose=(1.0, 2.0, 0.0, 0.0), mesh_path="table.obj")  # z: the model's origin

    A model prim (a `mesh_path`, `visuals` or `collisions`) shows its meshes per material
    (arena_gym.assets.mesh_parts; cameras and lidar see them, physics does not) and collides
    through `collisions`, or, when that is None, through the convex pieces of its visual
    meshes (arena_gym.assets.hulls). `visuals` are the model's further visual shapes.

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
    material: MdlMaterial | None = None  # a box's .mdl look (its texture tiled; not rgba)
    # a full orientation (w, x, y, z) where the prim is tilted; None: upright, turned by
    # pose's yaw (which stays the prim's heading for footprints and maps either way)
    quat: tuple[float, float, float, float] | None = None

    def __post_init__(self) -> None:
        checks.name("Prim.name", self.name)
        object.__setattr__(self, "pose", checks.pose(f"Prim {self.name!r} pose", self.pose, 4))
        scale = checks.floats(f"Prim {self.name!r} scale", self.scale, 3)
        object.__setattr__(self, "scale", checks.positive(f"Prim {self.name!r} scale", scale))
        object.__setattr__(self, "rgba", checks.floats(f"Prim {self.name!r} rgba", self.rgba, 4))
        object.__setattr__(self, "quat", unit_quat(f"Prim {self.name!r} quat", self.quat))
        for field_name in ("visuals", "collisions"):
            shapes = getattr(self, field_name)
            if shapes is None:
                continue
            shapes = tuple(shapes) if isinstance(shapes, (list, tuple)) else shapes
            if not isinstance(shapes, tuple) or not all(isinstance(s, Shape) for s in shapes):
                raise SceneError(f"Prim {self.name!r} {field_name}: expected Shape records, "
                                 f"got {shapes!r}")
            object.__setattr__(self, field_name, shapes)

    @classmethod
    def of_model(cls, model: ObstacleModel, name: str,
                 pose: tuple[float, float, float] = (0.0, 0.0, 0.0), movable: bool = False,
                 bbox: bool = False) -> Prim:
        """`model` (arena_gym.assets.obstacle_models) with its origin at (x, y, yaw) on the
        floor; `bbox` (or a model without shapes): its box."""
        x, y, yaw = pose
        if bbox or not (model.visuals or model.collisions):
            c, s = math.cos(yaw), math.sin(yaw)
            ox, oy = model.box.offset
            centre = (x + c * ox - s * oy, y + s * ox + c * oy, model.box.size[2] / 2, yaw)
            return cls(name, pose=centre, scale=model.box.size, movable=movable)
        return cls(name, pose=(x, y, 0.0, yaw), visuals=model.visuals,
                   collisions=model.collisions, movable=movable)

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
        return tuple(max(s / 2, checks.MIN_HALF_EXTENT) for s in self.scale)  # type: ignore[return-value]

    @property
    def orientation(self) -> list[float]:
        """Its body's quaternion (w, x, y, z): `quat`, else pose's yaw."""
        return list(self.quat) if self.quat is not None else list(yaw_quat(self.pose[3]))


def unit_quat(what: str, quat: object) -> tuple[float, float, float, float] | None:
    """A quaternion (w, x, y, z) scaled to unit length; None stays None."""
    if quat is None:
        return None
    q = checks.floats(what, quat, 4)
    norm = math.hypot(*q)
    if norm < 1e-9:
        raise SceneError(f"{what}: expected a non-zero quaternion (w, x, y, z), got {q}")
    return tuple(v / norm for v in q)  # type: ignore[return-value]


@dataclass(frozen=True)
class PrimEdit:
    """A change to a spawned prim: a new pose, a new scale, or both."""

    name: str
    pose: tuple[float, float, float, float] | None = None
    scale: tuple[float, float, float] | None = None
    quat: tuple[float, float, float, float] | None = None  # with pose: a tilt (Prim.quat)

    def __post_init__(self) -> None:
        checks.name("PrimEdit.name", self.name)
        if self.quat is not None and self.pose is None:
            raise SceneError(f"PrimEdit {self.name!r}: a quat comes with a pose, got none")
        object.__setattr__(self, "quat", unit_quat(f"PrimEdit {self.name!r} quat", self.quat))
        if self.pose is None and self.scale is None:
            raise SceneError(f"PrimEdit {self.name!r}: expected a pose or a scale, got neither")
        if self.pose is not None:
            pose = checks.pose(f"PrimEdit {self.name!r} pose", self.pose, 4)
            object.__setattr__(self, "pose", pose)
        if self.scale is not None:
            scale = checks.floats(f"PrimEdit {self.name!r} scale", self.scale, 3)
            scale = checks.positive(f"PrimEdit {self.name!r} scale", scale)
            object.__setattr__(self, "scale", scale)


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
    material: MdlMaterial | None = None  # its .mdl look (its texture tiled; not rgba)

    def __post_init__(self) -> None:
        checks.name("Wall.name", self.name)
        object.__setattr__(self, "start", checks.pose(f"Wall {self.name!r} start", self.start, 2))
        object.__setattr__(self, "end", checks.pose(f"Wall {self.name!r} end", self.end, 2))
        object.__setattr__(self, "z", checks.pose(f"Wall {self.name!r} z", (self.z,), 1)[0])
        what = f"Wall {self.name!r} height/thickness"
        checks.positive(what, checks.floats(what, (self.height, self.thickness), 2))
        if self.length < 2 * checks.MIN_HALF_EXTENT:
            raise SceneError(f"Wall {self.name!r}: start and end must differ, got {self.start}")
        if self.length > checks.MAX_SIZE:
            raise SceneError(f"Wall {self.name!r}: expected a length <= {checks.MAX_SIZE:g} m, got "
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
    material: MdlMaterial | None = None  # its .mdl look (its texture tiled; not rgba)

    def __post_init__(self) -> None:
        checks.name("Slab.name", self.name)
        center = checks.pose(f"Slab {self.name!r} center", self.center, 3)
        object.__setattr__(self, "center", center)
        size = checks.floats(f"Slab {self.name!r} size", self.size, 2)
        object.__setattr__(self, "size", checks.positive(f"Slab {self.name!r} size", size))
