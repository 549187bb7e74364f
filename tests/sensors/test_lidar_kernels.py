"""The lidar's compiled common case (arena_gym.sensors.lidar_kernels) is LidarUnit's numpy
formulas bit for bit: the frames' poses and beam directions (quat_mats and the matrix
products, with unnormalised, zero and tiny quaternions, rotated frames, one beam to many),
and the REP 117 ranges (beams exactly at range_min and range_max, misses); in a real suite,
every env at once (the kernels) equals env by env (the numpy path)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from arena_gym.scene.rotations import quat_mats
from arena_gym.sensors import LidarSpec, lidar_kernels
from tests.sensors.test_lidar import _suite
from tests.sensors.worlds import lidar_block, room_store


def _numpy_rays(q: np.ndarray, offset: np.ndarray, rotation: np.ndarray,
                local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LidarUnit.rays' numpy formula for one frame on every env's free joint (what the
    kernel replaced)."""
    rows = quat_mats(q[:, 3:]).reshape(-1, 3)
    pos = q[:, :3] + (rows @ offset).reshape(-1, 3)
    rot = (rows @ rotation).reshape(-1, 3, 3)
    out = np.empty((len(q), len(local), 3))
    np.matmul(local, np.ascontiguousarray(rot.transpose(0, 2, 1)), out=out)
    return pos, out


def _fused(a: np.ndarray, b: np.ndarray, order: tuple[int, ...]) -> float:
    """sum a_k b_k, each term fused (rounded once) into the running sum from +0, exactly."""
    total = 0.0
    for k in order:
        total = float(Fraction(a[k]) * Fraction(b[k]) + Fraction(total))
    return total


def _blas_sums_as_the_kernel() -> bool:
    """Whether this numpy's BLAS forms 3-term products as the kernel does (OpenBLAS's x86-64
    kernels: a matrix product's terms fused in order, a matrix times a vector the second
    term first, a vector times a matrix unfused); another BLAS's last bits differ, and so
    may numpy's path from the kernel's, to rounding."""
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(32, 3)), rng.normal(size=(3, 3))
    v = rng.normal(size=3)
    matrix = all((a @ b)[i, j] == _fused(a[i], b[:, j], (0, 1, 2))
                 for i in range(32) for j in range(3))
    vector = all((a @ v)[i] == _fused(a[i], v, (1, 0, 2)) for i in range(32))
    row = all((a[i:i + 1] @ b)[0, j] == (a[i, 0] * b[0, j] + a[i, 1] * b[1, j]) + a[i, 2] * b[2, j]
              for i in range(32) for j in range(3))
    return matrix and vector and row


BLAS_AS_KERNEL = _blas_sums_as_the_kernel()


def _same(ours: np.ndarray, theirs: np.ndarray, scale: float) -> None:
    """Bit for bit where the BLAS sums as the kernel; else to the rounding of 3-term sums."""
    if BLAS_AS_KERNEL:
        assert ours.tobytes() == theirs.tobytes()
    else:
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=4 * np.finfo(float).eps * scale)


def _quaternions(rng: np.random.Generator, n: int) -> np.ndarray:
    q = rng.normal(size=(n, 4)) * 10.0 ** rng.uniform(-3, 3, (n, 1))  # unnormalised
    q[0] = 0.0  # a zero quaternion reads as the identity
    q[1] = (1e-16, 0.0, 0.0, -1e-16)  # below mjMINVAL: likewise
    q[2] = (1e-14, 0.0, 0.0, 0.0)  # just above: normalised
    q[3] = (0.0, -0.0, 1.0, 0.0)  # signed zeros
    q[4] = (math.cos(0.3), 0.0, 0.0, math.sin(0.3))  # a unit yaw
    return q


