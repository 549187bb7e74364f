"""An offscreen canvas for one model: draws a free camera's view plus overlay geoms.

It is the camera sensors' offscreen target (arena_gym.sensors.camera.Offscreen): the same
GL context selection (MUJOCO_GL, default egl), the same speed flags (no shadows,
reflections or skybox), so there is one way to get pixels out of MuJoCo. What it adds is a
free camera instead of a model camera, overlay geoms in the scene, its own choice of geom
groups, and multisampling (frames people watch; sensors need exact depth instead).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import mujoco
import numpy as np

from arena_gym.geometry import groups
from arena_gym.render.cameras import free_eye
from arena_gym.render.lights import lit
from arena_gym.scene.lights import LightTable
from arena_gym.sensors.camera import GL_ERRORS, Offscreen

# what users see: the world and the robot's visual meshes, no ceilings (they would hide the
# room from above), no collision hulls or sites
VIEW_GROUPS = (groups.GROUP_STATIC, groups.GROUP_VISUAL)

Overlay = Callable[[mujoco.MjvScene], None]


class Canvas(Offscreen):
    """Renders (height, width, 3) uint8 frames of one model."""

    def __init__(self, model: mujoco.MjModel, width: int, height: int,
                 quads: int | None = None) -> None:
        """`quads`: quads per box side (MuJoCo lights per vertex: fixtures need many,
        lights.FIXTURE_QUADS); None keeps the model's `vis.quality.numquads`."""
        saved = model.vis.quality.numquads
        if quads is not None:
            model.vis.quality.numquads = quads
        try:
            super().__init__(model, width, height, multisample=True)
        finally:
            model.vis.quality.numquads = saved
        self.quads = quads
        self.option = mujoco.MjvOption()
        self.option.geomgroup[:] = 0
        self.option.geomgroup[list(VIEW_GROUPS)] = 1
        self.option.sitegroup[:] = 0

    def draw(self, data: mujoco.MjData, camera: mujoco.MjvCamera, overlay: Overlay,
             fovy: float | None = None, lights: LightTable | None = None) -> np.ndarray:
        """A new frame (top row first) of `data` seen by `camera`, with `overlay` adding
        geoms to the scene. `fovy` overrides the model's free-camera fovy (for an
        orthographic camera: the visible height in metres). `lights`: the env's light
        table, assigned to the model's light slots for this view (render/lights.py)."""
        model = self.model
        saved = model.vis.global_.fovy
        if fovy is not None:
            model.vis.global_.fovy = fovy
        try:
            self.context.make_current()
            with lit(model, data, lights, free_eye(camera)):
                mujoco.mjv_updateScene(model, data, self.option, None, camera,
                                       mujoco.mjtCatBit.mjCAT_ALL.value, self.scene)
        finally:
            model.vis.global_.fovy = saved
        overlay(self.scene)
        return self.read_rgb()[::-1].copy()


def open_canvas(model: mujoco.MjModel, width: int, height: int,
                quads: int | None = None) -> Canvas:
    """A Canvas, or a RuntimeError that says which GL backend failed and what to try."""
    try:
        return Canvas(model, width, height, quads)
    except GL_ERRORS as exc:
        backend = os.environ.get("MUJOCO_GL")
        raise RuntimeError(
            f"render: expected an offscreen OpenGL context (MUJOCO_GL={backend!r}), got "
            f"{type(exc).__name__}: {exc}. Install EGL (libegl1) or set MUJOCO_GL=osmesa "
            "with OSMesa installed (libosmesa6)"
        ) from exc
