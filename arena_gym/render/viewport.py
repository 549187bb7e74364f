"""Viewport capture: a frame of one env from any pose, roll and horizontal field of view,
offscreen (headless EGL), perspective or orthographic, after a minimum sim time.

    capture = ViewportCapture(sim)                # or (sim, runner): one running free
    view = Viewport(pos=(-3, 0, 1.5), yaw=0.0, pitch=-0.3, roll=0.0, hfov=90.0)
    frame = capture(0, view, min_time=2.0)        # (1080, 1920, 3) uint8, top row first

Angles in radians except `hfov` (degrees). The camera looks along its x axis turned by yaw
(about z), then pitch (down is negative), then roll (right-handed about the line of sight:
a positive roll lifts the camera's left side, the image turns clockwise); the image's up
is the camera's z. Orthographic: `ortho_width` metres span the frame's width.
`min_time`: a simulator stepped in lockstep is stepped until its clock reaches it; one its
`runner` (sim/runner.py) runs free is waited for (`timeout` seconds of wall time at most).

Frames are drawn from a private copy of the env's state (the sensors' Frames path), so a
capture never disturbs the simulation; `lights` is the env's light table, if any.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.render.canvas import Canvas, open_canvas
from arena_gym.render.lights import FIXTURE_QUADS
from arena_gym.scene.lights import LightTable
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.workers import Workers
from arena_gym.sim.runner import Runner
from arena_gym.sim.simulator import Simulator

WIDTH, HEIGHT = 1920, 1080
NEAR, FAR = 0.05, 200.0  # m: the frustum's clipping planes


@dataclass(frozen=True)
class Viewport:
    """A free camera's pose (position, yaw, pitch, roll), lens (horizontal fov, or orthographic
    width) and image size; checked on creation."""

    pos: tuple[float, float, float]
    yaw: float = 0.0
    pitch: float = 0.0
    roll: float = 0.0
    hfov: float = 90.0  # deg, perspective
    orthographic: bool = False
    ortho_width: float = 10.0  # m, orthographic
    width: int = WIDTH
    height: int = HEIGHT

    def __post_init__(self) -> None:
        values = (*self.pos, self.yaw, self.pitch, self.roll, self.hfov, self.ortho_width)
        if len(self.pos) != 3 or not all(math.isfinite(float(v)) for v in values):
            raise ValueError(f"Viewport: expected a finite pos (x, y, z) and angles, got "
                             f"pos={self.pos!r}, yaw={self.yaw!r}, pitch={self.pitch!r}, "
                             f"roll={self.roll!r}")
        if not 0 < self.hfov < 180:
            raise ValueError(f"Viewport.hfov: expected degrees in (0, 180), got {self.hfov!r}")
        if not self.ortho_width > 0:
            raise ValueError(f"Viewport.ortho_width: expected metres > 0, got "
                             f"{self.ortho_width!r}")
        for name in ("width", "height"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 1 <= value <= 8192:
                raise ValueError(f"Viewport.{name}: expected pixels in [1, 8192], got {value!r}")

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The camera's forward, left and up unit vectors in the world."""
        cy, sy = math.cos(self.yaw), math.sin(self.yaw)
        cp, sp = math.cos(self.pitch), math.sin(self.pitch)
        forward = np.array([cp * cy, cp * sy, sp])
        left0 = np.array([-sy, cy, 0.0])
        up0 = np.cross(forward, left0)
        cr, sr = math.cos(self.roll), math.sin(self.roll)  # turning about forward
        return forward, cr * left0 + sr * up0, cr * up0 - sr * left0

    def project(self, point: np.ndarray) -> tuple[float, float]:
        """(column, row) where a world point lands in this view's frame, row 0 at the top."""
        forward, left, up = self.axes()
        rel = np.asarray(point, dtype=float) - np.asarray(self.pos)
        x, y, depth = -(rel @ left), rel @ up, rel @ forward
        if self.orthographic:
            scale = self.width / self.ortho_width
            return self.width / 2 + x * scale, self.height / 2 - y * scale
        focal = self.width / 2 / math.tan(math.radians(self.hfov) / 2)
        return self.width / 2 + focal * x / depth, self.height / 2 - focal * y / depth


