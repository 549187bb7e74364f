"""Viewport capture: a 1920x1080 frame from a requested pose, roll and horizontal fov
(perspective or orthographic) shows what is there, where it projects, after min_time."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from arena_gym.render.viewport import Viewport, ViewportCapture
from arena_gym.scene import Prim, SceneStore
from arena_gym.sim import Simulator
from tests.render.pixels import centroid, red

RED = (1.0, 0.0, 0.0, 1.0)
BOX = np.array([3.0, 1.0, 0.5])  # centre of a 0.3 m red cube


@pytest.fixture(scope="module")
def capture():
    store = SceneStore(2)
    store[0].spawn_prims([Prim("red", pose=(*BOX, 0.0), scale=(0.3, 0.3, 0.3), rgba=RED)])
    sim = Simulator(store)
    grab = ViewportCapture(sim)
    yield sim, grab
    grab.close()
    sim.close()



@pytest.mark.parametrize("view", [
    Viewport(pos=(0.0, 0.0, 1.0), yaw=0.3, pitch=-0.1, hfov=70.0),
    Viewport(pos=(0.0, 0.0, 1.0), yaw=0.3, pitch=-0.1, roll=math.radians(40), hfov=70.0),
    Viewport(pos=(1.0, -2.0, 2.0), yaw=1.2, pitch=-0.4, roll=-0.5, hfov=100.0),
    Viewport(pos=(3.0, 1.0, 10.0), pitch=-math.pi / 2 + 1e-6, orthographic=True, ortho_width=4.0),
])
def test_a_red_box_appears_where_the_view_projects_it(capture, view):
    _, grab = capture
    frame = grab(0, view)
    assert frame.shape == (1080, 1920, 3)
    box = red(frame)
    assert box.sum() > 100
    expected = np.array(view.project(BOX))
    # the visible faces' centroid lies within the cube's projected half-size of its centre
    half = 0.15 * (1920 / view.ortho_width if view.orthographic else
                   960 / math.tan(math.radians(view.hfov) / 2)
                   / ((BOX - view.pos) @ view.axes()[0]))
    assert np.abs(centroid(box) - expected).max() < half
    assert not red(grab(1, view)).any()  # env 1 has no box


def test_roll_turns_the_frame_about_its_centre(capture):
    _, grab = capture
    level = Viewport(pos=(0.0, 1.0, 0.5), hfov=60.0)  # the box straight ahead, 3 m away
    shifted = Viewport(pos=(0.0, 0.4, 0.5), hfov=60.0)
    rolled = Viewport(pos=(0.0, 0.4, 0.5), hfov=60.0, roll=math.pi / 2)
    a = centroid(red(grab(0, shifted))) - (960, 540)
    b = centroid(red(grab(0, rolled))) - (960, 540)
    assert a[0] < -100  # the box is to the left
    # a positive roll lifts the camera's left side: the image turns a quarter clockwise
    np.testing.assert_allclose(b, [a[1], -a[0]], atol=3.0)
    assert red(grab(0, level))[540, 960]


def test_min_time_steps_a_lockstep_simulator_until_then(capture):
    sim, grab = capture
    start = sim.clock
    grab(0, Viewport(pos=(0.0, 0.0, 1.0), width=64, height=36), min_time=start + 0.5)
    assert start + 0.5 <= sim.clock < start + 0.5 + sim.timestep
    sim.start()  # free-running: the capture waits for the clock instead of stepping
    try:
        grab(0, Viewport(pos=(0.0, 0.0, 1.0), width=64, height=36), min_time=sim.clock + 0.2)
        assert sim.running
    finally:
        sim.stop()
    sim.rt_factor = 0.1  # a slow free run: 1 s of sim time takes 10 s
    sim.start()
    try:
        with pytest.raises(TimeoutError, match=re.escape(
                "min_time: expected the clock to reach")):
            grab(0, Viewport(pos=(0.0, 0.0, 1.0), width=64, height=36),
                 min_time=sim.clock + 1.0, timeout=0.05)
    finally:
        sim.stop()
        sim.rt_factor = 1.0
    with pytest.raises(ValueError, match=re.escape("Viewport.hfov: expected degrees in (0, "
                                                   "180), got 180.0")):
        Viewport(pos=(0, 0, 1), hfov=180.0)