@pytest.mark.parametrize(("nray", "n"), [(360, 16), (1, 8), (7, 9), (16 * 181, 6)])
def test_rays_kernel_is_the_numpy_formula(nray, n):
    rng = np.random.default_rng(nray)
    q = np.empty((n, 7))
    q[:, :3] = rng.uniform(-20, 20, (n, 3))
    q[::2, :3] = 0.0  # the offset's product bare: its last bits show
    q[:, 3:] = _quaternions(rng, n)
    local = rng.normal(size=(nray, 3))
    local /= np.linalg.norm(local, axis=1, keepdims=True)
    for offset, rotation in [(np.zeros(3), np.eye(3)),
                             (rng.uniform(-0.5, 0.5, 3), quat_mats(rng.normal(size=(1, 4)))[0])]:
        origins, directions = np.empty((n, 3)), np.empty((n, nray, 3))
        lidar_kernels.rays(q, offset, rotation, local, origins, directions)
        pos, world = _numpy_rays(q, offset, rotation, local)
        _same(origins, pos, 25.0)
        _same(directions, world, 1.0)
        # a strided view of the qpos rows, as Frames.rows gives for a batch group
        wide = np.zeros((n, 19))
        wide[:, 5:12] = q
        lidar_kernels.rays(wide[:, 5:12], offset, rotation, local, origins, directions)
        _same(origins, pos, 25.0)
        _same(directions, world, 1.0)


def test_ranges_kernel_is_the_numpy_formula():
    rng = np.random.default_rng(1)
    low, high = 0.12, 3.5
    dist = rng.uniform(-0.5, 5.0, (16, 360))
    geomid = rng.integers(0, 30, (16, 360)).astype(np.int32)
    miss = rng.random((16, 360)) < 0.2
    dist[miss], geomid[miss] = -1.0, -1  # what MuJoCo gives for a miss
    dist[0, :6] = (low, high, np.nextafter(low, 0), np.nextafter(high, 9), 0.0, 1e300)
    dist[1, :3] = (np.nextafter(high, 0), np.nan, 3.4999999999999999)  # rounds up in float32
    geomid[:2, :6] = 3
    for range_max in (high, math.inf):
        out = np.full((16, 360), 7.0, dtype=np.float32)
        lidar_kernels.ranges(dist, geomid, low, range_max, out)
        with np.errstate(over="ignore"):  # 1e300 is inf in float32
            expected = dist.astype(np.float32)  # LidarUnit.finish's numpy formula
        np.putmask(expected, dist < low, -np.inf)
        np.putmask(expected, (geomid < 0) | (dist > range_max), np.inf)
        assert out.tobytes() == expected.tobytes()
        beyond = np.float32(np.nextafter(high, 9)) if range_max > high else np.inf
        assert out[0, :6].tolist() == [np.float32(low), np.float32(high), -np.inf, beyond,
                                       -np.inf, np.inf]


def test_a_suite_casts_all_envs_as_it_would_env_by_env():
    """Every env at once (the kernels) against env by env (LidarUnit's numpy path), with the
    probes tilted to unnormalised quaternions: origins, directions and ranges, bit for bit."""
    store = room_store(5, lidar_block(samples=360, min_range=0.3, max_range=2.0))
    sim, suite = _suite(store, LidarSpec("probe"))
    unit = suite.channels["probe/lidar"].unit
    adr = int(unit.qpos_adr[0])
    rng = np.random.default_rng(3)
    for env in range(5):
        qpos = sim.state(env, "qpos")
        qpos[adr:adr + 3] += (rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), 0.0)
        quat = (4.0, 0.0, 0.0, 0.0) + rng.normal(scale=(0.2, 0.2, 0.2, 2.0))
        qpos[adr + 3:adr + 7] = quat if env else 0.0  # env 0: a zero quaternion
    # env 1 on its side: the floor right below the lidar, nearer than range_min
    sim.state(1, "qpos")[adr + 3:adr + 7] = (3 * math.cos(0.6), 3 * math.sin(0.6), 0.0, 0.0)
    origins, directions = suite.lidar_rays("probe/lidar")  # every env: the kernel
    suite.reset()  # casts every env now
    ranges = unit.out["ranges"].copy()
    assert (ranges == -np.inf).any() and (ranges == np.inf).any()
    assert np.isfinite(ranges).sum() > 400  # walls in range in every env
    for env in range(5):
        one = np.array([env])
        pos, world = unit.rays(suite.frames, one)
        _same(pos[0], origins[env], 5.0)
        _same(world[0], directions[env], 1.0)
        unit.finish(one)  # from the same casts, through the numpy path
    assert unit.out["ranges"].tobytes() == ranges.tobytes()
