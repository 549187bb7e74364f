"""The on-disk cache of converted mesh parts and collision hulls.

An entry is a folder named by a key of its source (resolved path, mtime, size, and what was
asked of it), holding the derived files and a `manifest.json` with their sha256 hashes. A
reader trusts an entry only when every file it lists is there with its hash and its manifest
has the keys its reader needs: a damaged entry (a truncated or edited file, a manifest that
lost a key, a file where the folder was) is dropped with a CacheWarning naming its folder,
and the caller rebuilds it. Entries are written into a temporary folder and renamed into
place, so a reader never sees half of one, and processes that build the same entry at once
both end with a complete one. A cache that cannot be written (read-only, full) still serves
what it holds; new entries then go to a temporary folder of this process, removed at its
exit, with one CacheWarning per cache.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from arena_gym.assets.meshes import cache_dir

MANIFEST = "manifest.json"
VERSION = 1  # bump when the layout of an entry changes


class CacheWarning(UserWarning):
    """A cache entry was dropped and rebuilt, or a cache could not be written (its folder
    named)."""


_uncached: dict[Path, Path] = {}  # an unwritable cache root -> this process's stand-in


def source_key(path: Path, what: str) -> str:
    """A key for what is derived from `path` (`what`: the kind and its parameters)."""
    st = path.stat()
    text = f"{VERSION}|{what}|{path.resolve()}|{st.st_mtime_ns}|{st.st_size}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def entry_dir(kind: str, key: str, root: Path | None = None) -> Path:
    return (root or cache_dir()) / kind / key


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_entry(folder: Path, required: Iterable[str] = ()) -> dict[str, Any] | None:
    """The manifest of a complete, intact entry (with the `required` keys), else None:
    absent, or damaged (then dropped, with a CacheWarning naming the folder)."""
    if not os.path.lexists(folder):
        return None
    problem = _problem(folder, tuple(required))
    if isinstance(problem, dict):
        return problem
    warnings.warn(f"mesh cache entry {str(folder)!r}: {problem}; rebuilding it", CacheWarning,
                  stacklevel=3)
    _drop(folder)
    return None


def _problem(folder: Path, required: tuple[str, ...]) -> dict[str, Any] | str:
    """The entry's manifest, or what is wrong with it."""
    if not folder.is_dir():
        return "expected a folder, got a file"
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"expected a {MANIFEST}, got none"
    except (OSError, ValueError) as exc:
        return f"expected a readable {MANIFEST}, got {type(exc).__name__}: {exc}"
    if not isinstance(manifest, dict):
        return f"expected a JSON object in {MANIFEST}, got {type(manifest).__name__}"
    missing = [key for key in ("hashes", *required) if key not in manifest]
    if missing:
        return f"expected {MANIFEST} to hold {missing}, got keys {sorted(manifest)}"
    hashes = manifest["hashes"]
    if not isinstance(hashes, dict):
        return f"expected a mapping of hashes in {MANIFEST}, got {hashes!r}"
    for name, digest in hashes.items():
        if Path(name).name != name:
            return f"expected plain file names in {MANIFEST}, got {name!r}"
        try:
            if _sha(folder / name) != digest:
                return f"{name} does not match its hash"
        except OSError:
            return f"{name} is missing"
    return manifest


def _drop(path: Path) -> None:
    """Remove a damaged entry (a folder or a file); a cache that cannot be written keeps it."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError:
        pass


def write_entry(folder: Path, files: dict[str, bytes],
                manifest: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """Write `files` (name -> bytes) and their manifest as the entry `folder`; returns the
    folder they are in (`folder`, or its stand-in when the cache cannot be written) and the
    manifest as stored (with its `hashes`)."""
    manifest = {**manifest, "hashes": {n: hashlib.sha256(b).hexdigest() for n, b in files.items()}}
    try:
        _write(folder, files, manifest)
        return folder, manifest
    except OSError as exc:
        root = folder.parent.parent
        stand_in = _stand_in(root, exc) / folder.parent.name / folder.name
        _write(stand_in, files, manifest)
        return stand_in, manifest


def _stand_in(root: Path, exc: OSError) -> Path:
    """This process's temporary folder for the unwritable cache `root` (one warning)."""
    if root not in _uncached:
        tmp = Path(tempfile.mkdtemp(prefix="arena_gym-uncached-"))
        atexit.register(shutil.rmtree, tmp, True)
        _uncached[root] = tmp
        warnings.warn(f"mesh cache {str(root)!r} cannot be written ({exc.strerror or exc}); "
                      f"converting meshes without caching them (in {str(tmp)!r}, removed at "
                      "exit)", CacheWarning, stacklevel=4)
    return _uncached[root]


def _write(folder: Path, files: dict[str, bytes], manifest: dict[str, Any]) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, blob in files.items():
            (tmp / name).write_bytes(blob)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if os.path.lexists(folder):  # stale or damaged: replace it
            _drop(folder)
        try:
            os.rename(tmp, folder)
        except OSError:  # another process stored the same entry meanwhile
            if not isinstance(_problem(folder, ()), dict):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
