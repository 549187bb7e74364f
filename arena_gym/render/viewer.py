"""render_mode="human": MuJoCo's passive viewer on env 0, synced after every reset and step.

The viewer shows a private copy of env 0 (never the simulator's own state) with the same
overlays as the offscreen views. It needs a display: without one the env says so when it
is made, instead of failing inside GLFW.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import mujoco

NO_DISPLAY = (
    "render_mode='human': expected a display for MuJoCo's viewer, got none (DISPLAY and "
    "WAYLAND_DISPLAY are unset). Use render_mode='rgb_array' to render offscreen, or run "
    "under a display (e.g. xvfb-run)"
)


NO_DISPLAY_VIEW = (
    "view: expected a display for MuJoCo's viewer, got none (DISPLAY and WAYLAND_DISPLAY "
    "are unset). Run under a display (e.g. xvfb-run)"
)


def has_display() -> bool:
    return not sys.platform.startswith("linux") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def require_display(message: str = NO_DISPLAY) -> None:
    """Raise a RuntimeError with `message` when no display is available (Linux)."""
    if not has_display():
        raise RuntimeError(message)


class HumanViewer:
    """A passive viewer window on one model; reopened if the model is rebuilt."""

    def __init__(self) -> None:
        self._handle = None
        self._model: mujoco.MjModel | None = None
        self._data: mujoco.MjData | None = None

    def show(self, model: mujoco.MjModel, source: mujoco.MjData,
             overlay: Callable[[mujoco.MjvScene], None]) -> None:
        """Copy `source` into the window's data, redraw `overlay`, sync the window."""
        if self._handle is not None and self._model is not model:
            self.close()
        if self._handle is None:
            import mujoco.viewer

            self._model, self._data = model, mujoco.MjData(model)
            mujoco.mj_copyData(self._data, model, source)
            self._handle = mujoco.viewer.launch_passive(model, self._data)
        if not self._handle.is_running():  # the user closed the window: stop drawing
            return
        with self._handle.lock():
            mujoco.mj_copyData(self._data, model, source)
            self._handle.user_scn.ngeom = 0
            overlay(self._handle.user_scn)
        self._handle.sync()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
        self._handle = self._model = self._data = None
