"""The lidar's compiled functions (arena_gym.sensors.lidar: frames_into, ranges_into)
against references written here: MuJoCo's quaternion-to-matrix and numpy's products for
the frames (unnormalised, zero and tiny quaternions, rotated frames, fixed frames, subsets,
one beam to many), numpy's REP 117 for the ranges (beams exactly at range_min and
range_max, misses); and a real suite's frames against MuJoCo's kinematics."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from arena_gym.sensors import LidarSpec
from arena_gym.sensors.lidar import frames_into, ranges_into
from tests.sensors.test_lidar import _suite
from tests.sensors.worlds import lidar_block, room_store

EPS = np.finfo(float).eps


def _reference(q: np.ndarray, adr: np.ndarray, offset: np.ndarray, rotation: np.ndarray,
               local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each frame's origin and beam directions: MuJoCo's rotation of the joint's quaternion
    (normalised; below mjMINVAL it is the identity), then numpy's products."""
    origins, directions = [], []
    for i in range(len(q)):
        if adr[i] < 0:
            origin, rot = offset[i], rotation[i]
        else:
            quat = q[i, 3:7]
            base = np.eye(3)
            if np.dot(quat, quat) >= 1e-30:
                m = np.zeros(9)
                mujoco.mju_quat2Mat(m, quat / np.linalg.norm(quat))
                base = m.reshape(3, 3)
            origin, rot = q[i, :3] + base @ offset[i], base @ rotation[i]
        origins.append(origin)
        directions.append(local @ rot.T)
    return np.array(origins), np.array(directions)


def _quaternions(rng: np.random.Generator, n: int) -> np.ndarray:
    q = rng.normal(size=(n, 4)) * 10.0 ** rng.uniform(-3, 3, (n, 1))  # unnormalised
    q[0] = 0.0  # a zero quaternion reads as the identity
    q[1] = (1e-16, 0.0, 0.0, -1e-16)  # below mjMINVAL: likewise
    q[2] = (1e-14, 0.0, 0.0, 0.0)  # just above: normalised
    q[3] = (0.0, -0.0, 1.0, 0.0)  # signed zeros
    q[4] = (math.cos(0.3), 0.0, 0.0, math.sin(0.3))  # a unit yaw
    return q


@pytest.mark.parametrize(("nray", "n"), [(360, 16), (1, 8), (7, 9), (16 * 181, 6)])
def test_frames_are_the_joint_pose_composed_with_the_fixed_offset(nray, n):
    rng = np.random.default_rng(nray)
    qpos = np.zeros((n, 19))  # the joint at address 5 of a wider state, as a batch's qpos
    qpos[:, 5:8] = rng.uniform(-20, 20, (n, 3))
    qpos[:, 8:12] = _quaternions(rng, n)
    adr = np.full(n, 5)
    adr[-1] = -1  # a frame fixed to the world: its offset is its pose
    local = rng.normal(size=(nray, 3))
    local /= np.linalg.norm(local, axis=1, keepdims=True)
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, rng.normal(size=4) / 2)
    for offset, rotation in [(np.zeros((n, 3)), np.tile(np.eye(3), (n, 1, 1))),
                             (rng.uniform(-0.5, 0.5, (n, 3)), np.tile(
                                 m.reshape(3, 3) / np.linalg.norm(m[:3]), (n, 1, 1)))]:
        origins, directions = np.empty((n, 3)), np.empty((n, nray, 3))
        per_ray = np.empty((n, nray, 3))
        frames_into(qpos, np.arange(n), adr, np.full(n, 7), offset, rotation, local, origins,
                    per_ray, directions)
        pos, world = _reference(qpos[:, 5:], adr, offset, rotation, local)
        np.testing.assert_allclose(origins, pos, rtol=0, atol=8 * EPS * 25.0)
        np.testing.assert_array_equal(per_ray, np.repeat(origins[:, None], nray, axis=1))
        np.testing.assert_allclose(directions, world, rtol=0, atol=8 * EPS)
        # a subset in another order: rows pick each env's state
        rows = np.array([n - 2, 0, 3])
        origins, directions = np.empty((3, 3)), np.empty((3, nray, 3))
        frames_into(qpos, rows, adr[rows], np.full(3, 7), offset[rows], rotation[rows], local,
                    origins, np.empty((3, nray, 3)), directions)
        np.testing.assert_allclose(origins, pos[rows], rtol=0, atol=8 * EPS * 25.0)
        np.testing.assert_allclose(directions, world[rows], rtol=0, atol=8 * EPS)


