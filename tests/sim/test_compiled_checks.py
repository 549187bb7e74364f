"""The simulator's compiled functions against references written here: the divergence check
(bad_rows: NaN, infinities, mjMAXVAL itself) and the clock check (clock_checks) on random
rows with every special value, and the controller's write (matrix @ twist into ctrl)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from arena_gym.sim.control import write
from arena_gym.sim.divergence import MAXVAL, bad_rows, clock_checks

SPECIAL = st.sampled_from([0.0, -0.0, 1.0, MAXVAL, -MAXVAL, np.nextafter(MAXVAL, 0),
                           np.nextafter(-MAXVAL, 0), 1e300, np.inf, -np.inf, np.nan])
VALUES = st.one_of(st.floats(-1e3, 1e3), SPECIAL)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, (6, 5), elements=VALUES), arrays(np.float64, (6, 3), elements=VALUES),
       st.integers(0, 5))
def test_bad_rows_are_those_with_a_value_nan_infinite_or_at_mjmaxval(first, second, width):
    third = np.zeros((6, width))
    third[::2] = 2 * MAXVAL  # every other row: bad in the third field only
    out = np.zeros(6, dtype=bool)
    count = bad_rows(first, second[:, 1:], third, out)  # a strided field too
    rows = np.concatenate([first, second[:, 1:], third], axis=1)
    want = ~(np.abs(rows) < MAXVAL).all(axis=1)
    np.testing.assert_array_equal(out, want)
    assert count == want.sum()


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, 8, elements=st.one_of(st.floats(0, 10), st.just(0.0))),
       arrays(np.float64, 8, elements=st.one_of(st.floats(0, 10), st.just(np.nan))),
       arrays(np.bool_, 8), st.integers(1, 50))
def test_clocks_behind_and_at_zero_are_found_in_the_checked_rows(before, after, checked, nstep):
    dt = np.full(8, 0.005)
    lag, fresh = np.ones(8, dtype=bool), np.ones(8, dtype=bool)
    counts = clock_checks(before, after, dt, nstep, checked, lag, fresh)
    want_lag = checked & (after < before + (nstep - 0.5) * dt)
    want_fresh = checked & (before < 0.5 * dt)
    np.testing.assert_array_equal(lag, want_lag)
    np.testing.assert_array_equal(fresh, want_fresh)
    assert counts == (want_lag.sum(), want_fresh.sum())


def test_the_write_is_each_wheels_speed_and_the_planar_actuators_twist():
    rng = np.random.default_rng(0)
    twists = rng.uniform(-1, 1, (6, 3))
    matrix = rng.normal(size=(4, 3))
    ctrl = np.full((9, 10), 7.0)
    wheels, bases = np.array([2, 5, 0, 9]), np.array([1, 4, 6])
    envs, rows = np.array([4, 0, 2]), np.array([8, 1, 3])  # three envs, anywhere in ctrl
    write(twists, matrix, wheels, bases, ctrl, envs, rows)
    want = np.full((9, 10), 7.0)
    want[np.ix_(rows, wheels)] = twists[envs] @ matrix.T
    want[np.ix_(rows, bases)] = twists[envs]
    np.testing.assert_allclose(ctrl, want, rtol=4 * np.finfo(float).eps, atol=1e-300)
    write(twists, matrix, wheels, np.zeros(0, dtype=np.int64), ctrl, envs, rows)  # no bases
    np.testing.assert_allclose(ctrl, want, rtol=4 * np.finfo(float).eps, atol=1e-300)
