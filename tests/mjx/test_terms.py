"""The task definitions the MJX backend shares with the CPU env, written once for numpy and
JAX arrays: the same inputs give the same values both ways (JAX in float32)."""

from __future__ import annotations

import numpy as np

from arena_gym.config import RewardConfig
from arena_gym.geometry.footprints import distance_to_boxes
from arena_gym.geometry.rotations import quat_mats, quat_yaw
from arena_gym.tasks.observation import goal_polar
from arena_gym.tasks.rewards import StepOutcome, reward_terms, total
from arena_gym.tasks.termination import classify


def _both(fn, *arrays):
    import jax.numpy as jnp

    ours = fn(*arrays)
    theirs = fn(*(jnp.asarray(a) for a in arrays))
    return ours, theirs


def test_reward_terms_and_termination_agree_for_numpy_and_jax():
    rng = np.random.default_rng(0)
    n = 64
    before, after = rng.uniform(0, 5, n), rng.uniform(0, 5, n)
    collided, clearance = rng.random(n) < 0.2, rng.uniform(-0.1, 1.0, n)
    speed, change = rng.uniform(-0.22, 0.22, n), rng.uniform(0, 2, n)
    steps = rng.integers(0, 400, n)
    active = rng.random(n) < 0.9

    def run(before, after, collided, clearance, speed, change, steps, active):
        end = classify(after, 0.5, collided, collided & ~collided, steps, 300, active)
        out = StepOutcome(before, after, end.reached, end.collided, clearance, speed, change)
        terms = reward_terms(RewardConfig(time=-0.01), out)
        return terms, total(terms), end

    (t_np, r_np, e_np), (t_jx, r_jx, e_jx) = _both(
        run, before, after, collided, clearance, speed, change, steps, active)
    assert set(t_np) == set(t_jx)
    for name in t_np:
        np.testing.assert_allclose(np.asarray(t_jx[name]), t_np[name], atol=1e-6, err_msg=name)
    np.testing.assert_allclose(np.asarray(r_jx), r_np, atol=1e-5)
    for flag in ("reached", "collided", "timed_out", "diverged"):
        assert np.array_equal(np.asarray(getattr(e_jx, flag)), getattr(e_np, flag)), flag
    assert e_np.reached.any() and e_np.collided.any() and e_np.timed_out.any()


def test_goal_polar_box_distances_and_rotations_agree_for_numpy_and_jax():
    rng = np.random.default_rng(1)
    goal, pose = rng.uniform(-3, 3, (32, 2)), rng.uniform(-3, 3, (32, 4))
    ours, theirs = _both(goal_polar, goal, pose)
    np.testing.assert_allclose(np.asarray(theirs), ours, atol=1e-5)
    points = rng.uniform(-3, 3, (50, 2))
    boxes = np.column_stack([rng.uniform(-3, 3, (6, 2)), rng.uniform(0, np.pi, 6),
                             rng.uniform(0.2, 0.6, (6, 2))])
    mask = np.array([True, False, True, True, False, True])
    ours, theirs = _both(distance_to_boxes, points, boxes, mask)
    np.testing.assert_allclose(np.asarray(theirs), ours, atol=1e-5)
    assert np.array_equal(ours, distance_to_boxes(points, boxes[mask]))  # the mask drops boxes
    quats = rng.normal(size=(20, 4))
    quats[3] = 0.0  # a zero quaternion reads as the identity
    for fn in (quat_mats, quat_yaw):
        ours, theirs = _both(fn, quats)
        np.testing.assert_allclose(np.asarray(theirs), ours, atol=1e-5)
