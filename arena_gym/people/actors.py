"""Skinned actors (Gazebo `<actor>` SDFs with COLLADA skins and animations), loaded once.

    actor = load_actor("pedestrians/actor2.sdf")   # cached: a second call loads nothing
    actor.bones, actor.parts[0].material, actor.clips["walking"].duration
    poses = actor.clips["walking"].bone_poses(t)   # (bones, 4, 4) in the actor frame

What is kept (pycollada reads the files; `pip install pycollada` if missing):
- skin parts, one per material: vertices in the actor frame at the bind pose, triangles, and
  per vertex the bones that move it with their weights;
- the skeleton: bone names, parents, and each bone's bind pose (actor frame);
- per clip, every bone's pose at each key (forward kinematics of the COLLADA joint
  transforms), with the root's steady advance over the clip removed (the pedestrian's own
  pose carries it) and kept as `stride`, the distance one cycle covers.
The actor frame: x forward (the clip's walking direction), z up, the soles at z = 0.
Files resolve next to the SDF (by bare name, relative path, or `model://<the SDF's folder
name>/...`) and must stay in its folder.
"""

from __future__ import annotations

import functools
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena_gym.errors import SpawnError
from arena_gym.files import MAX_DATA_BYTES, check_file, read_bytes
from arena_gym.people import actor_cache

LOADS = {"count": 0}  # COLLADA files parsed so far (each actor's once: tests count them)


@dataclass(frozen=True)
class SkinPart:
    """One material's part of an actor's skin: its mesh in the bind pose and the bones that move its
    vertices, with their weights."""

    material: str
    rgba: tuple[float, float, float, float]
    vertices: np.ndarray  # (V, 3) actor frame, bind pose
    faces: np.ndarray  # (F, 3) int
    bone_vertices: tuple[np.ndarray, ...]  # per bone: vertex ids it moves
    bone_weights: tuple[np.ndarray, ...]  # per bone: their weights


@dataclass(frozen=True)
class Clip:
    """An actor's animation clip: bone poses at key times, the root's advance removed and kept as
    `stride`."""

    name: str
    times: np.ndarray  # (K,) s from the clip's start
    poses: np.ndarray  # (K, bones, 4, 4) actor frame, root advance removed
    stride: float  # m the root advances over one cycle

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    def bone_poses(self, t: float) -> np.ndarray:
        """(bones, 4, 4) at clip time t (wrapped into the clip), from the nearest key before
        (keys are 1/24 s apart: no interpolation)."""
        t = float(t) % self.duration if self.duration > 0 else 0.0
        k = int(np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, len(self.times) - 1))
        return self.poses[k]


@dataclass(frozen=True)
class ActorAsset:
    """A skinned actor read from a Gazebo `<actor>` SDF: skeleton (bones, parents, bind poses), skin
    parts and clips by name."""

    name: str
    bones: tuple[str, ...]
    parents: np.ndarray  # (bones,) index of each bone's parent, -1 for the root
    bind: np.ndarray  # (bones, 4, 4) actor frame
    parts: tuple[SkinPart, ...]
    clips: dict[str, Clip]


def load_actor(sdf: str | Path, cache: Path | None = None) -> ActorAsset:
    """The actor an `<actor>` SDF names, parsed once per file (see the module docstring):
    later calls in the process return the same object, later processes read it from the
    mesh cache (`cache`, default ARENA_GYM_CACHE or the user's cache dir)."""
    path = Path(sdf).resolve()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        raise SpawnError(f"actor {str(sdf)!r}: expected an existing SDF file, got none") from None
    return _load(path, stamp, cache)


@functools.lru_cache(maxsize=32)
def _load(path: Path, _stamp: int, cache: Path | None) -> ActorAsset:
    try:
        root = ET.fromstring(read_bytes(path, f"actor {str(path)!r}", error=SpawnError))
    except (OSError, ET.ParseError) as exc:
        raise SpawnError(f"actor {str(path)!r}: expected an SDF file, got {exc}") from None
    actor = root if root.tag == "actor" else root.find(".//actor")
    skin_file = None if actor is None else actor.findtext("skin/filename")
    if actor is None or not skin_file:
        raise SpawnError(f"actor {str(path)!r}: expected an <actor> with a <skin><filename>, "
                         "got none")
    skin_dae = _beside(path, skin_file)
    clips_xml = [(a.get("name") or f"clip{i}", a.findtext("filename") or "")
                 for i, a in enumerate(actor.findall("animation"))]
    files = [skin_dae, *dict.fromkeys(_beside(path, f) for _, f in clips_xml)]
    folder = actor_cache.entry(path, files, cache)
    stored = _restore(folder)
    if stored is not None:
        return stored
    asset = _parse(path, skin_dae, clips_xml)
    actor_cache.store(folder, asset)
    return asset


