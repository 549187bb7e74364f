"""The compiled people step (tasks/step.py `people_step`) against the numpy definitions it
compiles: the pedestrian terms (rewards.py, as numpy runs them), the reward as `total` sums
the terms, and the social metrics (EpisodeMetrics.update_pedestrians)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.config import RewardConfig
from arena_gym.tasks.metrics import EpisodeMetrics
from arena_gym.tasks.rewards import PEDESTRIAN, StepOutcome, total, weights
from arena_gym.tasks.step import people_step

PEDESTRIAN_KIND = 4


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), people=st.integers(1, 8))
def test_people_step_equals_the_numpy_definitions(seed, n, people):
    rng = np.random.default_rng(seed)
    cfg = RewardConfig(pedestrian_collision=-10.0, pedestrian_safety=-0.5,
                       pedestrian_speed=-0.3, pedestrian_safety_m=1.2)
    crowd_pos = rng.uniform(-3, 3, (n, people, 2))
    crowd_active = rng.random((n, people)) < 0.7
    pose = np.column_stack([rng.uniform(-3, 3, (n, 2)), np.zeros(n), rng.uniform(-3, 3, n)])
    before = pose + np.column_stack([rng.normal(0, 0.02, (n, 2)), np.zeros((n, 2))])
    collided = rng.random(n) < 0.4
    kind = rng.choice([1, 2, PEDESTRIAN_KIND], n).astype(np.int8)
    counted = rng.random(n) < 0.8
    dt = 0.1
    # the reference: numpy, as the general path computes it
    ref = EpisodeMetrics(n, 300, pedestrians=True, personal_space=1.0)
    mine = EpisodeMetrics(n, 300, pedestrians=True, personal_space=1.0)
    for m in (ref, mine):
        m.reset(np.ones(n, bool), pose)
    distance = np.where(crowd_active, np.hypot(*(crowd_pos - pose[:, None, :2]).transpose(
        2, 0, 1)), np.inf).min(axis=1)
    hit = collided & (kind == PEDESTRIAN_KIND)
    speed = np.hypot(*(pose[:, :2] - before[:, :2]).T) * counted / dt
    outcome = StepOutcome(*(np.zeros(n),) * 7, pedestrian_distance=distance,
                          hit_pedestrian=hit, speed=speed)
    builtin = rng.normal(size=n) * counted
    expected = {"builtin": builtin}
    for name, fn in PEDESTRIAN:
        expected[name] = np.where(counted, fn(cfg, outcome), 0.0)
    ref.update_pedestrians(distance, speed, hit, counted)
    # compiled
    values = np.zeros((len(PEDESTRIAN), n))
    reward = builtin.copy()
    people_step(tuple(weights(cfg)), crowd_pos, crowd_active, pose, before, collided, kind,
                PEDESTRIAN_KIND, counted, dt, mine.personal_space, mine.in_space,
                mine.speed_in_space, mine.min_distance, mine.pedestrian_collisions,
                np.zeros(len(PEDESTRIAN)), values, reward)
    for k, (name, _) in enumerate(PEDESTRIAN):
        np.testing.assert_allclose(values[k], expected[name], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(reward, total(expected))
    np.testing.assert_array_equal(mine.in_space, ref.in_space)
    np.testing.assert_allclose(mine.speed_in_space, ref.speed_in_space, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(mine.min_distance, ref.min_distance)
    np.testing.assert_array_equal(mine.pedestrian_collisions, ref.pedestrian_collisions)
