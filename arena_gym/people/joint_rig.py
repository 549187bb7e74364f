"""Bone poses of a skinned actor from ROS4HRI joint angles (arena_gym.people.body_joints).

    rig = joint_rig("pedestrians/actor2.sdf")     # cached per actor
    poses = rig.poses(angles)                      # (peds, bones, 4, 4), actor frame

The zero stance (`rig.neutral`) is the actor's bind pose with the family's stance turns
(arena_gym.people.skeleton_tables: arms down). Each angle turns its bone about the joint's
axis, which is fixed in that bone's own frame (the body-frame axis of the zero stance
carried into it), so a turn moves the bone's subtree about the bone's origin; forward
kinematics composes the chain. The result stands on its lowest sole point: the skeleton
is lifted or lowered so the lowest of the vertices that form the soles in the zero
stance (skinned like the mesh) is at z = 0. Vectorised over pedestrians.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from arena_gym.errors import AssetWarning, SceneError
from arena_gym.geometry.rotations import axis_angle_mats
from arena_gym.people.actors import ActorAsset, forward, load_actor
from arena_gym.people.body_joints import INDEX, JOINTS, NAMES
from arena_gym.people.skeleton_tables import TABLES, table_for

SOLE_HEIGHT = 0.03  # m: vertices this close to the floor in the zero stance form the soles


@dataclass(frozen=True)
class JointRig:
    """An actor's skeleton prepared for posing from ROS4HRI joint angles: zero stance, each joint's
    bone and axis, and the sole points that ground a pose."""

    actor: str  # the actor's name, for messages
    skeleton: str  # its family (arena_gym.people.skeleton_tables)
    parents: np.ndarray  # (bones,)
    local: np.ndarray  # (bones, 4, 4) zero stance, each bone in its parent's frame
    neutral: np.ndarray  # (bones, 4, 4) zero stance in the actor frame, grounded
    bones: np.ndarray  # (joints,) the bone each ROS4HRI joint turns, -1: none
    axes: np.ndarray  # (joints, 3) each joint's axis in its bone's frame
    sole_points: np.ndarray  # (S, 3) sole vertices, bind pose (actor frame)
    sole_bones: np.ndarray  # (B,) the bones that move them
    sole_weights: np.ndarray  # (S, B)
    unbind: np.ndarray  # (B, 4, 4) inverse bind poses of sole_bones
    reported: set[str] = field(default_factory=set, compare=False)

    def poses(self, angles: np.ndarray) -> np.ndarray:
        """Bone poses (P, bones, 4, 4) in the actor frame for angles (P, joints), rad in
        body_joints.NAMES order; every pose stands on its lowest sole point."""
        angles = np.asarray(angles, dtype=float).reshape(-1, len(NAMES))
        local = np.repeat(self.local[None], len(angles), axis=0)
        for k in np.flatnonzero((angles != 0).any(axis=0) & (self.bones >= 0)):
            b = self.bones[k]
            local[:, b, :3, :3] = local[:, b, :3, :3] @ axis_angle_mats(self.axes[k],
                                                                        angles[:, k])
        return self._grounded(forward(self.parents, local))

    def _grounded(self, world: np.ndarray) -> np.ndarray:
        move = world[:, self.sole_bones] @ self.unbind  # bind -> now, per sole bone
        rows = move[:, :, 2, :]  # (P, B, 4): the z rows
        z = rows[..., :3] @ self.sole_points.T + rows[..., 3:]  # (P, B, S) per bone
        lowest = (z * self.sole_weights.T).sum(axis=1).min(axis=1)
        world[..., 2, 3] -= lowest[:, None]
        return world

    def report_missing(self, names: set[str]) -> None:
        """Warn once per actor and joint about angles its skeleton has no bone for."""
        new = sorted(n for n in names - self.reported if self.bones[INDEX[n]] < 0)
        self.reported.update(new)
        for name in new:
            warnings.warn(f"actor {self.actor!r}: its skeleton ({self.skeleton}) has no bone "
                          f"for joint {name!r}; that angle is ignored", AssetWarning,
                          stacklevel=4)


_RIGS: dict[str, tuple[ActorAsset, JointRig]] = {}  # sdf -> the asset it was built from


def joint_rig(sdf: str) -> JointRig:
    """The rig of the actor `sdf` (a resolved path), built once per loaded asset (an
    edited actor file loads anew, and gets a new rig)."""
    actor = load_actor(sdf)  # cached
    built = _RIGS.get(sdf)
    if built is None or built[0] is not actor:
        _RIGS[sdf] = built = (actor, build_rig(actor))
    return built[1]


def forget_rigs() -> None:
    """Drop every built rig (and what each reported), as a fresh process would."""
    _RIGS.clear()


def build_rig(actor: ActorAsset) -> JointRig:
    table = table_for(actor.bones)
    if table is None:
        known = "; ".join(f"{t.name} ({t.source})" for t in TABLES)
        raise SceneError(f"actor {actor.name!r}: expected a skeleton with a joint table "
                         f"({known}), got one with bones {', '.join(actor.bones)}")
    parents = np.asarray(actor.parents)
    # the bind rotations orthonormalised (COLLADA's carry ~1e-6 round-off), as the skins
    # bind them (arena_gym.people.skins): products of exact rotations stay exact
    bind = actor.bind.copy()
    u, _, vt = np.linalg.svd(bind[:, :3, :3])
    bind[:, :3, :3] = u @ vt
    bind_local = bind.copy()
    for j, parent in enumerate(parents):
        if parent >= 0:
            bind_local[j] = np.linalg.inv(bind[parent]) @ bind[j]
    local = _turned(bind_local, bind, [(actor.bones.index(b), np.array(axis), angle)
                                       for b, axis, angle in table.stance])
    neutral = forward(parents, local)
    bones = np.array([-1 if table.bones[n] is None else actor.bones.index(table.bones[n])
                      for n in NAMES])
    axes = np.array([neutral[b, :3, :3].T @ JOINTS[n] if b >= 0 else JOINTS[n]
                     for n, b in zip(NAMES, bones, strict=True)])
    points, weights = _soles(actor, bind, neutral)
    used = np.flatnonzero(weights.any(axis=0))
    rig = JointRig(actor.name, table.name, parents, local, neutral, bones, axes, points,
                   used, weights[:, used], np.linalg.inv(bind[used]))
    rig._grounded(neutral[None])  # the zero stance stands on its soles too
    return rig


def _turned(local: np.ndarray, world: np.ndarray, turns) -> np.ndarray:
    """`local` with bones turned about body-frame axes (in each bone's frame of `world`)."""
    out = local.copy()
    for b, axis, angle in turns:
        out[b, :3, :3] = out[b, :3, :3] @ axis_angle_mats(world[b, :3, :3].T @ axis, angle)
    return out


def _soles(actor: ActorAsset, bind: np.ndarray, neutral: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Bind-pose positions (S, 3) and bone weights (S, bones) of the vertices that lie
    within SOLE_HEIGHT of the lowest one in the zero stance."""
    z_row = (neutral @ np.linalg.inv(bind))[:, 2, :]  # (bones, 4): bind -> stance, z
    verts, weights = [], []
    for part in actor.parts:
        w = np.zeros((len(part.vertices), len(actor.bones)))
        for j, (ids, wj) in enumerate(zip(part.bone_vertices, part.bone_weights, strict=True)):
            w[ids, j] = wj
        verts.append(part.vertices)
        weights.append(w)
    v, w = np.concatenate(verts), np.concatenate(weights)
    z = np.einsum("vj,jk,vk->v", w, z_row[:, :3], v) + w @ z_row[:, 3]
    keep = z < z.min() + SOLE_HEIGHT
    return v[keep], w[keep]
