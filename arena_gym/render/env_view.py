"""What an env's `render()` does, shared by ArenaEnv and ArenaVectorEnv.

Nothing is made until the first frame: no GL context, no snapshot buffers. Each frame is
drawn from a private copy of the env's current state (arena_gym.sensors.state_access.Frames,
the sensors' own path), so rendering never touches the simulator's state and an episode
is the same bit for bit with or without it.
"""

from __future__ import annotations

import numpy as np
from gymnasium import logger

from arena_gym.render.cameras import view_camera
from arena_gym.render.canvas import Canvas, open_canvas
from arena_gym.render.lights import FIXTURE_QUADS
from arena_gym.render.overlays import Marks
from arena_gym.render.viewer import HumanViewer
from arena_gym.scene.lights import LightTable
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.workers import Workers


class EnvView:
    """Frames of the envs of a NavigationCore in the configured view (config `render`)."""

    def __init__(self, core, mode: str | None) -> None:
        self.core, self.mode = core, mode  # checked by the env (envs/rendering.py)
        self.cfg = core.cfg.render
        self._frames = None
        self._canvases: dict[int, Canvas] = {}
        self._viewer: HumanViewer | None = None
        self._lights: dict[int, LightTable] = {}
        declared = getattr(getattr(core.layout, "mechanisms", None), "lights", ())
        for env in range(core.n) if declared else ():  # the world's own lights (its YAML)
            for light in declared:
                self.lights(env).spawn(light)

    def lights(self, env: int) -> LightTable:
        """Env `env`'s light table (render/lights.py): spawn, switch, dim and move lights
        there; frames show them from then on, nothing recompiles. Empty: the model's sun."""
        if not 0 <= env < self.core.n:
            raise ValueError(f"env: expected 0 <= env < {self.core.n}, got {env!r}")
        return self._lights.setdefault(env, LightTable())

    @property
    def fps(self) -> float:
        """Frames per second of a recording: one frame per control step."""
        return 1.0 / self.core.cfg.control_dt

    def render(self, envs: list[int]) -> tuple[np.ndarray, ...] | None:
        """Frames of `envs` ("rgb_array"), or the viewer synced ("human", None)."""
        if self.mode is None:
            logger.warn("render() called without a render mode: make the env with "
                        "render_mode='rgb_array' or 'human'")
            return None
        if self.mode == "human":
            self._show()
            return None
        self._begin()
        beams = self.beams()
        return tuple(self._frame(e, beams) for e in envs)

    def after_step(self) -> None:
        """What a reset or step does for the view: human mode redraws, others nothing."""
        if self.mode == "human":
            self._show()

    def _begin(self) -> None:
        if self._frames is None:

            self._frames = Frames(self.core.sim, Workers(1))
        self._frames.begin(forced=False)

    def beams(self) -> tuple[np.ndarray, np.ndarray]:
        """Every env's beam starts (num_envs, 3) and ends (num_envs, beams, 3): the scan
        the policy observes (ranges as the observation maps them), cast along the lidar's
        own rays at the current state."""
        core = self.core
        origins, directions = core.sensor_suite.lidar_rays("scan")
        ranges = core.scan_ranges().reshape(core.n, -1)
        return origins, origins[:, None] + directions * ranges[:, :, None]

    def marks(self, env: int, beams: tuple[np.ndarray, np.ndarray]) -> Marks:
        """The overlay of `env` now: goal, the observed lidar beams, pose."""
        core = self.core
        start, ends = beams[0][env], beams[1][env]
        return Marks(core.task.goal[env].copy(), core.cfg.goal_radius,
                     np.broadcast_to(start, ends.shape), ends, core.task.pose[env].copy(),
                     top_down=self.cfg.view == "top_down")

    def canvas(self, env: int) -> Canvas:
        model = self._frames.model(env)
        table = self._lights.get(env)
        quads = FIXTURE_QUADS if table is not None and table.has_fixtures else None
        canvas = self._canvases.get(env)
        if canvas is None or canvas.model is not model or canvas.quads != quads:
            if canvas is not None:
                canvas.close()
            canvas = self._canvases[env] = open_canvas(model, self.cfg.width, self.cfg.height,
                                                       quads)
        return canvas

    def _frame(self, env: int, beams: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        data = self._frames.snapshot(env, cameras=True)
        canvas = self.canvas(env)
        camera, fovy = view_camera(self.cfg, self.core.task.pose[env], self.core.layout.bounds())
        return canvas.draw(data, camera, self.marks(env, beams), fovy=fovy,
                           lights=self._lights.get(env))

    def _show(self) -> None:
        self._begin()
        if self._viewer is None:
            self._viewer = HumanViewer()
        self._viewer.show(self._frames.model(0), self._frames.snapshot(0, cameras=True),
                          self.marks(0, self.beams()))

    def close(self) -> None:
        for canvas in self._canvases.values():
            canvas.close()
        self._canvases.clear()
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None
