"""The observation's scan from a lidar reading: the compiled pass against numpy's formula
(clip the REP 117 infinities into [0, max_range], float32 of ranges / max_range, the nearest
range per env)."""

import numpy as np
import pytest

from arena_gym.tasks.observation import scan


def _numpy(reading: np.ndarray, max_range: float, normalize: bool):
    ranges = np.clip(reading.astype(np.float64), 0.0, max_range)
    out = (ranges / max_range if normalize else ranges).astype(np.float32)
    return ranges, out, ranges.min(axis=1)


@pytest.mark.parametrize("normalize", [True, False])
def test_scan_equals_numpys_clip_divide_and_min(normalize: bool) -> None:
    rng = np.random.default_rng(3)
    reading = rng.uniform(0.1, 3.5, (5, 360)).astype(np.float32)
    reading[0, :7] = np.inf  # no return within range
    reading[1, 10:12] = -np.inf  # closer than the lidar's min range
    reading[2, :] = np.inf  # nothing seen at all
    reading[3, 5] = np.float32(3.5)  # exactly max range
    got = scan(reading, 3.5, normalize)
    want = _numpy(reading, 3.5, normalize)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert got[2][2] == 3.5 and got[2][1] == 0.0  # all +inf: max range; a -inf: 0
    assert got[0][0, :7].tolist() == [3.5] * 7


def test_a_nan_reading_is_kept_and_is_its_envs_minimum() -> None:
    reading = np.full((2, 4), 2.0, np.float32)
    reading[0, 1] = np.nan
    reading[0, 3] = 0.5
    ranges, out, nearest = scan(reading, 3.0, True)
    assert np.isnan(ranges[0, 1]) and np.isnan(out[0, 1])
    assert np.isnan(nearest[0]) and nearest[1] == 2.0


def test_without_ranges_the_scan_and_nearest_are_the_same() -> None:
    reading = np.random.default_rng(4).uniform(0.1, 3.0, (3, 90)).astype(np.float32)
    reading[1, 4] = np.inf
    full, scan_full, nearest_full = scan(reading, 2.5, True)
    none, scan_only, nearest_only = scan(reading, 2.5, True, ranges=False)
    assert none is None and full.shape == (3, 90)
    np.testing.assert_array_equal(scan_only, scan_full)
    np.testing.assert_array_equal(nearest_only, nearest_full)
