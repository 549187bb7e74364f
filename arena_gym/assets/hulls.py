"""Collision hulls: a mesh cut into at most MAX_PIECES convex pieces, cached on disk.

    >>> hulls = collision_hulls([Path("desk.obj"), Path("chair.obj")])
    >>> hulls[Path("desk.obj")]  # (Path(".../hull_0.obj"), ...), or a MeshUnavailable

MuJoCo collides a mesh by its convex hull, which fills the space under a table. Each
connected part of a mesh whose triangles all lie on its own hull is already convex and kept
as its hull; the others are decomposed with CoACD (concavity THRESHOLD). Every piece keeps at
most MAX_HULL_VERTICES vertices. A request's uncached files are decomposed on a thread pool
sized to the machine (CoACD releases the GIL); the pieces are stored in the cache
(`mesh_cache`) and a later load reads them without decomposing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from arena_gym.assets import mesh_cache
from arena_gym.assets.mesh_parts import load_meshes, obj_text, trimesh_module
from arena_gym.assets.meshes import MeshUnavailable

THRESHOLD = 0.1  # CoACD concavity threshold
MAX_PIECES = 16
MAX_HULL_VERTICES = 32
# CoACD's search, cut down from its defaults (which took 110 s for the shared Desk on one
# core, 10 s with these); the pieces still follow legs and table tops
COACD_OPTIONS = {"preprocess_resolution": 20, "resolution": 1000, "mcts_iterations": 50,
                 "mcts_max_depth": 2, "seed": 0}
KIND = f"hulls-{THRESHOLD}-{MAX_PIECES}-{MAX_HULL_VERTICES}"

stats = {"decomposed": 0, "seconds": 0.0}  # decompositions run in this process (benchmarks)


def collision_hulls(paths: Iterable[Path], cache: Path | None = None,
                    workers: int | None = None) -> dict[Path, tuple[Path, ...] | MeshUnavailable]:
    """Hull OBJ files of each path, or the MeshUnavailable that says why it has none."""
    out: dict[Path, tuple[Path, ...] | MeshUnavailable] = {}
    todo: dict[Path, Path] = {}
    for path in dict.fromkeys(Path(p) for p in paths):
        if not path.is_file():
            out[path] = MeshUnavailable(f"missing file {str(path)!r}")
            continue
        folder = mesh_cache.entry_dir(KIND, mesh_cache.source_key(path, KIND), cache)
        manifest = mesh_cache.read_entry(folder, required=("hulls",))
        if manifest is None:
            todo[path] = folder
        else:
            out[path] = tuple(folder / name for name in manifest["hulls"])
    if todo:
        count = workers or min(len(todo), os.cpu_count() or 1)
        with ThreadPoolExecutor(max(count, 1)) as pool:
            for path, result in zip(todo, pool.map(_build, todo.items()), strict=True):
                out[path] = result
    return out


def _build(item: tuple[Path, Path]) -> tuple[Path, ...] | MeshUnavailable:
    import time

    path, folder = item
    start = time.perf_counter()
    try:
        with np.errstate(invalid="ignore", divide="ignore"):  # flat parts have no volume
            pieces = decompose(path)
    except MeshUnavailable as exc:
        return exc
    files = {f"hull_{i}.obj": obj_text(v, f, None).encode() for i, (v, f) in enumerate(pieces)}
    folder, _ = mesh_cache.write_entry(folder, files, {"source": str(path), "hulls": list(files)})
    stats["decomposed"] += 1
    stats["seconds"] += time.perf_counter() - start
    return tuple(folder / name for name in files)


def decompose(path: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """Convex pieces (vertices, faces) of a mesh file, at most MAX_PIECES of them."""
    trimesh = trimesh_module()
    meshes = load_meshes(path)
    mesh = trimesh.util.concatenate([trimesh.Trimesh(m.vertices, m.faces, process=False)
                                     for m in meshes])
    mesh.merge_vertices(merge_tex=True, merge_norm=True)
    parts = mesh.split(only_watertight=False) if len(mesh.faces) else []
    pieces: list[np.ndarray] = []
    for part in parts:
        pieces += [part.vertices] if _convex(part) else _coacd(part, MAX_PIECES)
        if len(pieces) > MAX_PIECES:  # too many parts: decompose the whole, capped
            pieces = _coacd(mesh, MAX_PIECES)
            break
    hulls = [_hull(trimesh, p) for p in pieces]
    hulls = [h for h in hulls if h is not None]
    if not hulls:
        raise MeshUnavailable(f"{str(path)!r} gives no solid convex piece")
    return hulls


def _convex(part) -> bool:
    """Whether every triangle lies on the part's convex hull (a box, a leg, a panel; open
    ones too): the centre of each is on a face plane of the hull."""
    try:
        hull = part.convex_hull
    except Exception:  # flat or degenerate: qhull refuses it
        return True
    if len(hull.faces) == 0:
        return True
    normals, origins = hull.face_normals, hull.triangles[:, 0]
    offsets = np.einsum("ij,ij->i", normals, origins)
    centres = part.triangles_center
    depth = (centres @ normals.T - offsets).max(axis=1)  # 0 on the hull, < 0 inside
    return bool(np.all(depth > -1e-4 * max(part.scale, 1e-9)))


def _coacd(mesh, limit: int) -> list[np.ndarray]:
    try:
        import coacd
    except ImportError as exc:
        raise ImportError("decomposing meshes needs coacd: pip install coacd") from exc
    coacd.set_log_level("off")  # it prints every step of its search otherwise
    try:
        result = coacd.run_coacd(
            coacd.Mesh(np.asarray(mesh.vertices), np.asarray(mesh.faces)),
            threshold=THRESHOLD, max_convex_hull=limit, decimate=True,
            max_ch_vertex=MAX_HULL_VERTICES, **COACD_OPTIONS)
    except Exception as exc:  # CoACD raises RuntimeError and friends on meshes it cannot use
        raise MeshUnavailable(f"CoACD cannot decompose it: {exc}") from None
    return [np.asarray(v) for v, _ in result]


def _hull(trimesh, vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    vertices = np.asarray(vertices, dtype=float)
    if len(vertices) > MAX_HULL_VERTICES:
        vertices = _farthest(vertices, MAX_HULL_VERTICES)
    try:
        hull = trimesh.Trimesh(vertices).convex_hull
    except Exception:  # flat: no volume to collide with
        return None
    if len(hull.faces) < 4 or hull.volume <= 1e-12:
        return None
    return np.asarray(hull.vertices), np.asarray(hull.faces)


def _farthest(points: np.ndarray, k: int) -> np.ndarray:
    """k of `points` spread over the set (farthest-point sampling from the extremes)."""
    chosen = [int(np.argmax(points[:, 0])), int(np.argmin(points[:, 0]))]
    dist = np.minimum(np.linalg.norm(points - points[chosen[0]], axis=1),
                      np.linalg.norm(points - points[chosen[1]], axis=1))
    while len(chosen) < k:
        nxt = int(np.argmax(dist))
        chosen.append(nxt)
        dist = np.minimum(dist, np.linalg.norm(points - points[nxt], axis=1))
    return points[chosen]