class ViewportCapture:
    """Viewport frames of the envs of a simulator (and the Runner that may run it free);
    one canvas per env and size."""

    def __init__(self, sim: Simulator, runner: Runner | None = None) -> None:
        self.sim, self.runner = sim, runner
        self._frames = Frames(sim, Workers(1))
        self._canvases: dict[tuple[int, int, int], Canvas] = {}
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FREE

    def __call__(self, env: int, view: Viewport, min_time: float = 0.0,
                 lights: LightTable | None = None, timeout: float = 60.0) -> np.ndarray:
        self.sim.store.scene(env)  # a clear error for an unknown env
        self._wait(min_time, timeout)
        with self.sim.lock():  # one state: not torn by a free-running step
            self._frames.begin(forced=False)
            data = self._frames.snapshot(env, cameras=True)
            model = self._frames.model(env)
        canvas = self._canvas(env, model, view, lights)
        # the free camera where the view is (the headlight and the lamps of its eye
        # follow it); _aim then adds the roll and the frustum
        forward, _, _ = view.axes()
        self._camera.lookat[:] = np.asarray(view.pos) + forward
        self._camera.distance = 1.0
        self._camera.azimuth = math.degrees(view.yaw)
        self._camera.elevation = math.degrees(view.pitch)
        return canvas.draw(data, self._camera, lambda scene: _aim(scene, view, model),
                           lights=lights)

    def _wait(self, min_time: float, timeout: float) -> None:
        if not math.isfinite(min_time) or min_time < 0:
            raise ValueError(f"min_time: expected seconds >= 0, got {min_time!r}")
        if self.runner is not None and self.runner.running:
            deadline = time.monotonic() + timeout
            while self.sim.clock < min_time:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"min_time: expected the clock to reach {min_time} s "
                                       f"within {timeout} s, got {self.sim.clock:.3f} s")
                time.sleep(0.001)
            return
        missing = min_time - self.sim.clock
        if missing > 0:
            self.sim.step(math.ceil(missing / self.sim.timestep - 1e-9))

    def _canvas(self, env: int, model: mujoco.MjModel, view: Viewport,
                lights: LightTable | None) -> Canvas:
        quads = FIXTURE_QUADS if lights is not None and lights.has_fixtures else None
        key = (env, view.width, view.height)
        canvas = self._canvases.get(key)
        if canvas is None or canvas.model is not model or canvas.quads != quads:
            if canvas is not None:
                canvas.close()
            canvas = self._canvases[key] = open_canvas(model, view.width, view.height, quads)
        return canvas

    def close(self) -> None:
        for canvas in self._canvases.values():
            canvas.close()
        self._canvases.clear()


def _aim(scene: mujoco.MjvScene, view: Viewport, model: mujoco.MjModel) -> None:
    """Point the scene's GL cameras (both eyes: a mono frame) at the requested view: the
    free camera has no roll, the GL camera is a plain pose and frustum."""
    forward, _, up = view.axes()
    aspect = view.height / view.width
    for eye in (scene.camera[0], scene.camera[1]):
        eye.pos[:] = view.pos
        eye.forward[:] = forward
        eye.up[:] = up
        eye.orthographic = int(view.orthographic)
        eye.frustum_center = 0.0
        eye.frustum_near, eye.frustum_far = NEAR, FAR
        half_w = (view.ortho_width / 2 if view.orthographic
                  else NEAR * math.tan(math.radians(view.hfov) / 2))
        eye.frustum_width = half_w
        eye.frustum_top, eye.frustum_bottom = half_w * aspect, -half_w * aspect
