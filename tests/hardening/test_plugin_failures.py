"""A plugin's reward term or sensor that fails is named in the error, with the plugin it came
from: a term's NaN or inf never reaches the reward, a raise or a wrong shape says which term
or sensor and what was expected."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import gymnasium as gym
import numpy as np
import pytest

from arena_gym.registry import REWARD_TERMS, SENSOR_KINDS
from arena_gym.sensors import SensorError
from arena_gym.sensors.kinds import SensorKind
from arena_gym.sensors.odometry import OdometryUnit
from arena_gym.sensors.readings import OdometryReading
from arena_gym.sensors.specs import OdometrySpec
from arena_gym.tasks.rewards import RewardTerm

ACTIONS = np.tile([0.2, 0.0], (2, 1))


def make_env(**kwargs):
    env = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point",
                       **kwargs)
    env.reset(seed=0)
    return env


@pytest.fixture
def term():
    """Registers a reward term as the plugin `arena_broken` would; unregisters it after."""
    names = []

    def register(name, fn):
        REWARD_TERMS.register(name, RewardTerm(fn, weight=1.0), source="arena_broken")
        names.append(name)

    yield register
    for name in names:
        REWARD_TERMS.unregister(name)


def half_nan(cfg, out):
    value = np.zeros(len(out.distance_after))
    value[1] = np.nan
    return value


@pytest.mark.parametrize(("fn", "error", "message"), [
    (half_nan, ValueError,
     "reward term 'shaky' (from arena_broken): expected finite values, got nan in env 1"),
    (lambda cfg, out: out.distance_after * 0.0 - np.inf, ValueError,
     "reward term 'shaky' (from arena_broken): expected finite values, got -inf in env 0"),
    (lambda cfg, out: {"speed": out.speed}["thermometer"], RuntimeError,
     "reward term 'shaky' (from arena_broken) raised KeyError: 'thermometer'"),
    (lambda cfg, out: np.zeros((len(out.distance_after), 3)), ValueError,
     "reward term 'shaky' (from arena_broken): expected values of shape (2,), got shape (2, 3)"),
], ids=["nan", "inf", "raises", "wrong-shape"])
def test_a_failing_plugin_term_is_refused_naming_term_plugin_and_what_came(term, fn, error,
                                                                           message):
    term("shaky", fn)
    env = make_env()
    with pytest.raises(error, match=re.escape(message)):
        env.step(ACTIONS)
    env.close()


def test_a_plugin_term_of_one_value_applies_to_every_env(term):
    term("flat", lambda cfg, out: 0.25)
    env = make_env()
    _, reward, _, _, info = env.step(ACTIONS)
    np.testing.assert_array_equal(info["reward_terms"]["flat"], [0.25, 0.25])
    env.close()


@dataclass(frozen=True)
class BrokenSpec(OdometrySpec):
    kind: ClassVar[str] = "broken"


class RaisingUnit(OdometryUnit):
    kind = "broken"

    def _compute(self, frames, envs):
        raise KeyError("qvel")


class WideUnit(OdometryUnit):
    kind = "broken"

    def _compute(self, frames, envs):
        self.out["position"][envs] = np.zeros((len(envs), 5))


def register_broken(unit_class):
    SENSOR_KINDS.register("broken", SensorKind(
        BrokenSpec, lambda spec, n, suite: unit_class(spec, n),
        lambda spec, unit, n, period: OdometryReading(spec.reading_key, spec.robot, "", n,
                                                      period)), source="arena_broken")


@pytest.fixture
def broken_kind():
    yield register_broken
    SENSOR_KINDS.unregister("broken")


def test_a_plugin_sensor_that_raises_is_named_with_its_plugin(broken_kind):
    broken_kind(RaisingUnit)
    with pytest.raises(SensorError, match=re.escape(
            "sensor kind 'broken' (from arena_broken) raised KeyError computing envs [0, 1]: "
            "'qvel'")):
        make_env(sensors=[{"kind": "broken"}])


def test_a_plugin_sensor_of_the_wrong_shape_is_named_with_its_plugin(broken_kind):
    broken_kind(WideUnit)
    with pytest.raises(SensorError, match=re.escape(  # then numpy's words for the shapes
            "sensor kind 'broken' (from arena_broken) raised ValueError computing envs [0, 1]: "
            ) + r".*\(2,5\).*\(2,3\)"):
        make_env(sensors=[{"kind": "broken"}])


def test_a_plugin_observation_of_the_wrong_shape_names_the_key_and_both_shapes(broken_kind):
    def short(reading):
        space = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
        return space, lambda envs: np.zeros((len(envs), 3), np.float32)

    SENSOR_KINDS.register("broken", SensorKind(
        BrokenSpec, lambda spec, n, suite: OdometryUnit(spec, n),
        lambda spec, unit, n, period: OdometryReading(spec.reading_key, spec.robot, "", n,
                                                      period),
        observation=short), source="arena_broken")
    env = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point",
                       sensors=[{"kind": "broken", "key": "odd"}])
    with pytest.raises(SensorError, match=re.escape(
            "sensor 'odd' (kind 'broken', from arena_broken): expected an observation of "
            "shape (2, 4), got (2, 3)")):
        env.reset(seed=0)
    env.close()
