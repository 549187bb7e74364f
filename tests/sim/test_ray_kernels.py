"""The ray casts' compiled preparation (arena_gym.sim.ray_kernels) is numpy's broadcast of
each env's origin over its rays, bit for bit, for any strides of the origins."""

from __future__ import annotations

import numpy as np

from arena_gym.sim import ray_kernels


def test_fill_origins_is_the_broadcast_origins():
    rng = np.random.default_rng(0)
    origins = rng.normal(size=(16, 3)) * 10.0 ** rng.uniform(-3, 3, (16, 1))
    origins[0] = (0.0, -0.0, np.nan)  # copied as they are, signs and NaN alike
    for source in (origins, np.asfortranarray(origins), np.repeat(origins, 2, axis=0)[::2]):
        for nray in (1, 360):
            pnt = np.full((16, nray, 3), 7.0)
            ray_kernels.fill_origins(pnt, source)
            expected = np.ascontiguousarray(np.broadcast_to(origins[:, None, :], (16, nray, 3)))
            assert pnt.tobytes() == expected.tobytes()
