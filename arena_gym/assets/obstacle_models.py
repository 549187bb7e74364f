"""Obstacle models the way Arena's asset database ships them: SDF model folders or meshes.

    >>> model = load_model("RecTable", model_paths=["../shared/assets/obstacles"])
    >>> store[0].spawn_prims([Prim.of_model(model, "table", pose=(1.0, 2.0, 0.0))])

A reference is a model folder name looked up under `model_paths` (Gazebo's model path;
`model://Name/rel` URIs resolve there too, confined to `<root>/Name`), a folder path, an
`.sdf` file, or a bare mesh file. The folder's SDF is the one its `model.config` names, else
`model.sdf`, else `sdf/<folder>.sdf` or its only `.sdf`. The SDF's links give visual and
collision shapes (mesh with scale, box, cylinder, sphere; link and element poses composed).

A model with no usable shape falls back to its annotated bounding box (BOXES, the collision
extents of the shared models) with an AssetWarning; `Prim.of_model(model, ..., bbox=True)`
(`optim.obstacles: bbox` in the config) spawns that box (or the model's own bounding box).
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from arena_gym.assets.meshes import MeshUnavailable, PathRefused, resolve_uri
from arena_gym.assets.shapes import Shape
from arena_gym.errors import AssetWarning
from arena_gym.files import read_bytes
from arena_gym.geometry.rotations import mul_quat, quat_mats, rpy_quat

MESH_SUFFIXES = (".obj", ".stl", ".dae", ".glb", ".gltf", ".ply", ".msh")


class ModelError(ValueError):
    """A model reference that names no usable model; the message says what was expected."""


@dataclass(frozen=True)
class Footprint:
    """A model's box: full extents `size` (x, y, z) in metres, its centre `offset` (x, y)
    from the model's origin in the model's frame; it stands on z = 0."""

    size: tuple[float, float, float]
    offset: tuple[float, float] = (0.0, 0.0)


# Annotated collision extents of the shared obstacle models (their SDF boxes and meshes)
BOXES: Mapping[str, Footprint] = MappingProxyType({
    "shelf": Footprint((0.92, 0.405, 1.2), (0.0, -0.1925)),
    "office_chair": Footprint((0.712, 0.688, 1.169), (0.0, 0.098)),
    "Desk": Footprint((0.49, 0.844, 0.552), (-0.014, 0.0)),
    "RecTable": Footprint((1.8, 1.0, 0.75)),
    "SquareShelf": Footprint((0.77, 0.4, 0.77)),
    "WoodenChair": Footprint((0.401, 0.364, 0.788), (-0.0185, 0.001)),
    "cafe_table": Footprint((0.913, 0.913, 0.775)),
    "warehouse_shelf": Footprint((3.6, 0.6, 1.8), (-0.5, 0.0)),
})


@dataclass(frozen=True)
class ObstacleModel:
    """A loaded model: its shapes in the model frame and its box (see `Footprint`)."""

    name: str
    visuals: tuple[Shape, ...]
    collisions: tuple[Shape, ...]
    box: Footprint


def model_key(model: str | None) -> str | None:
    """A model reference without folders and file suffixes: "shelf.yaml" -> "shelf"."""
    if model is None:
        return None
    name = Path(model).name
    for suffix in (".model.yaml", ".yaml", ".sdf", ".urdf", ".xml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def load_model(ref: str | Path, model_paths: Iterable[str | Path] = ()) -> ObstacleModel:
    """The model `ref` names (see the module docstring). ModelError when it names nothing
    loadable and no box is annotated for it."""
    roots = tuple(Path(p) for p in model_paths)
    found = _find(Path(ref), roots)
    key = model_key(str(ref)) or ""
    if found is None:
        return _boxed(key, ref, "no model folder or mesh file found", roots)
    if found.suffix.lower() in MESH_SUFFIXES:
        return _with_box(ObstacleModel(key, (Shape(found),), (), BOXES.get(key, _UNKNOWN)))
    visuals, collisions, problems = _read_sdf(found, roots)
    for problem in problems:
        warnings.warn(f"model {str(ref)!r}: {problem}", AssetWarning, stacklevel=2)
    if not visuals and not collisions:
        return _boxed(key, ref, f"{found} declares no usable visual or collision", roots)
    # a model whose collision meshes all failed still collides through its visual meshes
    return _with_box(ObstacleModel(key, tuple(visuals), tuple(collisions),
                                   BOXES.get(key, _UNKNOWN)))


_UNKNOWN = Footprint((0.0, 0.0, 0.0))


def _boxed(key: str, ref: str | Path, reason: str, roots: tuple[Path, ...]) -> ObstacleModel:
    box = BOXES.get(key)
    if box is None:
        raise ModelError(f"model {str(ref)!r}: expected a model folder, an .sdf or a mesh file "
                         f"under {[str(r) for r in roots]} or an annotated box, got {reason}")
    warnings.warn(f"model {str(ref)!r}: {reason}; using its bounding box {box.size}",
                  AssetWarning, stacklevel=3)
    return ObstacleModel(key, (), (), box)


def _with_box(model: ObstacleModel) -> ObstacleModel:
    """The model with its own bounding box where none is annotated."""
    if model.box is not _UNKNOWN:
        return model
    lo, hi = bounds(model.collisions or model.visuals)
    box = Footprint(tuple(float(v) for v in np.maximum(hi - lo, 1e-3)),  # type: ignore[arg-type]
                    (float(lo[0] + hi[0]) / 2, float(lo[1] + hi[1]) / 2))
    return ObstacleModel(model.name, model.visuals, model.collisions, box)


def bounds(shapes: Iterable[Shape]) -> tuple[np.ndarray, np.ndarray]:
    """Corners (lo, hi) of the axis-aligned box around shapes in the model frame."""
    from arena_gym.assets.mesh_parts import mesh_parts, trimesh_module

    points = []
    for shape in shapes:
        if shape.mesh_path is None:
            half = np.asarray(shape.size) / 2
            local = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1)
                              for sz in (-1, 1)]) * half
        else:
            try:
                root = Path(shape.root) if shape.root is not None else None
                parts = mesh_parts(Path(shape.mesh_path), root=root)
            except MeshUnavailable:
                continue
            trimesh = trimesh_module()
            local = np.vstack([trimesh.load(p.file, force="mesh").vertices for p in parts])
            local = local * np.asarray(shape.scale)
        points.append(local @ quat_mats(np.asarray(shape.quat)[None])[0].T + np.asarray(shape.pos))
    if not points:
        return np.zeros(3), np.zeros(3)
    every = np.vstack(points)
    return every.min(axis=0), every.max(axis=0)


def _find(ref: Path, roots: tuple[Path, ...]) -> Path | None:
    """The SDF or mesh file a reference names, or None."""
    candidates = [ref] if ref.is_absolute() or ref.exists() else []
    if len(ref.parts) == 1:
        candidates += [root / ref.name for root in roots]
        key = model_key(ref.name)
        if key and key != ref.name:  # "shelf.yaml" names the model folder "shelf"
            candidates += [root / key for root in roots]
    for path in candidates:
        if path.is_file() and path.suffix.lower() in (".sdf", *MESH_SUFFIXES):
            return path
        if path.is_dir():
            sdf = _sdf_of(path)
            if sdf is not None:
                return sdf
    return None


def _sdf_of(folder: Path) -> Path | None:
    named = []
    for config in (folder / "model.config", folder / "sdf" / "model.config"):
        try:
            root = ET.fromstring(read_bytes(config, str(config)))
        except (OSError, ValueError, ET.ParseError):
            continue
        entries = sorted(root.findall("sdf"), key=lambda e: _version(e.get("version")))
        named += [config.parent / (e.text or "").strip() for e in reversed(entries)]
    named += [folder / "model.sdf", folder / "sdf" / f"{folder.name}.sdf",
              folder / f"{folder.name}.sdf"]
    for path in named:
        if path.is_file():
            return path
    loose = sorted(folder.glob("*.sdf")) + sorted(folder.glob("sdf/*.sdf"))
    return loose[0] if len(loose) == 1 else None


def _version(text: str | None) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in (text or "0").split("."))
    except ValueError:
        return (0,)


def _read_sdf(path: Path, roots: tuple[Path, ...]) -> tuple[list[Shape], list[Shape], list[str]]:
    try:
        root = ET.fromstring(read_bytes(path, str(path)))
    except (OSError, ValueError, ET.ParseError) as exc:
        return [], [], [f"cannot read {path}: {exc}"]
    model = root.find("model") if root.tag == "sdf" else root
    if model is None:
        return [], [], [f"{path} holds no <model>"]
    visuals: list[Shape] = []
    collisions: list[Shape] = []
    problems: list[str] = []
    model_pose = _pose(model.find("pose"))
    for link in model.findall("link"):
        link_pose = _compose(model_pose, _pose(link.find("pose")))
        for kind, out in (("visual", visuals), ("collision", collisions)):
            for element in link.findall(kind):
                pose = _compose(link_pose, _pose(element.find("pose")))
                try:
                    shape = _shape(element.find("geometry"), pose, path.parent, roots)
                except (MeshUnavailable, PathRefused) as exc:
                    problems.append(f"{kind} {element.get('name')!r} dropped: {exc}")
                    continue
                if shape is not None:
                    out.append(shape if kind == "collision" else replace(
                        _coloured(shape, element), name=element.get("name", "")))
    return visuals, collisions, problems


def _shape(geometry: ET.Element | None, pose: tuple[np.ndarray, np.ndarray], base: Path,
           roots: tuple[Path, ...]) -> Shape | None:
    if geometry is None:
        return None
    pos, quat = tuple(pose[0]), tuple(pose[1])
    if (mesh := geometry.find("mesh")) is not None:
        uri = (mesh.findtext("uri") or "").strip()
        scale = _numbers(mesh.findtext("scale"), 3) or (1.0, 1.0, 1.0)
        path, folder = _resolve(uri, base, roots)
        return Shape(path, pos=pos, quat=quat, scale=scale, root=folder)
    if (box := geometry.find("box")) is not None:
        size = _numbers(box.findtext("size"), 3)
        return Shape(size=size, pos=pos, quat=quat) if size else None
    if (cylinder := geometry.find("cylinder")) is not None:  # its box, a fair stand-in
        r, length = float(cylinder.findtext("radius", "0")), float(cylinder.findtext("length", "0"))
        return Shape(size=(2 * r, 2 * r, length), pos=pos, quat=quat) if r > 0 < length else None
    if (sphere := geometry.find("sphere")) is not None:
        r = float(sphere.findtext("radius", "0"))
        return Shape(size=(2 * r,) * 3, pos=pos, quat=quat) if r > 0 else None
    return None


def _resolve(uri: str, base: Path, roots: tuple[Path, ...]) -> tuple[Path, Path]:
    """The mesh file and the model folder its textures may come from."""
    if uri.startswith("model://"):
        name = uri[len("model://"):].split("/", 1)[0]
        try:  # a model path works like a package path: model://Name/rel in <root>/Name
            path = resolve_uri("package://" + uri[len("model://"):], base, roots)
        except (MeshUnavailable, PathRefused) as exc:
            raise type(exc)(str(exc).replace("package", "model")) from None
        folder = next(r / name for r in roots if path.is_relative_to((r / name).resolve()))
        return path, folder
    return resolve_uri(uri, base, roots), base


def _coloured(shape: Shape, visual: ET.Element) -> Shape:
    rgba = _numbers(visual.findtext("material/diffuse"), 4) or _numbers(
        visual.findtext("material/diffuse"), 3)
    if rgba is None:
        return shape
    rgba = tuple(rgba) + (1.0,) * (4 - len(rgba))
    return replace(shape, rgba=rgba)


def _numbers(text: str | None, n: int) -> tuple[float, ...] | None:
    try:
        values = tuple(float(v) for v in (text or "").split())
    except ValueError:
        return None
    return values if len(values) == n and all(map(math.isfinite, values)) else None


def _pose(element: ET.Element | None) -> tuple[np.ndarray, np.ndarray]:
    values = _numbers(element.text if element is not None else None, 6) or (0.0,) * 6
    quat = rpy_quat(*values[3:])
    return np.array(values[:3]), quat


def _compose(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
             ) -> tuple[np.ndarray, np.ndarray]:
    (pa, qa), (pb, qb) = a, b
    return pa + quat_mats(np.asarray(qa)[None])[0] @ pb, mul_quat(qa, qb)
