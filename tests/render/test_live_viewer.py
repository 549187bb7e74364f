"""The live viewer under Xvfb: a real window that shows the simulator's current state, the
same picture an offscreen render of that pose gives, reloaded and reframed after a
recompile, while the simulation keeps stepping."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

from arena_gym.render.canvas import open_canvas
from arena_gym.render.live_viewer import LiveViewer
from arena_gym.scene import Prim, SceneStore
from arena_gym.scene.lights import Light, LightTable
from arena_gym.sim import Simulator
from tests.render.pixels import centroid, red
from tests.render.xvfb import virtual_display
from tests.waiting import wait_until, within


@pytest.fixture(scope="module")
def display():
    with virtual_display() as name, pytest.MonkeyPatch.context() as patch:
        patch.setenv("DISPLAY", name)
        yield name


def _showing(display: str, rect, expected: np.ndarray, seconds: float = 30.0) -> np.ndarray:
    """The window's pixels once its red box sits where `expected` (column, row) says, or
    the last grab after `seconds`: the viewer draws on its own thread at llvmpipe's pace
    (seconds a frame on a loaded machine)."""
    from PIL import ImageGrab

    last = [np.empty(0)]  # the latest grab only

    def placed() -> bool:
        last[0] = np.asarray(ImageGrab.grab(xdisplay=display))[:rect.height, :rect.width]
        box = red(last[0])
        return bool(box.any() and np.abs(centroid(box) - expected).max() < 2.0)

    within(placed, seconds)
    return last[0]


def test_the_window_shows_the_current_state_as_an_offscreen_render_does(display):
    store = SceneStore(1)
    store[0].spawn_prims([Prim("red", pose=(0.0, 0.0, 0.2, 0.0), scale=(0.4, 0.4, 0.4),
                               rgba=(1, 0, 0, 1), movable=True),
                          Prim("far", pose=(3.0, 3.0, 0.2, 0.0), scale=(0.2, 0.2, 0.4))])
    sim = Simulator(store)
    viewer = LiveViewer(sim, fps=60).start()
    try:
        model = store[0].model
        cam = viewer.handle.cam
        assert cam.distance == pytest.approx(1.6 * model.stat.extent)  # the env framed
        rect = viewer.handle.viewport
        sim.state(0, "mocap_pos")[0] = (1.0, -0.5, 0.2)  # moved through state: no recompile
        sim.step(10)
        canvas = open_canvas(model, rect.width, rect.height)
        data = mujoco.MjData(model)
        data.mocap_pos[0] = (1.0, -0.5, 0.2)
        mujoco.mj_forward(model, data)
        offscreen = canvas.draw(data, cam, lambda scene: None)
        canvas.close()
        shot = _showing(display, rect, centroid(red(offscreen)))
        a, b = centroid(red(shot)), centroid(red(offscreen))
        np.testing.assert_allclose(a, b, atol=2.0)
        assert abs(red(shot).sum() - red(offscreen).sum()) < 0.05 * red(offscreen).sum()
        assert viewer.models_loaded == 1
        store[0].spawn_prims([Prim("new", pose=(-3.0, -3.0, 0.2, 0.0))])  # a recompile
        sim.step(10)
        wait_until(lambda: viewer.models_loaded == 2, 30,
                   lambda: f"the viewer to load the new model ({viewer.models_loaded} loaded)")
        assert viewer.handle.cam.distance == pytest.approx(1.6 * store[0].model.stat.extent)
        assert viewer.running and viewer.error is None
    finally:
        viewer.close()
        sim.close()


def test_arena_gym_view_drives_env_0_under_the_viewer(display, capsys):
    from arena_gym.cli import main

    assert main(["view", "--seconds", "2", "--set", "max_episode_steps=50"]) == 0
    out = capsys.readouterr().out
    steps, frames = (int(n) for n in re.findall(r"viewed (\d+) steps .* (\d+) frames shown",
                                                 out)[0])
    assert steps > 0 and frames > 0


def test_arena_gym_view_without_a_display_says_so(monkeypatch, capsys):
    from arena_gym.cli import main
    from arena_gym.render.viewer import NO_DISPLAY_VIEW

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["view"]) == 2
    assert capsys.readouterr().err.strip() == f"arena-gym: error: {NO_DISPLAY_VIEW}"
    assert main(["bridge", "--view"]) == 2  # the bridge's viewer too, before anything starts
    assert capsys.readouterr().err.strip() == f"arena-gym: error: {NO_DISPLAY_VIEW}"


def _brightness(display: str, rect, ok, seconds: float = 30.0) -> float:
    """The window's mean pixel value once ok(mean) holds, or the last after `seconds`."""
    from PIL import ImageGrab

    last = [0.0]

    def bright_enough() -> bool:
        last[0] = float(np.asarray(ImageGrab.grab(xdisplay=display))[:rect.height,
                                                                      :rect.width].mean())
        return bool(ok(last[0]))

    within(bright_enough, seconds)
    return last[0]


def test_the_window_shows_the_light_table(display):
    store = SceneStore(1)
    store[0].spawn_prims([Prim("white", pose=(0.0, 0.0, 0.5, 0.0), scale=(2.0, 2.0, 1.0),
                                rgba=(1, 1, 1, 1))])
    sim = Simulator(store)
    table = LightTable()
    table.spawn(Light("sun", "distant", direction=(0.3, 0.2, -1.0), intensity=400.0))
    viewer = LiveViewer(sim, fps=30, lights=lambda env: table).start()
    try:
        rect = viewer.handle.viewport
        lit = _brightness(display, rect, lambda mean: mean > 30)
        table.dim("sun", 0.0)  # the table is all the light: dark
        dark = _brightness(display, rect, lambda mean: mean < 0.5 * lit)
        table.dim("sun", 1.0)
        again = _brightness(display, rect, lambda mean: mean > 0.9 * lit)
        assert lit > 30 and dark < 0.5 * lit and again > 0.9 * lit, (lit, dark, again)
        assert viewer.running and viewer.error is None
    finally:
        viewer.close()
        sim.close()
