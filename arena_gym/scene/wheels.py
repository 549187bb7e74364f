"""Wheel geometry read from a compiled model: where a wheel sits, how it turns, its radius.

Drives and servo gains use these instead of constants, so any URDF robot works.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.geometry.groups import GROUP_VISUAL

SPHERE, CAPSULE, ELLIPSOID, CYLINDER, MESH = (
    int(mujoco.mjtGeom.mjGEOM_SPHERE),
    int(mujoco.mjtGeom.mjGEOM_CAPSULE),
    int(mujoco.mjtGeom.mjGEOM_ELLIPSOID),
    int(mujoco.mjtGeom.mjGEOM_CYLINDER),
    int(mujoco.mjtGeom.mjGEOM_MESH),
)


@dataclass(frozen=True)
class Wheel:
    """One wheel in its robot's base frame (x forward, y left, z up)."""

    joint: str
    position: np.ndarray  # (3,) joint anchor in the base frame
    axis: np.ndarray  # (3,) unit spin axis in the base frame
    radius: float

    def rolling_direction(self) -> np.ndarray:
        """Unit ground direction the wheel centre moves at +1 rad/s (no slip): axis x up."""
        d = np.array([self.axis[1], -self.axis[0]])
        n = np.linalg.norm(d)
        return d / n if n > 1e-9 else d


def _geom_radius(model: mujoco.MjModel, g: int, axis_geom: np.ndarray) -> float:
    """Largest distance of the geom's surface from its spin axis (through the joint)."""
    gtype = int(model.geom_type[g])
    size = model.geom_size[g]
    if gtype in (SPHERE, CYLINDER, CAPSULE):
        return float(size[0])
    if gtype == MESH:
        mesh = model.geom_dataid[g]
        start, count = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
        verts = model.mesh_vert[start : start + count]
        radial = verts - np.outer(verts @ axis_geom, axis_geom)
        return float(np.linalg.norm(radial, axis=1).max())
    if gtype == ELLIPSOID:
        return float(np.sort(size)[1])
    return float(model.geom_rbound[g])


def wheel_geometry(
    model: mujoco.MjModel, data: mujoco.MjData, joint: str, base_body: int
) -> Wheel:
    """A hinge wheel's position, axis and radius relative to `base_body` (kinematics current)."""
    j = model.joint(joint).id
    body = model.jnt_bodyid[j]
    base_rot = data.xmat[base_body].reshape(3, 3)
    position = base_rot.T @ (data.xanchor[j] - data.xpos[base_body])
    axis = base_rot.T @ data.xaxis[j]
    axis = axis / np.linalg.norm(axis)
    radius = 0.0
    for g in range(model.body_geomadr[body], model.body_geomadr[body] + model.body_geomnum[body]):
        if model.geom_group[g] == GROUP_VISUAL:
            continue  # a visual mesh; a collision switched off for rollers still counts
        geom_rot = data.geom_xmat[g].reshape(3, 3)
        axis_geom = geom_rot.T @ data.xaxis[j]
        radius = max(radius, _geom_radius(model, g, axis_geom / np.linalg.norm(axis_geom)))
    return Wheel(joint=joint, position=position, axis=axis, radius=radius)


def lowest_collision_z(model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """The lowest world z of any colliding geom's bounding box (kinematics current)."""
    lowest = np.inf
    for g in range(model.ngeom):
        if model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0:
            continue
        if int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_PLANE):
            continue
        centre, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        rot = data.geom_xmat[g].reshape(3, 3)
        z = data.geom_xpos[g, 2] + rot[2] @ centre - np.abs(rot[2]) @ half
        lowest = min(lowest, float(z))
    return lowest if np.isfinite(lowest) else 0.0
