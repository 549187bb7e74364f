"""The observation's nearest people (tasks/observation.py `nearest_pedestrians`, compiled)
against a numpy reference written here: each env's k nearest present pedestrians in the
robot frame, nearest first (of equal distances, the lower index), zero rows after them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_gym.tasks.observation import nearest_pedestrians


def reference(pos, vel, present, pose, k):
    out = np.zeros((len(pose), k, 5))
    for e in range(len(pose)):
        delta = pos[e] - pose[e, :2]
        squared = (delta ** 2).sum(axis=1)
        ids = [p for p in np.lexsort((np.arange(len(squared)), squared)) if present[e, p]][:k]
        c, s = np.cos(pose[e, 3]), np.sin(pose[e, 3])
        for row, p in enumerate(ids):
            (dx, dy), (vx, vy) = delta[p], vel[e, p]
            out[e, row] = (c * dx + s * dy, -s * dx + c * dy, c * vx + s * vy,
                           -s * vx + c * vy, 1.0)
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), envs=st.integers(1, 4), people=st.integers(0, 9),
       k=st.integers(1, 6), grid=st.booleans())
def test_the_k_nearest_in_the_robot_frame_nearest_first(seed, envs, people, k, grid):
    rng = np.random.default_rng(seed)
    # on a grid of whole metres with the robot on a node, distances tie often
    pos = (rng.integers(-3, 4, (envs, people, 2)).astype(float) if grid
           else rng.uniform(-4, 4, (envs, people, 2)))
    vel = rng.uniform(-1, 1, (envs, people, 2))
    present = rng.random((envs, people)) < 0.7
    pose = np.column_stack([rng.integers(-1, 2, (envs, 2)) if grid else
                            rng.uniform(-2, 2, (envs, 2)), np.zeros(envs),
                            rng.uniform(-np.pi, np.pi, envs)])
    out = np.full((envs, k, 5), np.nan, np.float32)
    nearest_pedestrians(pos, vel, present, pose, out)
    expected = reference(pos, vel, present, pose, k)
    np.testing.assert_array_equal(out[..., 4], expected[..., 4])  # who is there, and where
    np.testing.assert_allclose(out, expected.astype(np.float32), rtol=4e-7, atol=1e-6)


def test_the_nearer_of_two_comes_first_and_ties_go_to_the_lower_index():
    pos = np.array([[[3.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [2.0, 2.0]]])
    vel = np.array([[[0.0, 0.0], [1.0, 0.0], [0.0, 0.5], [0.0, 0.0]]])
    present = np.array([[True, True, True, False]])
    pose = np.array([[0.0, 0.0, 0.0, np.pi / 2]])  # facing +y: x forward is world +y
    out = np.zeros((1, 4, 5), np.float32)
    nearest_pedestrians(pos, vel, present, pose, out)
    np.testing.assert_allclose(out[0], [[1.0, 0.0, 0.0, -1.0, 1.0],  # (0, 1): ahead
                                        [0.0, 1.0, 0.5, 0.0, 1.0],  # (-1, 0): left
                                        [0.0, -3.0, 0.0, 0.0, 1.0],  # (3, 0): right
                                        [0.0] * 5], atol=1e-6)  # absent: a zero row
