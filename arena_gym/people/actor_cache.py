"""Parsed skinned actors in the mesh cache (arena_gym.assets.mesh_cache): a second process
reads arrays instead of parsing COLLADA again.

An entry holds one `actor.npz` (plain arrays, read with allow_pickle=False: nothing in it
can run code) and a manifest with the names (bones, materials, clips) and colours. Its key
covers the SDF and every COLLADA file it names (path, mtime, size), so editing any of them
makes a new entry.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from arena_gym.assets import mesh_cache

KIND = "actors"


def entry(sdf: Path, files: list[Path], cache: Path | None = None) -> Path:
    """The cache folder of the actor `sdf` whose skin and clips are `files`."""
    stats = "|".join(f"{f}:{f.stat().st_mtime_ns}:{f.stat().st_size}" for f in files)
    return mesh_cache.entry_dir(KIND, mesh_cache.source_key(sdf, f"{KIND}|{stats}"), cache)


def store(folder: Path, asset) -> None:
    arrays: dict[str, np.ndarray] = {"parents": asset.parents, "bind": asset.bind}
    parts = []
    for i, part in enumerate(asset.parts):
        arrays[f"part{i}_vertices"], arrays[f"part{i}_faces"] = part.vertices, part.faces
        arrays[f"part{i}_ids"] = np.concatenate(part.bone_vertices)
        arrays[f"part{i}_weights"] = np.concatenate(part.bone_weights)
        arrays[f"part{i}_counts"] = np.array([len(v) for v in part.bone_vertices])
        parts.append({"material": part.material, "rgba": list(part.rgba)})
    clips = []
    for k, (name, clip) in enumerate(asset.clips.items()):
        arrays[f"clip{k}_times"], arrays[f"clip{k}_poses"] = clip.times, clip.poses
        clips.append({"name": name, "stride": clip.stride})
    blob = io.BytesIO()
    np.savez(blob, **arrays)
    mesh_cache.write_entry(folder, {"actor.npz": blob.getvalue()},
                           {"name": asset.name, "bones": list(asset.bones), "parts": parts,
                            "clips": clips})


def read(folder: Path) -> tuple[dict, dict[str, np.ndarray]] | None:
    """The manifest and arrays stored in `folder`, or None when the entry is absent or not
    intact (arena_gym.people.actors builds the actor from them)."""
    manifest = mesh_cache.read_entry(folder, required=("name", "bones", "parts", "clips"))
    if manifest is None:
        return None
    try:
        with np.load(folder / "actor.npz", allow_pickle=False) as npz:
            return manifest, {k: npz[k] for k in npz.files}
    except (OSError, ValueError):
        return None