def test_a_planar_base_frame_is_its_yaw_at_the_ground_composed_with_the_offset():
    """Width 3 (a planar base's x, y, yaw): the frame turns about z by the yaw, at z = 0,
    against MuJoCo's quaternion of that yaw."""
    rng = np.random.default_rng(7)
    n, nray = 12, 90
    qpos = np.zeros((n, 6))
    qpos[:, 2:5] = rng.uniform(-10, 10, (n, 3))  # x, y, yaw at address 2
    adr, width = np.full(n, 2), np.full(n, 3)
    offset = rng.uniform(-0.5, 0.5, (n, 3))
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, rng.normal(size=4) / 2)
    rotation = np.tile(m.reshape(3, 3) / np.linalg.norm(m[:3]), (n, 1, 1))
    local = rng.normal(size=(nray, 3))
    local /= np.linalg.norm(local, axis=1, keepdims=True)
    origins, directions = np.empty((n, 3)), np.empty((n, nray, 3))
    frames_into(qpos, np.arange(n), adr, width, offset, rotation, local, origins,
                np.empty((n, nray, 3)), directions)
    yaw = qpos[:, 4]
    free = np.column_stack([qpos[:, 2:4], np.zeros(n), np.cos(yaw / 2), np.zeros((n, 2)),
                            np.sin(yaw / 2)])
    pos, world = _reference(free, adr, offset, rotation, local)
    np.testing.assert_allclose(origins, pos, rtol=0, atol=8 * EPS * 10.0)
    np.testing.assert_allclose(directions, world, rtol=0, atol=8 * EPS)


def test_ranges_are_rep_117_from_the_casts():
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
        for envs in (np.arange(16), np.array([3, 0, 11])):  # every env, or some, in any order
            out = np.full((16, 360), 7.0, dtype=np.float32)
            ranges_into(dist[envs], geomid[envs], low, range_max, envs, out)
            with np.errstate(over="ignore"):  # 1e300 is inf in float32
                want = np.where((geomid < 0) | (dist > range_max), np.inf,
                                np.where(dist < low, -np.inf, dist)).astype(np.float32)
            np.testing.assert_array_equal(out[envs], want[envs])
            untouched = np.setdiff1d(np.arange(16), envs)
            assert (out[untouched] == 7.0).all()
        beyond = np.float32(np.nextafter(high, 9)) if range_max > high else np.inf
        assert out[0, :6].tolist() == [np.float32(low), np.float32(high), -np.inf, beyond,
                                       -np.inf, np.inf]


def test_a_suites_frames_are_mujocos_site_poses():
    """Every env at once, with the probes tilted to unnormalised quaternions, against
    MuJoCo's kinematics of each env's lidar site, and env by env."""
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
    origins, directions = suite.lidar_rays("probe/lidar")
    for env in range(5):
        mount = unit.mounts[env]
        model, data = store[env].model, mujoco.MjData(store[env].model)
        data.qpos[:] = sim.state(env, "qpos")
        if env == 0:
            data.qpos[adr + 3:adr + 7] = (1.0, 0.0, 0.0, 0.0)  # what a zero one reads as
        mujoco.mj_kinematics(model, data)
        site = model.site(mount.site).id
        np.testing.assert_allclose(origins[env], data.site_xpos[site], rtol=0, atol=1e-12)
        world = unit.pattern.directions @ data.site_xmat[site].reshape(3, 3).T
        np.testing.assert_allclose(directions[env], world, rtol=0, atol=1e-12)
        pos, one = unit.rays(suite.frames, np.array([env]))
        np.testing.assert_array_equal(pos[0], origins[env])  # one env: the same function
        np.testing.assert_array_equal(one[0], directions[env])
