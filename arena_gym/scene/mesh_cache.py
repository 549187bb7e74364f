"""The on-disk cache of converted mesh parts and collision hulls.

An entry is a folder named by a key of its source (resolved path, mtime, size, and what was
asked of it), holding the derived files and a `manifest.json` with their sha256 hashes. A
reader trusts an entry only when every file it lists is there with its hash: a truncated or
edited file makes the entry stale, and the caller rebuilds it. Entries are written into a
temporary folder and renamed into place, so a reader never sees half of one, and processes
that build the same entry at once both end with a complete one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from arena_gym.scene.meshes import cache_dir

MANIFEST = "manifest.json"
VERSION = 1  # bump when the layout of an entry changes


def source_key(path: Path, what: str) -> str:
    """A key for what is derived from `path` (`what`: the kind and its parameters)."""
    st = path.stat()
    text = f"{VERSION}|{what}|{path.resolve()}|{st.st_mtime_ns}|{st.st_size}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def entry_dir(kind: str, key: str, root: Path | None = None) -> Path:
    return (root or cache_dir()) / kind / key


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_entry(folder: Path) -> dict[str, Any] | None:
    """The manifest of a complete, intact entry, else None (absent, corrupt or stale)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        hashes = manifest["hashes"]
        for name, digest in hashes.items():
            if Path(name).name != name or _sha(folder / name) != digest:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return manifest


def write_entry(folder: Path, files: dict[str, bytes], manifest: dict[str, Any]) -> dict[str, Any]:
    """Write `files` (name -> bytes) and their manifest as the entry `folder`; returns the
    manifest as stored (with its `hashes`)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, blob in files.items():
            (tmp / name).write_bytes(blob)
        manifest = {**manifest, "hashes": {n: hashlib.sha256(b).hexdigest()
                                           for n, b in files.items()}}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if folder.exists():  # stale or corrupt: replace it
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.rename(tmp, folder)
        except OSError:  # another process stored the same entry meanwhile
            if read_entry(folder) is None:
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return manifest
