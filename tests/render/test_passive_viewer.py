"""Simulation.viewer under Xvfb: MuJoCo's passive viewer on one env of the façade, a real
window, synced by hand or after each step, one handle per env, following a reload; and the
CLI viewer's error without a display."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from arena_gym import Simulation
from arena_gym.render.viewer import NO_DISPLAY_VIEW
from tests.render.xvfb import virtual_display

WORKBENCH = Path(__file__).resolve().parents[1] / "sensors" / "mjcf" / "workbench.xml"


@pytest.fixture(scope="module")
def display():
    with virtual_display() as name, pytest.MonkeyPatch.context() as patch:
        patch.setenv("DISPLAY", name)
        yield name


def _yaw(sim: Simulation, env: int) -> float:
    model = sim.store[env].compiled
    return float(sim.simulator.state(env, "qpos")[
        model.jnt_qposadr[model.joint(f"env_{env}/model/yaw").id]])


def _shown_yaw(viewer) -> float:
    handle = viewer.handle
    with viewer.lock():
        return float(handle.d.qpos[handle.m.jnt_qposadr[handle.m.joint(
            f"env_{viewer.env}/model/yaw").id]])


def test_the_viewer_shows_its_env_when_synced_and_after_each_step_with_auto_sync(display):
    with Simulation(model_path=WORKBENCH, num_envs=2, floor=True) as sim:
        viewer = sim.viewer(1)
        assert viewer.is_running() and viewer.models_loaded == 1
        assert sim.viewer(1) is viewer  # one per env: the same live handle
        sim.simulator.set_ctrl(1, "model/yaw", 0.8)
        sim.step(200)
        assert _yaw(sim, 1) > 0.3
        assert _shown_yaw(viewer) == 0.0  # not synced yet: the window shows the start
        viewer.sync()
        assert _shown_yaw(viewer) == _yaw(sim, 1)
        assert sim.viewer(1, auto_sync=True) is viewer and viewer.auto_sync
        sim.simulator.set_ctrl(1, "model/yaw", -0.5)
        sim.step(200)
        assert _shown_yaw(viewer) == _yaw(sim, 1) < 0.3  # synced by the step itself
        assert viewer.handle.m is not sim.store[1].compiled  # a private copy in the window
        sim.reload()  # a new load: the viewer follows it
        sim.step(10)
        assert viewer.models_loaded == 2 and viewer.is_running()
        np.testing.assert_array_equal(viewer.handle.d.qpos, sim.simulator.state(1, "qpos"))
        viewer.close()
        assert not viewer.is_running()
        with pytest.raises(RuntimeError, match=re.escape(
                "viewer of env 1: sync() after close(); ask for a new one (Simulation.viewer)")):
            viewer.sync()
        again = sim.viewer(1)
        assert again is not viewer and again.is_running()
    assert not again.is_running()  # closed with the simulation


def test_the_viewer_is_a_context_manager_and_syncs_the_state_alone(display):
    with Simulation(model_path=WORKBENCH, num_envs=1, floor=True) as sim:
        with sim.viewer(0) as viewer:
            sim.simulator.set_ctrl(0, "model/yaw", 0.8)
            sim.step(150)
            with viewer.lock():
                viewer.handle.d.qacc[:] = 7.0  # derived, not state: state_only leaves it
            viewer.sync(state_only=True)
            assert _shown_yaw(viewer) == _yaw(sim, 0) > 0.3
            with viewer.lock():
                np.testing.assert_array_equal(viewer.handle.d.ctrl, sim.store[0].data.ctrl)
                assert (viewer.handle.d.qacc == 7.0).all()
            viewer.sync()  # the whole MjData
            with viewer.lock():
                assert not (viewer.handle.d.qacc == 7.0).any()
            with pytest.raises(ValueError, match=re.escape(
                    "state_only: expected true or false, got 'yes'")):
                viewer.sync(state_only="yes")
        assert not viewer.is_running()  # the with closed it


def test_the_viewer_without_a_display_says_so_as_the_cli_does(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with Simulation(model_path=WORKBENCH) as sim:
        with pytest.raises(RuntimeError, match=re.escape(NO_DISPLAY_VIEW)):
            sim.viewer(0)
        sim.step(1)  # nothing was left behind
