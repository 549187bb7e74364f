"""classify: the documented order (divergence, goal, collision, time limit) over every
combination of flags, on numpy arrays (the MJX backend runs the same function traced)."""

import numpy as np

from arena_gym.tasks.termination import classify


def test_flags_follow_the_documented_order_for_every_combination() -> None:
    # every combination of (reached, collided, diverged, timed out, active) over 32 envs
    bits = (np.arange(32)[:, None] >> np.arange(5)) & 1 == 1
    distance = np.where(bits[:, 0], 0.1, 2.0)
    collided, diverged, active = bits[:, 1], bits[:, 2], bits[:, 4]
    steps = np.where(bits[:, 3], 300, 12)
    diverged.flags.writeable = False  # the env passes a read-only "none diverged" array
    for max_steps in (300, np.full(32, 300, np.int64)):
        got = classify(distance, 0.3, collided, diverged, steps, max_steps, active)
        assert not (got.ended & ~active).any()  # inactive envs end nothing
        # divergence first, then the goal (reached while touching counts), then collision
        assert (got.diverged == (diverged & active)).all()
        assert (got.reached == (distance < 0.3) & active & ~diverged).all()
        assert (got.collided == collided & active & ~diverged & ~(distance < 0.3)).all()
        assert (got.timed_out == (steps >= 300) & active & ~diverged & ~(distance < 0.3)
                & ~collided).all()
        # of 16 active: 8 diverged, 4 of the rest reached, 2 of those left collided, 1 timed out
        assert (got.ended.sum(), got.timed_out.sum()) == (15, 1)
        np.testing.assert_array_equal(got.terminated, got.reached | got.collided)
        np.testing.assert_array_equal(got.truncated, got.timed_out | got.diverged)
