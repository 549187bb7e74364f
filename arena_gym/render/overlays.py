"""What the views draw on top of the world, as real scene geoms (mjv_initGeom and
mjv_connector): the goal marker, the current lidar beams and, from above, the heading.

From above every horizontal face is lit head-on, so the floor and the wall tops would both
come out white: the top-down view draws the floor dark instead (in the scene only, the
model keeps its colours), a map's usual look."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

GOAL_RGBA = np.array([0.1, 0.85, 0.2, 1.0], dtype=np.float32)
BEAM_RGBA = np.array([1.0, 0.15, 0.1, 0.4], dtype=np.float32)
FLOOR_RGBA = np.array([0.22, 0.24, 0.27, 1.0], dtype=np.float32)  # top-down floor
MAX_BEAMS = 90  # beams drawn at most (evenly spread): a full 360-beam fan hides the floor
HEADING_RGBA = np.array([0.1, 0.3, 1.0, 1.0], dtype=np.float32)
GOAL_POLE = 0.6  # m: the goal's pole, so the follow view sees the goal from afar
BEAM_WIDTH = 1.5  # px
_EYE = np.eye(3).ravel()


@dataclass(frozen=True)
class Marks:
    """One env's overlay at one instant: goal (x, y), goal radius, beam starts and ends
    (R, 3), robot pose (x, y, z, yaw); `top_down` adds the heading arrow, darkens the floor."""

    goal: np.ndarray
    goal_radius: float
    beam_from: np.ndarray
    beam_to: np.ndarray
    pose: np.ndarray
    top_down: bool

    def __call__(self, scene: mujoco.MjvScene) -> None:
        if self.top_down:
            _dark_floor(scene)
        gx, gy = self.goal
        _add(scene, mujoco.mjtGeom.mjGEOM_CYLINDER, (self.goal_radius, 0.005, 0.0),
             (gx, gy, 0.006), GOAL_RGBA)
        _add(scene, mujoco.mjtGeom.mjGEOM_CYLINDER, (0.03, GOAL_POLE / 2, 0.0),
             (gx, gy, GOAL_POLE / 2), GOAL_RGBA)
        every = -(-len(self.beam_to) // MAX_BEAMS)
        for a, b in zip(self.beam_from[::every], self.beam_to[::every], strict=True):
            _connect(scene, mujoco.mjtGeom.mjGEOM_LINE, BEAM_WIDTH, a, b, BEAM_RGBA)
        if self.top_down:
            x, y, z, yaw = self.pose
            tip = (x + 0.5 * np.cos(yaw), y + 0.5 * np.sin(yaw), z + 0.5)
            _connect(scene, mujoco.mjtGeom.mjGEOM_ARROW, 0.04, (x, y, z + 0.5), tip,
                     HEADING_RGBA)


def _dark_floor(scene: mujoco.MjvScene) -> None:
    for i in range(scene.ngeom):
        geom = scene.geoms[i]
        if geom.type == mujoco.mjtGeom.mjGEOM_PLANE:
            geom.rgba[:] = FLOOR_RGBA


def _next(scene: mujoco.MjvScene) -> mujoco.MjvGeom | None:
    if scene.ngeom >= scene.maxgeom:
        return None  # a full scene draws what fits rather than failing the frame
    geom = scene.geoms[scene.ngeom]
    scene.ngeom += 1
    return geom


def _add(scene: mujoco.MjvScene, kind: int, size, pos, rgba: np.ndarray) -> None:
    geom = _next(scene)
    if geom is not None:
        mujoco.mjv_initGeom(geom, kind, np.asarray(size, float), np.asarray(pos, float), _EYE,
                            rgba)
        geom.category = mujoco.mjtCatBit.mjCAT_DECOR


def _connect(scene: mujoco.MjvScene, kind: int, width: float, a, b, rgba: np.ndarray) -> None:
    geom = _next(scene)
    if geom is not None:
        mujoco.mjv_initGeom(geom, kind, np.zeros(3), np.zeros(3), _EYE, rgba)
        mujoco.mjv_connector(geom, kind, width, np.asarray(a, float), np.asarray(b, float))
        geom.category = mujoco.mjtCatBit.mjCAT_DECOR
