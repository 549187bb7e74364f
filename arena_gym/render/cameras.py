"""Where the views look from: the follow camera and the top-down camera, and projecting a
world point to the pixel it lands on (what the views' tests check frames with)."""

from __future__ import annotations

import math

import mujoco
import numpy as np

from arena_gym.config import RenderConfig

LOOK_HEIGHT = 0.2  # m above the robot's base the follow camera aims at
MARGIN = 0.5  # m of floor shown around the world's free area in the top-down view
ABOVE = 20.0  # m: the top-down camera's height over the floor (orthographic: any height)


def follow_camera(pose: np.ndarray, cfg: RenderConfig) -> mujoco.MjvCamera:
    """Behind and above the robot at planar pose (x, y, z, yaw), looking along its heading."""
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    camera.lookat[:] = (pose[0], pose[1], pose[2] + LOOK_HEIGHT)
    camera.distance = cfg.follow_distance
    camera.azimuth = math.degrees(pose[3])
    camera.elevation = cfg.follow_elevation
    return camera


def top_down_camera(lo: np.ndarray, hi: np.ndarray, width: int,
                    height: int) -> tuple[mujoco.MjvCamera, float]:
    """An orthographic camera straight down over the box lo..hi (x, y) plus MARGIN, +x to the
    right and +y up in the frame, and the visible height in metres (its fovy)."""
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    camera.orthographic = 1
    centre = (np.asarray(lo) + np.asarray(hi)) / 2
    camera.lookat[:] = (centre[0], centre[1], 0.0)
    camera.distance = ABOVE
    camera.azimuth = 90.0  # the camera's "forward" on the floor is +y: +y is up in the frame
    camera.elevation = -90.0
    span = np.asarray(hi) - np.asarray(lo) + 2 * MARGIN
    return camera, float(max(span[1], span[0] * height / width))


def view_camera(cfg: RenderConfig, pose: np.ndarray,
                bounds: tuple[np.ndarray, np.ndarray]) -> tuple[mujoco.MjvCamera, float | None]:
    """The configured view's camera and fovy (None: the model's): top-down over the world's
    `bounds` (lo, hi), else following the robot at `pose`."""
    if cfg.view == "top_down":
        return top_down_camera(*bounds, cfg.width, cfg.height)
    return follow_camera(pose, cfg), None


def free_eye(camera: mujoco.MjvCamera) -> np.ndarray:
    """Where a free camera looks from: `distance` back from `lookat` along its azimuth and
    elevation (as MuJoCo places it)."""
    az, el = math.radians(camera.azimuth), math.radians(camera.elevation)
    forward = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    return np.asarray(camera.lookat, dtype=float) - camera.distance * forward


def eye(scene: mujoco.MjvScene) -> np.ndarray:
    """Where the last frame was seen from: the scene keeps two eyes (stereo, half the
    interpupillary distance to either side); a mono frame is drawn from between them."""
    return (np.asarray(scene.camera[0].pos) + np.asarray(scene.camera[1].pos)) / 2


def project(scene: mujoco.MjvScene, point: np.ndarray, width: int,
            height: int) -> tuple[float, float]:
    """(column, row) of world `point` in the last frame drawn from `scene`, row 0 at the top."""
    cam = scene.camera[0]
    forward, up = np.asarray(cam.forward), np.asarray(cam.up)
    right = np.cross(forward, up)
    rel = np.asarray(point, dtype=float) - eye(scene)
    x, y, depth = rel @ right, rel @ up, rel @ forward
    if not cam.orthographic:  # to the near plane, where the frustum is given
        x, y = x * cam.frustum_near / depth, y * cam.frustum_near / depth
    half_h = (cam.frustum_top - cam.frustum_bottom) / 2
    half_w = cam.frustum_width or half_h * width / height
    u = (x - (cam.frustum_center - half_w)) / (2 * half_w) * width
    v = (cam.frustum_top - y) / (cam.frustum_top - cam.frustum_bottom) * height
    return float(u), float(v)