def _restore(folder: Path) -> ActorAsset | None:
    """The actor stored in cache entry `folder` (arena_gym.people.actor_cache), or None when
    the entry is absent or not intact."""
    entry = actor_cache.read(folder)
    if entry is None:
        return None
    manifest, a = entry
    try:
        parts = []
        for i, p in enumerate(manifest["parts"]):
            cuts = np.cumsum(a[f"part{i}_counts"])[:-1]
            parts.append(SkinPart(p["material"], tuple(p["rgba"]), a[f"part{i}_vertices"],
                                  a[f"part{i}_faces"],
                                  tuple(np.split(a[f"part{i}_ids"], cuts)),
                                  tuple(np.split(a[f"part{i}_weights"], cuts))))
        clips = {c["name"]: Clip(c["name"], a[f"clip{k}_times"], a[f"clip{k}_poses"],
                                 float(c["stride"])) for k, c in enumerate(manifest["clips"])}
        return ActorAsset(manifest["name"], tuple(manifest["bones"]), a["parents"], a["bind"],
                          tuple(parts), clips)
    except (ValueError, KeyError, TypeError):
        return None


def _parse(path: Path, skin_dae: Path, clips_xml: list[tuple[str, str]]) -> ActorAsset:
    try:
        import collada
    except ImportError:
        raise SpawnError("skinned actors need pycollada: pip install pycollada") from None
    LOADS["count"] += 1
    doc = collada.Collada(str(skin_dae))
    docs = {skin_dae: doc}
    skeleton = _skeleton(doc)
    parts, bind = _skin(doc, skeleton)
    clips = {}
    for name, file in clips_xml:
        dae = _beside(path, file)
        if dae not in docs:
            LOADS["count"] += 1
            docs[dae] = collada.Collada(str(dae))
        clips[name] = _clip(name, docs[dae], skeleton)
    # the actor frame: walking along +x; the bind pose, and every key of a clip, standing on
    # its lowest sole point at z = 0 (skinning is relative: each may have its own lift)
    walk = next(iter(clips.values()), None)
    heading = 0.0 if walk is None or walk.stride == 0 else walk.heading
    turn = _rot_z(-heading)
    frame = turn.copy()
    frame[2, 3] = -min(float(p.vertices[:, 2].min()) for p in parts)
    parts = tuple(SkinPart(p.material, p.rgba, p.vertices @ frame[:3, :3].T + frame[:3, 3],
                           p.faces, p.bone_vertices, p.bone_weights) for p in parts)
    out = {}
    for n, c in clips.items():
        poses = turn @ c.poses
        poses[..., 2, 3] -= _lowest(parts, frame @ bind, poses)[:, None]
        out[n] = Clip(n, c.times, poses, c.stride)
    return ActorAsset(path.stem, skeleton.names, skeleton.parents, frame @ bind, parts, out)


def _lowest(parts: tuple[SkinPart, ...], bind: np.ndarray, poses: np.ndarray) -> np.ndarray:
    """(K,): the lowest skinned vertex's z at each key of poses (K, bones, 4, 4)."""
    move = poses @ np.linalg.inv(bind)  # bind pose -> key, per bone
    low = np.full(len(poses), np.inf)
    for part in parts:
        z = np.zeros((len(poses), len(part.vertices)))
        for j, (ids, w) in enumerate(zip(part.bone_vertices, part.bone_weights, strict=True)):
            if len(ids):
                row = move[:, j, 2]  # (K, 4): the z row of the bone's motion
                z[:, ids] += w * (part.vertices[ids] @ row[:, :3].T + row[:, 3]).T
        low = np.minimum(low, z.min(axis=1))
    return low


