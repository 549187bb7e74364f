"""The façade as mujoco_ros's MujocoEnv (issue 34 item 4): a frozen settings snapshot,
toggle_paused, reset to the initial state of every env, and the names and stats of its
runtime plugins, timed where their callbacks are called."""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path

import numpy as np
import pytest

from arena_gym import Simulation
from arena_gym.plugins import Plugin
from arena_gym.registry import PLUGINS
from arena_gym.scene.requests import Prim
from tests.waiting import wait_until

MJCF = Path(__file__).resolve().parents[1] / "scene" / "mjcf"


@pytest.fixture
def arm():
    with Simulation(model_path=MJCF / "arm.xml", num_envs=2) as sim:
        yield sim


def _state(sim: Simulation, env: int) -> bytes:
    data = sim.store[env].data
    return data.qpos.tobytes() + data.qvel.tobytes() + data.ctrl.tobytes()


def test_the_settings_snapshot_is_a_frozen_copy(arm):
    before = arm.settings.snapshot()
    assert (before.rt_factor, before.busywait, before.running, before.paused,
            before.load_count, before.options_epoch) == (1.0, False, False, True, 1, 0)
    arm.settings.rt_factor = 0.0
    arm.apply_runtime_options({"timestep": 0.002})
    assert before.rt_factor == 1.0  # a copy: later writes leave it alone
    after = arm.settings.snapshot()
    assert (after.rt_factor, after.options_epoch) == (0.0, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        after.rt_factor = 2.0  # type: ignore[misc]


def test_toggle_paused_runs_the_loop_and_pauses_it_between_ticks(arm):
    arm.settings.rt_factor = 0.0  # as fast as possible
    assert arm.toggle_paused() is False  # started and running
    assert arm.settings.snapshot().running
    wait_until(lambda: arm.sim_info.step_count >= 50, 60, "the loop to tick")
    assert arm.toggle_paused() is True
    runner = arm.runner
    # a call runs between two ticks: two in a row see the same count once paused
    first = runner.call_soon(lambda: arm.simulator.step_count).result(timeout=60)
    assert runner.call_soon(lambda: arm.simulator.step_count).result(timeout=60) == first
    assert not arm.settings.snapshot().running and arm.settings.snapshot().paused


def test_reset_puts_every_env_back_to_its_initial_state_bit_for_bit(arm):
    initial = [_state(arm, env) for env in range(2)]
    seen = []
    arm.simulator.hooks.reset.append(lambda s, envs, fill: seen.append((list(envs), fill)))
    for env in range(2):
        arm.simulator.set_ctrl(env, "model/elbow", 0.8 + 0.1 * env)
    arm.step(100)
    assert [_state(arm, env) for env in range(2)] != initial
    arm.reset()
    assert [_state(arm, env) for env in range(2)] == initial
    assert seen == [([0, 1], True)]  # mujoco_ros2_control's flag: the initial state
    # the sensors read the reset state (their reset hook), not the last tick's
    elbow = arm.sensor_suite["model/mujoco"]["elbow_pos"][:, 0]
    assert elbow == pytest.approx([0.0, 0.0], abs=1e-12)


def test_reset_after_a_spawn_says_to_capture_again_and_resets_nothing(arm):
    arm.step(20)
    arm.store[1].spawn_prims([Prim("late", pose=(1.0, 1.0, 0.2, 0.0))])
    arm.step(20)
    now = [_state(arm, env) for env in range(2)]
    with pytest.raises(ValueError, match=re.escape(
            "initial state of env 1: expected the model it was captured with (compile 2), "
            "got compile 3 (something was spawned or deleted since); capture it again")):
        arm.reset()
    assert [_state(arm, env) for env in range(2)] == now
    arm.runner.capture_initial_state()
    arm.step(20)
    arm.reset()
    assert [_state(arm, env) for env in range(2)] == now


class Counting(Plugin):
    """Counts its callbacks and the wall time it spends in them, itself."""

    def __init__(self, **params):
        super().__init__(**params)
        self.calls = {"load": 0, "reset": 0, "step": 0}
        self.spent = {"load": 0.0, "reset": 0.0, "step": 0.0}

    def _work(self, hook: str) -> None:
        t0 = time.perf_counter()
        np.linalg.svd(np.ones((40, 40)))  # something to time
        self.calls[hook] += 1
        self.spent[hook] += time.perf_counter() - t0

    def load(self, env):
        self._work("load")

    def reset(self, env, env_ids):
        self._work("reset")

    def step(self, env):
        self._work("step")


def test_plugin_names_and_stats_count_and_time_each_callback_where_it_is_called():
    PLUGINS.register("counting", Counting)
    try:
        with Simulation(num_envs=2, plugins=[{"type": "counting"}]) as sim:
            assert sim.plugin_names == ("counting",)
            sim.step(3 * sim.simulator.tick_steps)  # three ticks: three steps
            sim.reset()
            (stats,) = sim.plugin_stats
            plugin = sim.plugins[0].plugin
            # load once; reset once as built and once by reset(); a step per tick
            assert plugin.calls == {"load": 1, "reset": 2, "step": 3}
            assert (stats.name, stats.load.calls, stats.reset.calls, stats.step.calls,
                    stats.calls) == ("counting", 1, 2, 3, 6)
            for hook in ("load", "reset", "step"):  # the timer wraps the callback
                assert getattr(stats, hook).total_s >= plugin.spent[hook] > 0
            assert stats.step.mean_s == pytest.approx(stats.step.total_s / 3)
            assert stats.total_s == pytest.approx(
                stats.load.total_s + stats.reset.total_s + stats.step.total_s)
            assert stats.mean_s == pytest.approx(stats.total_s / 6)
            sim.reload()
            assert sim.plugin_stats[0].calls == 2  # a new load: load + its first reset
    finally:
        PLUGINS.unregister("counting")
