"""Each reward term and the end-of-episode classification on hand-made outcomes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.config import RewardConfig
from arena_gym.tasks import rewards
from arena_gym.tasks.rewards import StepOutcome, reward_terms, total
from arena_gym.tasks.termination import classify

CFG = RewardConfig()  # goal 15, collision -25, progress 0.3 / 0.4, safe -0.005 under 0.25 m


def outcome(**changes) -> StepOutcome:
    """Three envs: gained 0.1 m, lost 0.05 m, stood still; nothing else happened."""
    base = {
        "distance_before": np.array([2.0, 2.0, 2.0]),
        "distance_after": np.array([1.9, 2.05, 2.0]),
        "reached": np.zeros(3, bool),
        "collided": np.zeros(3, bool),
        "min_clearance": np.array([1.0, 1.0, 1.0]),
        "forward_speed": np.array([0.2, 0.2, 0.0]),
        "action_change": np.array([0.0, 0.0, 0.0]),
    }
    base.update(changes)
    return StepOutcome(**base)


def test_goal_term_pays_the_goal_reward_only_where_reached():
    out = outcome(reached=np.array([False, True, False]))
    np.testing.assert_array_equal(rewards.goal(CFG, out), [0.0, 15.0, 0.0])


def test_collision_term_pays_the_collision_penalty_only_where_collided():
    out = outcome(collided=np.array([True, False, False]))
    np.testing.assert_array_equal(rewards.collision(CFG, out), [-25.0, 0.0, 0.0])


def test_progress_term_weighs_gain_and_loss_differently_and_stops_at_the_end():
    np.testing.assert_allclose(rewards.progress(CFG, outcome()), [0.3 * 0.1, -0.4 * 0.05, 0.0],
                               rtol=1e-12)
    ended = outcome(reached=np.array([True, False, False]), collided=np.array([False, True, False]))
    np.testing.assert_array_equal(rewards.progress(CFG, ended), [0.0, 0.0, 0.0])


def test_safe_distance_term_below_the_margin_only():
    out = outcome(min_clearance=np.array([0.1, 0.25, 0.3]))
    np.testing.assert_array_equal(rewards.safe_distance(CFG, out), [-0.005, 0.0, 0.0])


def test_reverse_term_for_backward_commands_only():
    out = outcome(forward_speed=np.array([-0.1, 0.0, 0.1]))
    np.testing.assert_array_equal(rewards.reverse(CFG, out), [-0.002, 0.0, 0.0])


def test_abrupt_velocity_term_scales_with_the_action_change():
    out = outcome(action_change=np.array([0.0, 1.0, 2.5]))
    np.testing.assert_allclose(rewards.abrupt_velocity(CFG, out), [0.0, -0.001, -0.0025],
                               rtol=1e-12)


def test_time_term_is_the_configured_constant():
    np.testing.assert_array_equal(rewards.time(RewardConfig(time=-0.01), outcome()), [-0.01] * 3)


def test_reward_is_the_sum_of_the_named_terms():
    out = outcome(reached=np.array([True, False, False]), min_clearance=np.array([0.1, 1.0, 1.0]))
    terms = reward_terms(CFG, out)
    assert list(terms) == ["goal", "collision", "progress", "safe_distance", "reverse",
                           "abrupt_velocity", "time"]
    np.testing.assert_allclose(total(terms), [15.0 - 0.005, -0.4 * 0.05, 0.0], rtol=1e-12)


def test_classification_order_divergence_goal_collision_timeout():
    distance = np.array([0.2, 0.2, 1.0, 1.0, 1.0, 1.0])
    collided = np.array([True, True, True, False, False, True])
    diverged = np.array([True, False, False, False, False, False])
    steps = np.array([300, 300, 300, 300, 10, 300])
    active = np.array([True, True, True, True, True, False])
    end = classify(distance, 0.5, collided, diverged, steps, 300, active)
    names = []
    for e in range(6):
        try:
            names.append(end.result(e))
        except ValueError:
            names.append("running")
    assert names == ["diverged", "goal", "collision", "timeout", "running", "running"]
    np.testing.assert_array_equal(end.terminated, [False, True, True, False, False, False])
    np.testing.assert_array_equal(end.truncated, [True, False, False, True, False, False])
    with pytest.raises(ValueError, match=re.escape(
            "env 4: expected an env whose episode ended, got a running one")):
        end.result(4)


def test_classification_when_every_env_steps_and_none_diverged():
    # the common step (no restart, no blow-up): the same order holds
    distance = np.array([0.2, 1.0, 1.0, 1.0, 0.2])
    collided = np.array([True, True, False, False, False])
    steps = np.array([300, 300, 300, 10, 10])
    end = classify(distance, 0.5, collided, np.zeros(5, bool), steps, 300, np.ones(5, bool))
    names = [end.result(e) if end.ended[e] else "running" for e in range(5)]
    assert names == ["goal", "collision", "timeout", "running", "goal"]
    np.testing.assert_array_equal(end.terminated, [True, True, False, False, True])
    np.testing.assert_array_equal(end.truncated, [False, False, True, False, False])
    np.testing.assert_array_equal(end.diverged, np.zeros(5, bool))


def test_a_term_registered_later_counts_from_the_next_step_until_unregistered():
    from arena_gym.registry import REWARD_TERMS

    out = outcome()
    assert "heading_bonus" not in reward_terms(CFG, out)  # the terms that apply are kept
    REWARD_TERMS.register("heading_bonus", rewards.RewardTerm(
        lambda cfg, o: np.full(len(o.distance_after), 0.5), weight=0.5))
    try:
        terms = reward_terms(CFG, out)
        np.testing.assert_array_equal(terms["heading_bonus"], [0.5, 0.5, 0.5])
    finally:
        REWARD_TERMS.unregister("heading_bonus")
    assert "heading_bonus" not in reward_terms(CFG, out)