def _beside(sdf: Path, name: str) -> Path:
    """A file the SDF names, in the SDF's folder: by bare name or a relative path (Arena's
    actors), or `model://<its folder's name>/<path>` (a Gazebo model's own files)."""
    folder = sdf.parent
    if name.startswith("model://"):
        model, _, rest = name[len("model://"):].partition("/")
        relative = rest if model == folder.name else name  # another model's: refused below
    elif "://" in name:
        relative = Path(name).name
    else:
        relative = name
    target = (folder / relative).resolve()
    if folder not in target.parents:
        raise SpawnError(f"actor {str(sdf)!r}: file {name!r} is outside the actor's folder")
    if not target.is_file():
        raise SpawnError(f"actor {str(sdf)!r}: expected file {name!r} next to it, got none")
    return check_file(target, f"actor {str(sdf)!r}: file {name!r}", MAX_DATA_BYTES,
                      error=SpawnError)


@dataclass(frozen=True)
class _Skeleton:
    names: tuple[str, ...]
    ids: tuple[str, ...]  # the joints' node ids (what animation channels target)
    parents: np.ndarray
    rest: np.ndarray  # (bones, 4, 4) local rest transforms
    base: np.ndarray  # (4, 4): the root joint's parent (its scene node) in the world


def _skeleton(doc) -> _Skeleton:
    from collada.scene import Node

    names, ids, parents, rest = [], [], [], []
    base = [np.eye(4)]

    def visit(node, parent: int, above: np.ndarray) -> None:
        if not isinstance(node, Node):
            return
        is_joint = node.xmlnode.get("type") == "JOINT"
        index = parent
        if is_joint:
            if parent < 0:
                base[0] = above
            names.append(node.xmlnode.get("sid") or node.id)
            ids.append(node.id or names[-1])
            parents.append(parent)
            rest.append(np.asarray(node.matrix, dtype=float))
            index = len(names) - 1
        for child in node.children:
            visit(child, index, above @ np.asarray(node.matrix) if not is_joint else above)

    for node in doc.scene.nodes:
        visit(node, -1, np.eye(4))
    return _Skeleton(tuple(names), tuple(ids), np.array(parents), np.array(rest), base[0])


def forward(parents: np.ndarray, local: np.ndarray, base: np.ndarray | None = None
            ) -> np.ndarray:
    """World transforms (..., bones, 4, 4) of local ones (..., bones, 4, 4) (a root's
    relative to `base`, default the identity); parents come before their children."""
    world = np.empty_like(local)
    base = np.eye(4) if base is None else base
    for j, parent in enumerate(parents):
        above = base if parent < 0 else world[..., parent, :, :]
        world[..., j, :, :] = above @ local[..., j, :, :]
    return world


def _skin(doc, skeleton: _Skeleton) -> tuple[tuple[SkinPart, ...], np.ndarray]:
    ctrl = doc.controllers[0]
    joint_names = [str(n) for n in ctrl.joint_matrices]
    to_bone = np.array([skeleton.names.index(n) for n in joint_names])
    inverse_bind = np.array([ctrl.joint_matrices[n] for n in ctrl.joint_matrices])
    bind = np.empty((len(skeleton.names), 4, 4))
    rest_world = forward(skeleton.parents, skeleton.rest, skeleton.base)
    bind[:] = rest_world
    bind[to_bone] = np.linalg.inv(inverse_bind)
    shape = np.asarray(ctrl.bind_shape_matrix, dtype=float)
    weights = np.asarray(ctrl.weights.data, dtype=float).ravel()
    positions = np.asarray(ctrl.geometry.primitives[0].vertex, dtype=float)
    positions = positions @ shape[:3, :3].T + shape[:3, 3]
    influences = [np.asarray(pairs).reshape(-1, 2) for pairs in ctrl.index]
    materials = {m.id: m for m in doc.materials}
    parts = []
    for prim in ctrl.geometry.primitives:
        tris = prim.triangleset() if hasattr(prim, "triangleset") else prim
        faces = np.asarray(tris.vertex_index, dtype=np.int64).reshape(-1, 3)
        used, faces = np.unique(faces, return_inverse=True)
        faces = faces.reshape(-1, 3)
        per_bone: dict[int, list[tuple[int, float]]] = {}
        for new, old in enumerate(used.tolist()):
            pairs = influences[old]
            total = weights[pairs[:, 1]].sum() or 1.0
            for joint, w in pairs:
                per_bone.setdefault(int(to_bone[joint]), []).append((new, weights[w] / total))
        bone_vertices, bone_weights = [], []
        for bone in range(len(skeleton.names)):
            entries = per_bone.get(bone, [])
            bone_vertices.append(np.array([v for v, _ in entries], dtype=np.int64))
            bone_weights.append(np.array([w for _, w in entries], dtype=float))
        parts.append(SkinPart(prim.material, _rgba(materials, prim.material, doc),
                              positions[used], faces, tuple(bone_vertices), tuple(bone_weights)))
    return tuple(parts), bind


