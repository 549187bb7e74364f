"""The simulator's face (arena_gym.Simulation), tested as mujoco_ros tests its MujocoEnv:
option patches are all or nothing, settings validate, frames are borrowed read-only or
copied, and what belongs to one load goes stale with it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import arena_gym
from arena_gym.config import BASE_TIMESTEPS
from arena_gym.plugins import Plugin, PluginError
from arena_gym.registry import PLUGINS
from arena_gym.scene.requests import Prim
from arena_gym.sensors import CameraSpec
from tests.sensors.worlds import camera_block, probe_urdf


@pytest.fixture
def sim():
    with arena_gym.Simulation(num_envs=2, seed=0) as sim:
        yield sim


def test_a_rejected_patch_changes_nothing(sim):
    before = sim.runtime_options
    with pytest.raises(ValueError, match=re.escape("gravity: expected 3 finite numbers, got "
                                                   "[0, 0]")):
        sim.apply_runtime_options({"timestep": 0.002, "gravity": [0, 0]})
    assert sim.runtime_options == before and before.epoch == 0
    planar = BASE_TIMESTEPS["planar"]  # the default robot's base
    assert [s.model.opt.timestep for s in sim.store.scenes] == [planar, planar]


def test_an_accepted_patch_reaches_every_env_and_advances_the_epoch(sim):
    options = sim.apply_runtime_options({"gravity": [0, 0, -5.0]})
    assert options.epoch == 1 and options.gravity == (0.0, 0.0, -5.0)
    assert [s.model.opt.gravity[2] for s in sim.store.scenes] == [-5.0, -5.0]
    assert sim.settings.gravity == (0.0, 0.0, -5.0)
    sim.settings.gravity = (0.0, 0.0, -9.81)  # a setter goes through the same patch
    assert sim.runtime_options.epoch == 2


def test_settings_validate_writes_and_read_as_copies(sim):
    with pytest.raises(ValueError, match=re.escape(
            "rt_factor: expected a finite number >= 0 (0: as fast as possible), got -1")):
        sim.settings.rt_factor = -1
    assert sim.settings.rt_factor == 1.0
    sim.settings.rt_factor = 0.0
    assert sim.runner.rt_factor == 0.0
    with pytest.raises(ValueError, match=re.escape("busywait: expected true or false, got 1")):
        sim.settings.busywait = 1
    assert not sim.settings.running


def test_step_advances_the_clock_by_n_dt_and_info_counts_loads(sim):
    sim.step(40)
    info = sim.sim_info
    assert (info.load_count, info.step_count) == (1, 40)
    assert info.clock == pytest.approx(40 * BASE_TIMESTEPS["planar"])  # the default base
    with pytest.raises(ValueError, match=re.escape("step: expected an integer >= 1, got 0")):
        sim.step(0)
    sim.reload()
    assert (sim.sim_info.load_count, sim.sim_info.clock, sim.runtime_options.epoch) == (2, 0.0, 0)


def test_plugin_handles_of_an_old_load_raise():
    PLUGINS.register("noop", Plugin)
    try:
        with arena_gym.Simulation(num_envs=1, plugins=[{"type": "noop"}]) as sim:
            (handle,) = sim.plugins
            assert isinstance(handle.plugin, Plugin) and handle.load_s > 0
            sim.reload()
            with pytest.raises(PluginError, match=re.escape(
                    "plugin 'noop': this handle belongs to an inactive generation (0; the "
                    "env is at 1): its env was closed or rebuilt")):
                _ = handle.plugin
            assert sim.plugins[0].active and sim.plugins[0] is not handle
    finally:
        PLUGINS.unregister("noop")


def test_borrowed_frames_are_read_only_and_copies_survive_later_renders(sim):
    sim.store[0].spawn_urdf("probe", probe_urdf(camera_block(width=32, height=24)),
                         pose=(0.0, 0.0, 0.0))
    sim.cameras.add(CameraSpec("probe", key="cam"))
    sim.step(10)
    borrowed = sim.cameras.borrow_latest_rgb("cam")
    kept = sim.cameras.copy_rgb("cam")
    assert borrowed.shape == (24, 32, 3)
    with pytest.raises(ValueError, match="read-only"):
        borrowed[0, 0, 0] = 1
    np.testing.assert_array_equal(kept, borrowed)
    # a red wall right in front of the camera: the next render differs everywhere
    sim.store[0].spawn_prims([Prim("red", pose=(0.6, 0.0, 1.0, 0.0), scale=(0.1, 4.0, 2.0),
                                   rgba=(1.0, 0.0, 0.0, 1.0))])
    sim.step(10)
    latest = sim.cameras.copy_rgb("cam")
    assert latest[..., 0].mean() > 3 * latest[..., 1].mean()  # red fills the view
    np.testing.assert_array_equal(borrowed, latest)  # borrowed: always the latest frame
    assert not np.array_equal(kept, latest)  # the copy is still the first frame
