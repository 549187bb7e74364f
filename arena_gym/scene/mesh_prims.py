"""Model prims in an env's spec: visual mesh parts and collision pieces.

    prepared, problems = prepare(prims, path_roots)   # reads files, builds the cache
    add_model(spec, "env_0/table", prepared["table"])

`prepare` turns each model prim into files: a visual mesh becomes its per-material parts
(mesh_parts), a collision mesh its convex pieces (hulls, all of a request's uncached files
decomposed in parallel). A prim whose visual mesh is missing or unreadable is left out with
a problem that names it (one bad asset costs one obstacle); a collision mesh that cannot be
decomposed leaves its prim visible but colliding with nothing, also with a problem.

In the spec, visual parts are geoms that cameras and lidar see and physics ignores
(contype = conaffinity = 0, GROUP_STATIC); collision pieces collide in GROUP_HIDDEN
(invisible to cameras and lidar). Meshes, materials and textures are assets named by their
content (ASSET_PREFIX), shared by every prim that uses them; `prune_assets` frees the ones
no geom uses any more. A visual named `glow_<material>` (Shape.name, as a Gazebo model names
its glowing parts) gets materials of its own placement, `<prim>:glow_<material>/<part>`
(GLOW_MATERIAL), with no emission: a light whose `glow_prim` is this prim sets it
(arena_gym.render.lights), in this prim only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from arena_gym.assets.hulls import MAX_HULL_VERTICES, collision_hulls
from arena_gym.assets.mesh_parts import MeshPart, mesh_parts
from arena_gym.assets.meshes import MeshUnavailable, PathRefused, inside
from arena_gym.assets.shapes import Shape
from arena_gym.geometry.groups import GROUP_HIDDEN, GROUP_STATIC, WORLD_CONAFFINITY
from arena_gym.scene.requests import Prim

ASSET_PREFIX = "prim_asset/"
GLOW = "glow_"  # a visual whose name starts so glows with a light
GLOW_MATERIAL = "{prim}:{visual}/{part}"  # its parts' materials, one set per placement
MATERIAL_RGBA = [0.5, 0.5, 0.5, 1.0]  # a geom of this rgba shows its material's colour
HULL_RGBA = (0.9, 0.3, 0.3, 0.4)  # how the viewer shows collision pieces when asked to


@dataclass(frozen=True)
class Prepared:
    """A model prim with its files: per visual shape its parts (None: a box), per collision
    shape its hull files (None: a box)."""

    prim: Prim
    visuals: tuple[tuple[Shape, tuple[MeshPart, ...] | None], ...]
    collisions: tuple[tuple[Shape, tuple[Path, ...] | None], ...]


def _path(shape: Shape, roots: tuple[Path, ...] | None) -> Path:
    path = Path(shape.mesh_path)  # type: ignore[arg-type]
    for checked in (path, shape.root):
        if roots is not None and checked is not None and not inside(Path(checked), roots):
            raise PathRefused(f"{str(checked)!r} is outside the allowed roots")
    return path


def _parts(shape: Shape, roots: tuple[Path, ...] | None, cache: Path | None):
    if shape.mesh_path is None:
        return None
    root = Path(shape.root) if shape.root is not None else None
    return mesh_parts(_path(shape, roots), cache, root)


def prepare(prims: list[Prim], path_roots: tuple[Path, ...] | None = None,
            cache: Path | None = None) -> tuple[dict[str, Prepared], list[str]]:
    """Prepared model prims by name, and one problem text per prim left out or degraded.
    PathRefused (a path outside `path_roots`) refuses the whole request."""
    problems: list[str] = []
    visuals: dict[str, list] = {}
    for prim in prims:
        try:
            visuals[prim.name] = [(s, _parts(s, path_roots, cache)) for s in prim.visual_shapes]
        except MeshUnavailable as exc:
            problems.append(f"prim {prim.name!r} not spawned: visual mesh: {exc}")
    kept = [p for p in prims if p.name in visuals]
    sources = {p.name: (p.collisions if p.collisions is not None else
                        tuple(s for s in p.visual_shapes if s.mesh_path is not None))
               for p in kept}
    wanted = [_path(s, path_roots) for shapes in sources.values() for s in shapes
              if s.mesh_path is not None]
    hulls = collision_hulls(wanted, cache) if wanted else {}
    out: dict[str, Prepared] = {}
    for prim in kept:
        collisions = []
        for shape in sources[prim.name]:
            if shape.mesh_path is None:
                collisions.append((shape, None))
                continue
            result = hulls[Path(shape.mesh_path)]
            if isinstance(result, MeshUnavailable):
                problems.append(f"prim {prim.name!r} collides with nothing from collision mesh "
                                f"{str(shape.mesh_path)!r}: {result}")
                continue
            collisions.append((shape, result))
        out[prim.name] = Prepared(prim, tuple(visuals[prim.name]), tuple(collisions))
    return out, problems


def _key(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def _mesh(spec: mujoco.MjSpec, file: Path, scale: np.ndarray, hull: bool) -> str:
    name = f"{ASSET_PREFIX}mesh/{_key(str(file), tuple(np.round(scale, 9)), hull)}"
    if spec.mesh(name) is None:
        mesh = spec.add_mesh(name=name, file=str(file), scale=list(scale))
        if hull:
            mesh.maxhullvert = MAX_HULL_VERTICES
        else:  # a visual part may be flat (a table cloth, a sign): no volume needed
            mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
    return name


def _texture(spec: mujoco.MjSpec, texture: Path) -> str:
    tex = f"{ASSET_PREFIX}tex/{_key(str(texture))}"
    if spec.texture(tex) is None:
        spec.add_texture(name=tex, file=str(texture), type=mujoco.mjtTexture.mjTEXTURE_2D)
    return tex


def _material(spec: mujoco.MjSpec, texture: Path) -> str:
    tex = _texture(spec, texture)
    name = f"{ASSET_PREFIX}mat/{_key(str(texture))}"
    if spec.material(name) is None:
        material = spec.add_material(name=name)
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex
    return name


def _glow_material(spec: mujoco.MjSpec, name: str, rgba: list[float],
                   texture: Path | None) -> str:
    """A glow part's own material (its colour, its texture, no emission until lit); its
    geom keeps MATERIAL_RGBA, so a light can colour it through the material."""
    material = spec.add_material(name=name, rgba=rgba, emission=0.0)
    if texture is not None:
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = _texture(spec, texture)
    return name


def add_model(spec: mujoco.MjSpec, name: str, prepared: Prepared) -> mujoco.MjsBody:
    """The prim's body with its visual geoms `<name>/visual_<k>` and collision geoms
    `<name>/collision_<k>`."""
    prim = prepared.prim
    x, y, z, _ = prim.pose
    body = spec.worldbody.add_body(name=name, pos=[x, y, z], quat=prim.orientation,
                                   mocap=prim.movable)
    scale = np.asarray(prim.scale)
    k = 0
    glow_parts: dict[str, int] = {}  # a glow visual's parts numbered on across its namesakes

    def glow(shape: Shape, rgba: list[float], texture: Path | None) -> str:
        part = glow_parts[shape.name] = glow_parts.get(shape.name, -1) + 1
        return _glow_material(spec, GLOW_MATERIAL.format(prim=name, visual=shape.name,
                                                         part=part), rgba, texture)

    for shape, parts in prepared.visuals:
        glowing = shape.name.startswith(GLOW)
        where = {"pos": list(scale * shape.pos), "quat": list(shape.quat)}
        common = {"group": GROUP_STATIC, "contype": 0, "conaffinity": 0, **where}
        if parts is None:
            rgba = list(shape.rgba or prim.rgba)
            geom = body.add_geom(name=f"{name}/visual_{k}", type=mujoco.mjtGeom.mjGEOM_BOX,
                                 size=list(scale * shape.size / 2),
                                 rgba=MATERIAL_RGBA if glowing else rgba, **common)
            if glowing:
                geom.material = glow(shape, rgba, None)
            k += 1
            continue
        for part in parts:
            rgba = list(part.rgba or shape.rgba or prim.rgba)
            geom = body.add_geom(
                name=f"{name}/visual_{k}", type=mujoco.mjtGeom.mjGEOM_MESH,
                meshname=_mesh(spec, part.file, scale * shape.scale, hull=False),
                rgba=MATERIAL_RGBA if glowing else rgba, **common)
            if glowing:
                geom.material = glow(shape, rgba, part.texture)
            elif part.texture is not None:
                geom.material = _material(spec, part.texture)
            k += 1
    k = 0
    for shape, hulls in prepared.collisions:
        common = {"group": GROUP_HIDDEN, "conaffinity": WORLD_CONAFFINITY, "rgba": list(HULL_RGBA),
                  "pos": list(scale * shape.pos), "quat": list(shape.quat)}
        if hulls is None:
            body.add_geom(name=f"{name}/collision_{k}", type=mujoco.mjtGeom.mjGEOM_BOX,
                          size=list(scale * shape.size / 2), **common)
            k += 1
            continue
        for hull in hulls:
            body.add_geom(name=f"{name}/collision_{k}", type=mujoco.mjtGeom.mjGEOM_MESH,
                          meshname=_mesh(spec, hull, scale * shape.scale, hull=True), **common)
            k += 1
    return body


def prune_assets(spec: mujoco.MjSpec) -> None:
    """Delete the prims' meshes, materials (glow materials among them) and textures that
    no geom uses any more."""
    used_meshes = {g.meshname for g in spec.geoms}
    used_materials = {g.material for g in spec.geoms}
    for mesh in list(spec.meshes):
        if mesh.name.startswith(ASSET_PREFIX) and mesh.name not in used_meshes:
            spec.delete(mesh)
    for material in list(spec.materials):
        ours = material.name.startswith(ASSET_PREFIX) or f":{GLOW}" in material.name
        if ours and material.name not in used_materials:
            spec.delete(material)
    used_textures = {t for m in spec.materials for t in m.textures}
    for texture in list(spec.textures):
        if texture.name.startswith(ASSET_PREFIX) and texture.name not in used_textures:
            spec.delete(texture)