def _rgba(materials: dict, symbol: str, doc) -> tuple[float, float, float, float]:
    material = materials.get(symbol)
    if material is None:  # a symbol the scene binds: "skin-mat" -> "skin-mat-material"
        material = next((m for m in doc.materials if symbol in (m.id, m.name)
                         or str(m.id).startswith(symbol)), None)
    diffuse = getattr(getattr(material, "effect", None), "diffuse", None)
    if isinstance(diffuse, tuple) and len(diffuse) >= 3:
        return (float(diffuse[0]), float(diffuse[1]), float(diffuse[2]), 1.0)
    return (0.6, 0.6, 0.6, 1.0)


class _RawClip(Clip):
    heading: float = 0.0


def _clip(name: str, doc, skeleton: _Skeleton) -> _RawClip:
    channels: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def collect(anim) -> None:
        for channel in anim.xmlnode.iter("{http://www.collada.org/2005/11/COLLADASchema}channel"):
            target = channel.get("target", "")
            joint = target.split("/")[0]
            sampler_id = channel.get("source", "").lstrip("#")
            sampler = anim.xmlnode.find(
                f".//{{http://www.collada.org/2005/11/COLLADASchema}}sampler[@id='{sampler_id}']")
            if sampler is None:
                continue
            src = {i.get("semantic"): i.get("source", "").lstrip("#")
                   for i in sampler.iter("{http://www.collada.org/2005/11/COLLADASchema}input")}
            times = np.asarray(anim.sourceById[src["INPUT"]].data, dtype=float).ravel()
            values = np.asarray(anim.sourceById[src["OUTPUT"]].data, dtype=float).ravel()
            if values.size == 16 * times.size:  # matrix channels only (what both assets use)
                channels[joint] = (times, values.reshape(len(times), 4, 4))
        for child in anim.children:
            collect(child)

    for anim in doc.animations:
        collect(anim)
    if not channels:
        raise SpawnError(f"clip {name!r}: expected joint animations, got none")
    times = next(iter(channels.values()))[0]
    local = np.repeat(skeleton.rest[None], len(times), axis=0)
    for j, (bone, node) in enumerate(zip(skeleton.names, skeleton.ids, strict=True)):
        key = node if node in channels else bone
        if key in channels:
            t, m = channels[key]
            k = np.clip(np.searchsorted(t, times, side="right") - 1, 0, len(t) - 1)
            local[:, j] = m[k]
    poses = forward(skeleton.parents, local, skeleton.base)
    root = poses[:, 0, :3, 3]
    advance = root[-1, :2] - root[0, :2]
    stride = float(np.hypot(*advance))
    if stride < 1e-3:  # a walk in place: the stride is what the lowest foot sweeps, twice
        foot = int(np.argmin(poses[:, :, 2, 3].mean(axis=0)))
        stride = 2.0 * float(np.ptp(np.hypot(poses[:, foot, 0, 3], poses[:, foot, 1, 3])))
        advance = np.zeros(2)
    # remove the steady advance: the root keeps its in-cycle sway only
    share = ((times - times[0]) / max(times[-1] - times[0], 1e-9))[:, None]
    poses[:, :, :2, 3] -= (share * advance)[:, None, :]
    clip = _RawClip(name, times - times[0], poses, stride)
    object.__setattr__(clip, "heading", math.atan2(advance[1], advance[0]))
    return clip


def _rot_z(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    out = np.eye(4)
    out[:2, :2] = [[c, -s], [s, c]]
    return out
