"""Resolving mesh URIs of robot descriptions to files MuJoCo can read.

`package://pkg/rel` is looked up under each root of `package_paths` (like ROS package
paths), `file://` and plain paths relative to the description's folder. Files MuJoCo does
not read (COLLADA, ...) become per-material OBJ parts in arena_gym.assets.mesh_parts.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from arena_gym.caches import cache_dir  # noqa: F401 - where mesh_cache looks it up


class MeshUnavailable(Exception):
    """The mesh cannot be used; the message says why."""


class PathRefused(Exception):
    """A path that leaves the root it claims; the message names the URI, never the target."""


def inside(path: Path, roots: tuple[Path, ...]) -> bool:
    """Whether `path`, resolved (symlinks included), lies inside one of `roots` (resolved)."""
    real = path.resolve()
    return any(real.is_relative_to(Path(root).resolve()) for root in roots)


def resolve_uri(
    uri: str, base_dir: Path, package_paths: tuple[Path, ...],
    path_roots: tuple[Path, ...] | None = None,
) -> Path:
    """The file a mesh URI names, or MeshUnavailable (missing) / PathRefused (outside its root).

    `package://pkg/rel` must stay inside `<package path>/pkg` once resolved; plain and
    `file://` paths resolve as written, confined to `path_roots` when given.
    """
    if uri.startswith("package://"):
        return _package_file(uri, package_paths)
    if uri.startswith("file://"):
        path = Path(unquote(urlparse(uri).path))
    elif "://" in uri:
        raise MeshUnavailable(f"unsupported URI scheme in {uri!r}")
    else:
        path = Path(uri) if os.path.isabs(uri) else base_dir / uri
    if path_roots is not None and not inside(path, path_roots):
        raise PathRefused(f"{uri!r} is outside the allowed roots")
    if not path.is_file():
        raise MeshUnavailable(f"missing file {str(path)!r}")
    return path


def _package_file(uri: str, package_paths: tuple[Path, ...]) -> Path:
    pkg, _, rel = uri[len("package://") :].partition("/")
    if pkg in ("", ".", "..") or "\\" in pkg:
        raise PathRefused(f"{uri!r} names no package")
    for root in package_paths:
        pkg_root = (Path(root) / pkg).resolve()
        if not pkg_root.is_dir():
            continue
        candidate = (pkg_root / rel).resolve()  # before any existence check: tell nothing
        if not candidate.is_relative_to(pkg_root):
            raise PathRefused(f"{uri!r} leaves package {pkg!r}")
        if candidate.is_file():
            return candidate
    searched = ", ".join(str(p) for p in package_paths) or "no package_paths given"
    if not any((Path(root) / pkg).is_dir() for root in package_paths):
        raise MeshUnavailable(f"unknown package {pkg!r} (searched {searched})")
    raise MeshUnavailable(f"missing file {rel!r} in package {pkg!r} (searched {searched})")
