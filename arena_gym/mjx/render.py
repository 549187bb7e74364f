"""Frames of MJX envs through MuJoCo's renderer, as the CPU env draws them.

MJX has no renderer of its own that draws the CPU env's scene; each frame copies one env's
state (qpos, mocap boxes) from the device into a private MjData of the CPU env's model (the
unadapted one: the robot's real cylinders and meshes, the same qpos and mocap layout),
computes its kinematics and draws it on the CPU env's canvas with the same camera and
overlay (goal, the observed lidar beams, pose; arena_gym.render).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from arena_gym.config import EnvConfig
from arena_gym.geometry.rotations import quat_yaw
from arena_gym.mjx.model import Layout
from arena_gym.render.cameras import view_camera
from arena_gym.render.canvas import Canvas, open_canvas
from arena_gym.render.overlays import Marks


class MjxView:
    """rgb_array frames of a batched arena_gym.mjx.State (nothing made before the first)."""

    def __init__(self, layout: Layout, cfg: EnvConfig) -> None:
        self.layout, self.cfg = layout, cfg
        self._data: mujoco.MjData | None = None
        self._canvas: Canvas | None = None

    def frames(self, state: Any, envs: list[int]) -> tuple[np.ndarray, ...]:
        lay = self.layout
        if self._data is None:
            self._data = mujoco.MjData(lay.cpu_model)
            self._canvas = open_canvas(lay.cpu_model, self.cfg.render.width,
                                       self.cfg.render.height)
        qpos = np.asarray(state.data.qpos, np.float64)
        mocap_pos = np.asarray(state.data.mocap_pos, np.float64)
        mocap_quat = np.asarray(state.data.mocap_quat, np.float64)
        goal = np.asarray(state.goal, np.float64)
        scan = np.asarray(state.obs["scan"], np.float64)
        if self.cfg.scan.normalize:
            scan = scan * lay.range_max
        out = []
        for e in envs:
            d = self._data
            d.qpos[:], d.mocap_pos[:], d.mocap_quat[:] = qpos[e], mocap_pos[e], mocap_quat[e]
            mujoco.mj_kinematics(lay.cpu_model, d)
            mujoco.mj_camlight(lay.cpu_model, d)
            out.append(self._draw(d, qpos[e], goal[e], scan[e]))
        return tuple(out)

    def _draw(self, d: mujoco.MjData, qpos: np.ndarray, goal: np.ndarray,
              ranges: np.ndarray) -> np.ndarray:
        lay, render = self.layout, self.cfg.render
        q = qpos[lay.qpos_adr:lay.qpos_adr + 7]
        pose = np.concatenate([q[:3], [quat_yaw(q[3:7])]])
        origin, directions = lay.rays(q)
        ends = origin + directions * ranges[:, None]
        marks = Marks(goal, self.cfg.goal_radius, np.broadcast_to(origin, ends.shape), ends,
                      pose, top_down=render.view == "top_down")
        h = lay.room.half_inner  # the room world's bounds (RoomLayout.bounds)
        camera, fovy = view_camera(render, pose, (np.array([-h, -h]), np.array([h, h])))
        return self._canvas.draw(d, camera, marks, fovy=fovy)

    def close(self) -> None:
        if self._canvas is not None:
            self._canvas.close()
            self._canvas = None
