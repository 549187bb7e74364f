"""`arena-gym view`: MuJoCo's passive viewer on one env of a running simulator, fed from a
thread of its own, so a slow renderer skips frames instead of slowing the simulation.

    viewer = LiveViewer(sim, env=0).start()     # a window; the sim keeps running
    ...
    viewer.close()

At `fps` the viewer's thread takes one consistent copy of the env's state under the
simulator's lock (the sensors' Frames path: a few microseconds of lock, never a GL call)
and hands it to the window with a state-only sync; the window draws it on MuJoCo's own
render thread. Only when the env's model was replaced (a recompile, or a static body moved
in place) is the window given the new model, and its camera then frames the whole env
again (model.stat), until the user moves it. Needs a display (DISPLAY); under Xvfb it
works headless (tests/render/test_live_viewer.py).

`lights(env)` (optional): the env's light table (scene/lights.py), shown as the viewport
shows it (render/lights.py: the lamps of its camera's eye, the model's sun and headlight
off while the table has a scene light). The window takes them with a full sync, only when
what it shows would change (a light edited, switched by its regime, or the fixtures merged
otherwise from where the camera now stands).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
import time
from collections.abc import Callable

import mujoco
import numpy as np

from arena_gym.render.cameras import free_eye
from arena_gym.render.lights import lit, pick
from arena_gym.render.viewer import NO_DISPLAY_VIEW, require_display
from arena_gym.scene.builders import LIGHT_SLOTS
from arena_gym.scene.lights import LightTable
from arena_gym.sim.simulator import Simulator

FRAME_DISTANCE = 1.6  # x the model's extent: the whole env in view
FRAME_ELEVATION = -50.0  # deg


class LiveViewer:
    """A passive viewer window on env `env` of `sim`, fed at `fps` from its own thread."""

    def __init__(self, sim: Simulator, env: int = 0, fps: float = 30.0,
                 lights: Callable[[int], LightTable | None] | None = None) -> None:
        sim.store.scene(env)  # a clear error for an unknown env
        if not fps > 0:
            raise ValueError(f"fps: expected frames per second > 0, got {fps!r}")
        self.sim, self.env, self.period = sim, env, 1.0 / fps
        self.lights = lights
        self._lit: tuple | None = None  # what the window's lights show (see _lighting)
        self.frames_shown = 0
        self.models_loaded = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._handle = None
        self._model: mujoco.MjModel | None = None
        self._data: mujoco.MjData | None = None

    def start(self) -> LiveViewer:
        require_display(NO_DISPLAY_VIEW)
        _quiet_x_errors()
        self._thread = threading.Thread(target=self._run, name="arena-viewer", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30.0)
        if self.error is not None:
            raise RuntimeError(f"viewer: the window did not open: {self.error}") from self.error
        return self

    @property
    def running(self) -> bool:
        return (self._thread is not None and self._thread.is_alive() and self._handle is not None
                and self._handle.is_running())

    @property
    def handle(self):
        """MuJoCo's viewer handle (camera, viewport), for callers that look at the window."""
        return self._handle

    def _run(self) -> None:
        from arena_gym.sensors.state_access import Frames
        from arena_gym.sensors.workers import Workers

        frames = Frames(self.sim, Workers(1))
        try:
            while not self._stop.is_set():
                due = time.perf_counter() + self.period
                with self.sim.lock():  # one state between ticks; no GL work under the lock
                    frames.begin(forced=False)
                    model = frames.model(self.env)
                    source = frames.snapshot(self.env)
                    if model is self._model:
                        mujoco.mj_copyData(self._data, model, source)
                if model is not self._model:
                    self._load(model, source)
                elif not self._handle.is_running():
                    break  # the user closed the window
                else:
                    with self._handle.lock():
                        self._handle.d.qpos[:] = self._data.qpos
                        self._handle.d.mocap_pos[:] = self._data.mocap_pos
                        self._handle.d.mocap_quat[:] = self._data.mocap_quat
                        self._handle.d.time = self._data.time
                    self._sync(model)
                self.frames_shown += 1
                self._ready.set()
                self._stop.wait(max(0.0, due - time.perf_counter()))
        except BaseException as exc:  # surfaced by start() / close()
            self.error = exc
        finally:
            self._ready.set()
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def _sync(self, model: mujoco.MjModel) -> None:
        """Hand the window the new state; a full sync under the light table when the
        lights it shows change (a state-only sync leaves the window's lights as they are)."""
        table = self.lights(self.env) if self.lights is not None else None
        eye = free_eye(self._handle.cam)
        time_ = float(self._handle.d.time)
        shown = (id(table), table.version,
                 tuple((*lamp.pos.round(3), *lamp.diffuse.round(4))
                       for lamp in pick(table, eye, LIGHT_SLOTS, time_))) if table else None
        if shown == self._lit:
            self._handle.sync(state_only=True)
            return
        with lit(model, self._handle.d, table, eye):
            self._handle.sync()
        self._lit = shown

    def _load(self, model: mujoco.MjModel, source: mujoco.MjData) -> None:
        """A new model: (re)open the window on private copies and frame the whole env."""
        import mujoco.viewer

        if self._handle is not None:
            self._handle.close()
        self._model, self._data = model, mujoco.MjData(model)
        mujoco.mj_copyData(self._data, model, source)
        viewed = mujoco.MjData(model)
        mujoco.mj_copyData(viewed, model, source)
        self._handle = mujoco.viewer.launch_passive(model, viewed, show_left_ui=False,
                                                    show_right_ui=False)
        self._handle.sync()  # the window has loaded the model: its camera is ours to set
        with self._handle.lock():
            frame_all(self._handle.cam, model)
        self._lit = ()  # a new window: its lights are the model's until the next sync
        self._sync(model)
        self.models_loaded += 1

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
            self._thread = None


_X_HANDLER = None  # kept alive: Xlib holds a pointer to it


def _quiet_x_errors() -> None:
    """Report Xlib protocol errors instead of exiting: closing MuJoCo's passive viewer can
    race its render thread's last buffer swap (GLXBadDrawable), and Xlib's default handler
    would end the whole process for that."""
    global _X_HANDLER
    if _X_HANDLER is not None or not os.environ.get("DISPLAY"):
        return
    try:
        xlib = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    except OSError:
        return  # no Xlib: GLFW is not on X either
    handler_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    _X_HANDLER = handler_type(lambda display, event: 0)
    xlib.XSetErrorHandler(_X_HANDLER)


def frame_all(camera: mujoco.MjvCamera, model: mujoco.MjModel) -> None:
    """A free camera that sees the whole model (its bounding centre and extent)."""
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    camera.lookat[:] = np.asarray(model.stat.center)
    camera.distance = FRAME_DISTANCE * float(model.stat.extent)
    camera.azimuth = 90.0
    camera.elevation = FRAME_ELEVATION
