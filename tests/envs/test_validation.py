"""check_actions: the compiled pass for float actions gives numpy's cast and clip bit for
bit, and rejects what numpy rejects with the same message."""

import re

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector.utils import batch_space
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from arena_gym.envs.validation import check_actions

SPACE = batch_space(spaces.Box(np.array([-0.5, -1.0], np.float32),
                               np.array([1.0, 1.0], np.float32)), 4)
VALUES = st.one_of(st.floats(-3, 3, width=32), st.sampled_from(
    [0.0, -0.0, -0.5, 1.0, np.inf, -np.inf, np.nan, 1e30]))


@settings(max_examples=300, deadline=None)
@given(arrays(st.sampled_from([np.float32, np.float64]), (4, 2), elements=VALUES))
def test_float_actions_are_numpys_clip_or_numpys_error(actions) -> None:
    reference = actions.astype(np.float64)
    if np.isfinite(reference).all():
        got = check_actions(actions, SPACE, 4)
        want = np.minimum(np.maximum(reference, SPACE.low), SPACE.high)
        assert got.dtype == np.float64 and got is not actions
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0.0 stays
    else:
        bad = np.argwhere(~np.isfinite(reference))[0].tolist()
        with pytest.raises(ValueError, match=re.escape(
                f"actions: expected finite numbers, got {reference[tuple(bad)]} at {bad}")):
            check_actions(actions, SPACE, 4)


def test_integer_and_non_contiguous_actions_are_clipped_as_floats() -> None:
    ints = np.array([[3, -2], [0, 1], [-1, 0], [1, 5]])
    np.testing.assert_array_equal(check_actions(ints, SPACE, 4),
                                  [[1.0, -1.0], [0.0, 1.0], [-0.5, 0.0], [1.0, 1.0]])
    strided = np.arange(16, dtype=np.float64).reshape(4, 4)[:, ::2] / 10 - 0.7
    np.testing.assert_array_equal(check_actions(strided, SPACE, 4),
                                  np.clip(strided, SPACE.low, SPACE.high))
