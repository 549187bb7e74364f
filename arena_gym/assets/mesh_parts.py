"""Mesh files split into parts MuJoCo reads, one per material, with their colour or texture.

    >>> parts = mesh_parts(Path("cafe_table.dae"))
    >>> [(p.file.suffix, p.rgba, p.texture) for p in parts]

MuJoCo reads STL, MSH and plain OBJ itself (up to MAX_FACES faces); their parts are the file
and no colour of their own (the geom's colour applies, so a URDF `<material>` still shows).
Every other file (COLLADA, GLB, an OBJ with an MTL library) goes through trimesh once: the
triangles of each material become one OBJ part with the material's diffuse colour, and a
textured part gets its image as a PNG (at most MAX_TEXTURE px a side). A file above
MAX_FACES faces becomes one convex hull per sub-mesh. Parts live in the cache
(`mesh_cache`), keyed by the file's path, mtime and size, so later processes reuse them.
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena_gym.assets import mesh_cache
from arena_gym.assets.meshes import MeshUnavailable
from arena_gym.files import MAX_DATA_BYTES, check_file

MAX_FACES = 200_000  # MuJoCo's limit for a mesh's faces
MAX_TEXTURE = 1024  # px a side of a part's texture
MIN_VERTICES = 4  # MuJoCo refuses a mesh with fewer
NATIVE = {".stl", ".msh"}
KIND = "parts"


@dataclass(frozen=True)
class MeshPart:
    """One visual mesh: a file MuJoCo reads, its diffuse colour (None: the file declares
    none, keep the geom's) and a PNG texture (None: untextured)."""

    file: Path
    rgba: tuple[float, float, float, float] | None = None
    texture: Path | None = None


def trimesh_module():
    try:
        import trimesh  # heavy: only when a mesh needs converting
    except ImportError as exc:
        raise ImportError("converting meshes needs trimesh and pycollada: "
                          "pip install trimesh pycollada") from exc
    return trimesh


def _native(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix in NATIVE:
        return True
    if suffix == ".obj":  # MuJoCo ignores MTL materials: only an OBJ without them is native
        with open(path, "rb") as fh:
            return re.search(rb"^\s*(mtllib|usemtl)\s", fh.read(), re.MULTILINE) is None
    return False


def mesh_parts(path: Path, cache: Path | None = None, root: Path | None = None
               ) -> tuple[MeshPart, ...]:
    """The parts of mesh `path` (see the module docstring). MeshUnavailable names the file
    and what is wrong (missing, unreadable, no triangles, unsupported). Textures resolve
    relative to the file, inside `root` (default: the file's folder; a model's folder
    lets `../materials/textures/x.png` resolve)."""
    path = Path(path)
    if not path.is_file():
        raise MeshUnavailable(f"missing file {str(path)!r}")
    check_file(path, f"mesh {str(path)!r}", MAX_DATA_BYTES, error=MeshUnavailable)
    try:
        native = _native(path)
        st = path.stat()
    except OSError as exc:
        raise MeshUnavailable(f"cannot read {str(path)!r}: {exc.strerror}") from None
    # a file MuJoCo reads is still checked here: a bad one would fail the whole compile
    if native and _face_count(path, st.st_mtime_ns, st.st_size) <= MAX_FACES:
        return (MeshPart(path),)
    root = Path(root) if root is not None else path.parent
    key = mesh_cache.source_key(path, f"{KIND}|{root.resolve()}")
    folder = mesh_cache.entry_dir(KIND, key, cache)
    manifest = mesh_cache.read_entry(folder, required=("parts",))
    if manifest is None:
        files, parts = _convert(path, root)
        folder, manifest = mesh_cache.write_entry(folder, files,
                                                  {"source": str(path), "parts": parts})
    return tuple(
        MeshPart(folder / p["file"], tuple(p["rgba"]) if p["rgba"] else None,
                 folder / p["texture"] if p["texture"] else None)
        for p in manifest["parts"]
    )


@functools.lru_cache(maxsize=256)
def _face_count(path: Path, mtime_ns: int, size: int) -> int:
    meshes = load_meshes(path)
    vertices = sum(len(m.vertices) for m in meshes)
    if vertices < MIN_VERTICES:
        raise MeshUnavailable(f"{str(path)!r} has {vertices} vertices; MuJoCo needs at least "
                              f"{MIN_VERTICES}")
    return sum(len(m.faces) for m in meshes)


def load_meshes(path: Path, root: Path | None = None) -> list:
    """The triangle meshes of a file, node transforms and COLLADA units applied, each with
    its trimesh visual (material; textures found inside `root`, default the file's folder).
    MeshUnavailable when trimesh cannot read it or it holds no triangles."""
    trimesh = trimesh_module()
    try:
        scene = trimesh.load(path, force="scene", resolver=_resolver(trimesh, path, root))
        meshes = [m for m in scene.dump() if isinstance(m, trimesh.Trimesh) and len(m.faces)]
    except Exception as exc:  # trimesh and its loaders raise many kinds on bad files
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MeshUnavailable(f"cannot read {str(path)!r}: {reason}") from None
    if not meshes:
        raise MeshUnavailable(f"{str(path)!r} holds no triangles")
    unit = collada_unit(path) if path.suffix.lower() == ".dae" else 1.0
    if unit != 1.0:
        for mesh in meshes:
            mesh.apply_scale(unit)
    return meshes


def _resolver(trimesh, path: Path, root: Path | None):
    """trimesh's file resolver for `path`'s folder, confined to `root` instead."""
    confined = Path(root or path.parent).resolve()

    class Within(trimesh.resolvers.FilePathResolver):
        def absolute(self, name: str) -> Path:
            target = (Path(self.parent).resolve() / name.strip()).resolve()
            if not target.is_relative_to(confined):
                raise ValueError(f"{name!r} is outside {str(confined)!r}")
            return target

    return Within(str(path))


def collada_unit(path: Path) -> float:
    """Metres per unit a COLLADA file declares (`<asset><unit meter=...>`), 1 if none."""
    import xml.etree.ElementTree as ET

    try:
        for _, element in ET.iterparse(path, events=("start",)):
            tag = element.tag.rsplit("}", 1)[-1]
            if tag == "unit":
                return float(element.get("meter", "1"))
            if tag in ("library_geometries", "library_visual_scenes"):
                break
    except (ET.ParseError, ValueError):
        pass
    return 1.0


def _convert(path: Path, root: Path) -> tuple[dict[str, bytes], list[dict]]:
    """Per-material OBJ parts (and PNGs) of a file, as cache files and manifest rows."""
    meshes = load_meshes(path, root)
    big = sum(len(m.faces) for m in meshes) > MAX_FACES
    groups: dict[object, list] = {}
    materials: dict[object, object] = {}
    for mesh in meshes:
        material = getattr(mesh.visual, "material", None)
        # loaders make a material object per sub-mesh: group by what a material shows
        rgba, image = _rgba(material), _image(material)
        key = id(mesh) if big else (tuple(rgba or ()), None if image is None else id(image))
        groups.setdefault(key, []).append(mesh)
        materials[key] = material
    files: dict[str, bytes] = {}
    rows: list[dict] = []
    for i, (key, group) in enumerate(groups.items()):
        material = materials[key]
        image = _image(material)
        vertices, faces, uv = _merge(group, with_uv=image is not None and not big)
        if big:  # too many faces for MuJoCo: the sub-mesh's hull stands in
            hull = group[0].convex_hull
            vertices, faces, uv = np.asarray(hull.vertices), np.asarray(hull.faces), None
        if len(vertices) < MIN_VERTICES:  # a stray triangle MuJoCo would refuse
            continue
        name = f"part_{i}.obj"
        files[name] = obj_text(vertices, faces, uv).encode()
        row = {"file": name, "rgba": _rgba(material), "texture": None}
        if uv is not None:
            files[f"part_{i}.png"] = _png(image)
            row["texture"] = f"part_{i}.png"
            row["rgba"] = [1.0, 1.0, 1.0, row["rgba"][3] if row["rgba"] else 1.0]
        rows.append(row)
    if not rows:
        raise MeshUnavailable(f"{str(path)!r} has no part of {MIN_VERTICES} vertices or more")
    return files, rows


def _merge(meshes: list, with_uv: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    vertices, faces, uvs, offset = [], [], [], 0
    for mesh in meshes:
        vertices.append(np.asarray(mesh.vertices))
        faces.append(np.asarray(mesh.faces) + offset)
        offset += len(mesh.vertices)
        uv = getattr(mesh.visual, "uv", None) if with_uv else None
        uvs.append(uv if uv is not None and len(uv) == len(mesh.vertices) else None)
    uv_all = np.concatenate(uvs) if with_uv and all(u is not None for u in uvs) else None
    return np.concatenate(vertices), np.concatenate(faces), uv_all


def obj_text(vertices: np.ndarray, faces: np.ndarray, uv: np.ndarray | None) -> str:
    lines = [f"v {x:.7g} {y:.7g} {z:.7g}" for x, y, z in vertices]
    if uv is not None:
        lines += [f"vt {u:.7g} {v:.7g}" for u, v in uv[:, :2]]
        lines += [f"f {a}/{a} {b}/{b} {c}/{c}" for a, b, c in faces + 1]
    else:
        lines += [f"f {a} {b} {c}" for a, b, c in faces + 1]
    return "\n".join(lines) + "\n"


def _rgba(material: object) -> list[float] | None:
    """The diffuse colour a material declares (PBR base colour or Phong diffuse), 0..1."""
    for attr in ("baseColorFactor", "diffuse"):
        value = getattr(material, attr, None)
        if value is not None:
            raw = np.asarray(value).ravel()
            if raw.size in (3, 4):
                scale = 255.0 if raw.dtype.kind in "ui" or raw.max() > 1.0 else 1.0
                rgba = list(raw.astype(float) / scale) + [1.0] * (4 - raw.size)
                return [round(float(c), 4) for c in rgba]
    return None


def _image(material: object):
    for attr in ("baseColorTexture", "image"):
        image = getattr(material, attr, None)
        if image is not None:
            return image
    return None


def _png(image) -> bytes:
    alpha = "A" in image.getbands() or "transparency" in image.info
    image = image.convert("RGBA" if alpha else "RGB")
    if max(image.size) > MAX_TEXTURE:
        image = image.copy()
        image.thumbnail((MAX_TEXTURE, MAX_TEXTURE))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
