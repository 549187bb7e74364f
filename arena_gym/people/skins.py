"""A pool slot wearing a skinned actor: one mocap body per bone and a MuJoCo skin per part.

The skin is built into a slot once (a compile); a released slot keeps it, so a roster that
comes back recompiles nothing. The slot's capsule then sits in GROUP_ROBOT, which lidars
see and cameras do not draw (the skin, in GROUP_VISUAL, is what cameras show); contacts
still use the capsule. Bone poses follow the pedestrian's pose and its clip (`bone_rows`).
"""

from __future__ import annotations

import mujoco
import numpy as np

from arena_gym.geometry import groups
from arena_gym.geometry.rotations import mat_quats
from arena_gym.people.actors import ActorAsset, Clip

WALK_SPEED = 0.05  # m/s: at or above it the walk clip plays, below it the idle pose


def bone_name(slot_body: str, bone: int) -> str:
    return f"{slot_body}/bone_{bone}"


def add_skin(spec: mujoco.MjSpec, slot_body: str, actor: ActorAsset,
             parked: np.ndarray) -> None:
    """The actor's bones (mocap bodies, parked at `parked`) and skins for a slot."""
    for j in range(len(actor.bones)):
        spec.worldbody.add_body(name=bone_name(slot_body, j), pos=parked, mocap=True)
    for i, part in enumerate(actor.parts):
        bones = [j for j in range(len(actor.bones)) if len(part.bone_vertices[j])]
        pos = [actor.bind[j, :3, 3] for j in bones]
        quat = [_quat(actor.bind[j, :3, :3]) for j in bones]
        spec.add_skin(
            name=f"{slot_body}/skin_{i}", rgba=list(part.rgba), group=groups.GROUP_VISUAL,
            vert=part.vertices.ravel().tolist(), face=part.faces.ravel().tolist(),
            bodyname=[bone_name(slot_body, j) for j in bones],
            bindpos=np.ravel(pos).tolist(), bindquat=np.ravel(quat).tolist(),
            vertid=[part.bone_vertices[j].tolist() for j in bones],
            vertweight=[part.bone_weights[j].tolist() for j in bones])


def remove_skin(spec: mujoco.MjSpec, slot_body: str) -> None:
    for skin in list(spec.skins):
        if skin.name.startswith(slot_body + "/skin_"):
            spec.delete(skin)
    for body in list(spec.bodies):
        if body.name.startswith(slot_body + "/bone_"):
            spec.delete(body)


def bone_rows(pose: tuple[float, float, float], clip: Clip | None, cursor: float,
              actor: ActorAsset) -> tuple[np.ndarray, np.ndarray]:
    """mocap_pos (bones, 3) and mocap_quat (bones, 4) of the bones of a pedestrian at pose
    (x, y, yaw): the clip at `cursor` s, or the idle pose (the bind pose) without a clip."""
    local = actor.bind if clip is None else clip.bone_poses(cursor)
    pos, quat = world_rows(np.array([pose], dtype=float), local[None])
    return pos[0], quat[0]


def world_rows(poses: np.ndarray, local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """mocap_pos (P, bones, 3) and mocap_quat (P, bones, 4) of bone poses `local`
    (P, bones, 4, 4, actor frame) of pedestrians standing at `poses` (P, 3: x, y, yaw)."""
    c, s = np.cos(poses[:, 2]), np.sin(poses[:, 2])
    zero, one = np.zeros_like(c), np.ones_like(c)
    rot = np.stack([c, -s, zero, s, c, zero, zero, zero, one], axis=-1).reshape(-1, 1, 3, 3)
    pos = (rot @ local[..., :3, 3:])[..., 0] + np.c_[poses[:, :2], zero][:, None, :]
    return pos, mat_quats(rot @ local[..., :3, :3])


def _quat(mat: np.ndarray) -> np.ndarray:
    """Quaternion (w, x, y, z) of a rotation matrix (orthonormalised first: COLLADA joint
    matrices carry round-off)."""
    u, _, vt = np.linalg.svd(mat)
    out = np.empty(4)
    mujoco.mju_mat2Quat(out, (u @ vt).ravel())
    return out
