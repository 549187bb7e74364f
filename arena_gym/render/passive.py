"""A handle on MuJoCo's passive viewer for one env, synced by its owner: what
`mujoco.viewer.launch_passive` gives a script that steps its own MjData, for an env of a
lockstep Simulator (`arena_gym.Simulation.viewer`, as mujoco_ros's passive viewer).

    with PassiveViewer(sim, env=0) as viewer:  # a window (needs a display), closed after
        sim.step(100); viewer.sync()          # the window shows env 0 now
        viewer.sync(state_only=True)          # only the state (as the viewer's own flag)
    with viewer.lock():                       # the window's state, between its frames
        viewer.handle.cam.distance = 3.0
    viewer.is_running(); viewer.close()

The window shows private copies of the env's model and state (taken under the simulator's
lock at each `sync`), never the simulator's own: what the viewer's panels or mouse change
(a perturbation, an option) stays in the window; commands reach the simulation through its
controller only. When the env's model is replaced (a recompile, a reload: `follow`) the
next `sync` gives the window the new model and frames the whole env again. Unlike
`LiveViewer` (arena-gym view) nothing here runs on a thread of ours: a frame is handed
over only when `sync` is called (by the owner, or after each step with `auto_sync`).
"""

from __future__ import annotations

import copy
from contextlib import AbstractContextManager
from typing import Self

import mujoco
import numpy as np

from arena_gym.render.live_viewer import _quiet_x_errors, frame_all
from arena_gym.render.viewer import NO_DISPLAY_VIEW, require_display
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.workers import Workers
from arena_gym.sim.simulator import Simulator

_STATE = mujoco.mjtState.mjSTATE_INTEGRATION


class PassiveViewer:
    """MuJoCo's passive viewer window on env `env` of `sim`: `sync(state_only=False)`,
    `lock()`, `is_running()`, `close()`, a context manager that closes it; `auto_sync` is
    for the owner (Simulation.step syncs the viewers that set it).
    RuntimeError(NO_DISPLAY_VIEW) without a display."""

    def __init__(self, sim: Simulator, env: int = 0, auto_sync: bool = False) -> None:
        sim.store.scene(env)  # a clear error for an unknown env
        if not isinstance(auto_sync, bool):
            raise ValueError(f"auto_sync: expected true or false, got {auto_sync!r}")
        require_display(NO_DISPLAY_VIEW)
        _quiet_x_errors()
        self.env, self.auto_sync = env, auto_sync
        self.models_loaded = 0
        self._handle = None
        self._source: mujoco.MjModel | None = None  # the env's model the window shows
        self._closed = False
        self.follow(sim)
        self.sync()

    def follow(self, sim: Simulator) -> None:
        """Show env `env` of `sim` from the next sync on (a reload's new simulator)."""
        sim.store.scene(self.env)
        self.sim = sim
        self._frames = Frames(sim, Workers(1))

    @property
    def handle(self):
        """MuJoCo's viewer handle (cam, opt, user_scn, viewport, d, m): change it under
        `lock()`."""
        return self._handle

    def is_running(self) -> bool:
        return not self._closed and self._handle is not None and self._handle.is_running()

    def lock(self) -> AbstractContextManager:
        """The window's lock: hold it to change what the window shows between its frames."""
        self._live("lock")
        return self._handle.lock()

    def sync(self, state_only: bool = False) -> None:
        """Hand the window the env's state now (taken under the simulator's lock); nothing
        once the user closed the window. `state_only`: the integration state alone
        (mjSTATE_INTEGRATION: time, qpos, qvel, act, ctrl, applied forces, mocap, ...),
        and the viewer's own `sync(state_only=True)`, as mujoco.viewer's handle takes it;
        a new model is handed over whole either way."""
        self._live("sync")
        if not isinstance(state_only, bool):
            raise ValueError(f"state_only: expected true or false, got {state_only!r}")
        if self._handle is not None and not self._handle.is_running():
            return
        with self.sim.lock():  # one state between ticks; no GL work under the lock
            self._frames.begin(forced=False)
            model = self._frames.model(self.env)
            source = self._frames.snapshot(self.env)
            if model is self._source:
                with self._handle.lock():
                    if state_only:
                        state = np.empty(mujoco.mj_stateSize(model, _STATE))
                        mujoco.mj_getState(model, source, state, _STATE)
                        mujoco.mj_setState(self._handle.m, self._handle.d, state, _STATE)
                    else:
                        mujoco.mj_copyData(self._handle.d, self._handle.m, source)
            else:
                shown = copy.copy(model)
                data = mujoco.MjData(shown)
                mujoco.mj_copyData(data, shown, source)
        if model is not self._source:
            self._load(model, shown, data)
            state_only = False
        self._handle.sync(state_only)

    def _load(self, model: mujoco.MjModel, shown: mujoco.MjModel, data: mujoco.MjData) -> None:
        """A new model: (re)open the window on private copies and frame the whole env."""
        import mujoco.viewer

        if self._handle is not None:
            self._handle.close()
        self._handle = mujoco.viewer.launch_passive(shown, data, show_left_ui=False,
                                                    show_right_ui=False)
        self._handle.sync()  # the window has loaded the model: its camera is ours to set
        with self._handle.lock():
            frame_all(self._handle.cam, shown)
        self._source = model
        self.models_loaded += 1

    def _live(self, call: str) -> None:
        if self._closed:
            raise RuntimeError(f"viewer of env {self.env}: {call}() after close(); ask for a "
                               "new one (Simulation.viewer)")

    def close(self) -> None:
        """Close the window (idempotent)."""
        self._closed = True
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
