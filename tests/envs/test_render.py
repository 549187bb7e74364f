"""render_mode="rgb_array" and "human": frame sizes, what the views show, no cost unasked."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import arena_gym  # noqa: F401  (registers the id)
from arena_gym.config import ConfigError
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.render.cameras import eye, project
from arena_gym.render.overlays import MAX_BEAMS
from arena_gym.render.viewer import NO_DISPLAY

SMALL = {"max_episode_steps": 40}
FORWARD = np.array([0.5, 0.0], dtype=np.float32)  # arena_diffbot: (v, omega)


def _env(view: str, **kwargs) -> gym.Env:
    return gym.make("ArenaMujoco-v0", render_mode="rgb_array", render={"view": view, **kwargs},
                    **SMALL)


@pytest.mark.parametrize("view", ["follow", "top_down"])
def test_frame_has_the_configured_size_and_is_not_blank(view):
    env = _env(view, width=160, height=96)
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (96, 160, 3) and frame.dtype == np.uint8
    assert frame.reshape(-1, 3).std(axis=0).min() > 10  # a picture, not a cleared buffer
    env.close()


def test_metadata_lists_the_modes_and_the_control_rate():
    env = gym.make("ArenaMujoco-v0", control_dt=0.05, **SMALL)
    assert env.metadata["render_modes"] == ["human", "rgb_array"]
    assert env.metadata["render_fps"] == pytest.approx(20.0)
    env.close()


def test_top_down_view_shows_the_goal_marker_at_the_goal():
    env = _env("top_down")
    env.reset(seed=3)
    frame = env.render()
    view = env.unwrapped.view
    gx, gy = env.unwrapped.core.task.goal[0]
    u, v = project(view._canvases[0].scene, (gx, gy, 0.012), 320, 240)
    assert 5 <= u <= 315 and 5 <= v <= 235
    patch = frame[int(v) - 2 : int(v) + 3, int(u) - 2 : int(u) + 3].reshape(-1, 3).astype(int)
    r, g, b = np.median(patch, axis=0)
    assert g > 200 and g - r > 80 and g - b > 60, (r, g, b)  # the goal's green, lit
    # a point 1.5 goal radii away is floor, not marker
    u2, _ = project(view._canvases[0].scene, (gx + 1.5 * 0.5, gy, 0.012), 320, 240)
    if 0 <= u2 < 320:
        r2, g2, _ = frame[int(v), int(u2)].astype(int)
        assert not (g2 > 200 and g2 - r2 > 80)
    env.close()


def test_beams_are_drawn_from_the_current_scan():
    env = _env("top_down")
    obs, _ = env.reset(seed=2)
    obs, *_ = env.step(FORWARD)
    env.render()
    unwrapped = env.unwrapped
    core = unwrapped.core
    marks = unwrapped.view.marks(0, unwrapped.view.beams())
    offsets = marks.beam_to - marks.beam_from
    lengths = np.linalg.norm(offsets, axis=1)
    np.testing.assert_allclose(lengths, obs["scan"] * core.max_range, rtol=1e-6)
    # beam i points along the robot's heading plus the lidar's angle i (the observed scan)
    headings = np.arctan2(offsets[:, 1], offsets[:, 0])
    turn = np.angle(np.exp(1j * (headings - core.task.pose[0, 3] - core.scan_angles)))
    assert np.abs(turn[lengths > 0.05]).max() < 1e-3
    scene = unwrapped.view._canvases[0].scene
    decor = sum(scene.geoms[i].category == 4 for i in range(scene.ngeom))  # mjCAT_DECOR
    assert decor == 2 + MAX_BEAMS + 1  # goal disc and pole, beams, heading arrow
    env.close()


def test_follow_camera_stays_behind_the_robot_as_it_moves():
    env = _env("follow")
    env.reset(seed=1)
    before = env.render()
    for _ in range(8):
        env.step(FORWARD)
    after = env.render()
    core = env.unwrapped.core
    x, y, _, yaw = core.task.pose[0]
    seen_from = eye(env.unwrapped.view._canvases[0].scene)
    behind = 2.5 * np.cos(np.radians(30.0))  # follow_distance, elevation -30 deg
    np.testing.assert_allclose(seen_from[:2], [x - behind * np.cos(yaw), y - behind * np.sin(yaw)],
                               atol=1e-4)
    assert np.abs(after.astype(int) - before.astype(int)).mean() > 3.0
    env.close()


def test_vector_env_returns_one_frame_per_env():
    envs = ArenaVectorEnv(3, render_mode="rgb_array", render={"width": 80, "height": 60}, **SMALL)
    envs.reset(seed=0)
    frames = envs.render()
    assert isinstance(frames, tuple) and len(frames) == 3
    assert all(f.shape == (60, 80, 3) and f.dtype == np.uint8 for f in frames)
    assert not np.array_equal(frames[0], frames[1])  # different episodes, different pictures
    envs.close()


def test_rendering_does_not_change_the_episode():
    plain, shown = gym.make("ArenaMujoco-v0", **SMALL), _env("follow")
    a, _ = plain.reset(seed=4)
    b, _ = shown.reset(seed=4)
    for _ in range(12):
        shown.render()
        a, ra, *_ = plain.step(FORWARD)
        b, rb, *_ = shown.step(FORWARD)
        assert a["scan"].tobytes() == b["scan"].tobytes() and ra == rb
    plain.close()
    shown.close()


def test_no_render_mode_makes_no_renderer():
    env = gym.make("ArenaMujoco-v0", **SMALL)
    env.reset(seed=0)
    env.step(FORWARD)
    with pytest.warns(UserWarning, match=re.escape("render() called without a render mode")):
        assert env.render() is None
    assert env.unwrapped.view._canvases == {} and env.unwrapped.view._frames is None
    env.close()


def test_bad_view_and_size_are_refused():
    with pytest.raises(ConfigError, match=re.escape(
            "width: expected an integer >= 1 and <= 4096, got 0")):
        ArenaVectorEnv(1, render={"width": 0})
    with pytest.raises(ConfigError, match=re.escape(
            "render.view: expected 'follow' or 'top_down', got 'side'")):
        ArenaVectorEnv(1, render={"view": "side"})


def test_human_mode_without_a_display_says_so(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(RuntimeError, match=re.escape(NO_DISPLAY)):
        gym.make("ArenaMujoco-v0", render_mode="human", **SMALL)
