"""The example plugin (examples/plugin) adds a sensor kind, a reward term and a runtime
plugin to ArenaMujoco-v0 through its entry points, without touching the package."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

from arena_gym.plugins import PluginError
from arena_gym.registry import REWARD_TERMS, SENSOR_KINDS, PluginWarning
from tests.plugins.installed import EXAMPLE, example_entry_points, installed


def test_example_plugin_adds_a_sensor_a_reward_term_and_a_runtime_plugin(tmp_path):
    with installed(tmp_path, {"arena_heading": example_entry_points()},
                   copy=(EXAMPLE / "arena_heading",)) as failures:
        assert failures == {}
        assert SENSOR_KINDS.source("heading") == "arena_heading:register"
        env = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point",
                           sensors=[{"kind": "heading"}], reward={"heading_bonus": 0.5},
                           plugins=[{"type": "step_counter", "params": {"start": 3}}])
        obs, _ = env.reset(seed=1)
        core = env.unwrapped.core
        yaw = core.task.pose[:, 3]
        np.testing.assert_allclose(obs["heading"], np.column_stack([np.cos(yaw), np.sin(yaw)]),
                                   atol=1e-6)
        assert env.single_observation_space["heading"].shape == (2,)
        for _ in range(5):
            obs, _, _, _, info = env.step(np.tile([0.2, 0.5], (2, 1)))
        yaw = core.task.pose[:, 3]
        np.testing.assert_allclose(obs["heading"][:, 1], np.sin(yaw), atol=1e-6)
        np.testing.assert_allclose(info["reward_terms"]["heading_bonus"], 0.5 * np.cos(yaw),
                                   atol=1e-6)
        (handle,) = core.plugins
        assert (handle.name, handle.type) == ("step_counter", "arena_heading.StepCounter")
        assert handle.plugin.count == 3 + 5 and handle.plugin.resets == 2
        assert handle.steps == 5 and handle.step_s > 0 and handle.load_s > 0
        env.close()
        with pytest.raises(PluginError, match=re.escape(
                "plugin 'step_counter': this handle belongs to an inactive generation (0; the "
                "env is at 1): its env was closed or rebuilt")):
            _ = handle.plugin
    assert "heading" not in SENSOR_KINDS and "heading_bonus" not in REWARD_TERMS


def test_a_plugin_that_fails_to_load_is_named_with_its_entry_point(tmp_path):
    message = ("plugin 'broken' (entry point 'arena_missing:Plugin'): ModuleNotFoundError: "
               "No module named 'arena_missing'")
    with pytest.warns(PluginWarning, match=re.escape(message)):
        with installed(tmp_path, {"arena_broken": {"broken": "arena_missing:Plugin"}}) as failures:
            assert failures == {"broken": message}
            with pytest.raises(PluginError, match=re.escape(message)):
                gym.make_vec("ArenaMujoco-v0", num_envs=1,
                             vectorization_mode="vector_entry_point",
                             plugins=[{"type": "broken"}])
