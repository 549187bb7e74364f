"""Observation wrappers, single and vector, on small real envs: exact spaces, values in
them, downsampling, stacking across resets, and errors."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from arena_gym.sensors import CameraSpec, ImuSpec, SensorError
from arena_gym.wrappers import (
    ContactObservation,
    DepthObservation,
    ImageObservation,
    ImuObservation,
    LidarObservation,
    ScanStack,
)
from arena_gym.wrappers import vector as vw
from tests.sensors.envs import MAX_STEPS, ProbeEnv, ProbeVectorEnv

MAX_RANGE = 2.8


def test_lidar_observation_declares_its_space_and_fills_it():
    env = LidarObservation(ProbeEnv(), "probe/lidar", key="scan")
    assert env.observation_space["scan"] == spaces.Box(0.0, 1.0, (360,), np.float32)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    ranges = env.unwrapped.sensor_suite["probe/lidar"].ranges[0]
    expected = np.where(np.isinf(ranges), MAX_RANGE, ranges) / MAX_RANGE
    np.testing.assert_allclose(obs["scan"], expected, rtol=1e-6)
    assert np.isinf(ranges).any() and (obs["scan"] == 1.0).any()  # +inf reads max range


def test_lidar_observation_downsamples_by_the_minimum_of_each_group():
    env = LidarObservation(ProbeEnv(), "probe/lidar", beams=90, normalize=False)
    assert env.observation_space["scan"] == spaces.Box(0.0, MAX_RANGE, (90,), np.float32)
    obs, _ = env.reset()
    full = np.minimum(env.unwrapped.sensor_suite["probe/lidar"].ranges[0], MAX_RANGE)
    np.testing.assert_allclose(obs["scan"], full.reshape(90, 4).min(axis=1))
    with pytest.raises(SensorError, match=re.escape(
            "beams: expected an integer in [1, 360], got 400")):
        LidarObservation(ProbeEnv(), "probe/lidar", beams=400)


def test_camera_imu_and_contact_observations():
    env = ProbeEnv()
    env = ImageObservation(env, CameraSpec("probe", outputs=("rgb",), key="cam/rgb"))
    env = DepthObservation(env, CameraSpec("probe", outputs=("depth",), key="cam/depth"),
                           normalize=True)
    env = ImuObservation(env, ImuSpec("probe"), key="imu")
    env = ContactObservation(env, ["probe/collision"], key="contact")
    space = env.observation_space
    assert space["image"] == spaces.Box(0, 255, (24, 32, 3), np.uint8)
    assert space["depth"] == spaces.Box(0.0, 1.0, (24, 32), np.float32)
    assert space["imu"] == spaces.Box(-np.inf, np.inf, (10,), np.float32)
    assert space["contact"] == spaces.Box(0.0, 1.0, (1,), np.float32)
    obs, _ = env.reset()
    for _ in range(3):
        obs, *_ = env.step(np.zeros(2, np.float32))
    assert space.contains(obs)
    assert obs["image"].any() and 0 < obs["depth"].min() < 1
    assert obs["imu"][9] == pytest.approx(9.81, abs=0.05)  # accelerometer z at rest
    assert obs["contact"][0] == 0.0
    suite = env.unwrapped.sensor_suite
    assert len(suite.units) == 4  # lidar, collision, one camera for both specs, imu


def test_contact_flag_rises_when_the_robot_hits_a_wall():
    env = ContactObservation(ProbeEnv(), "probe/collision")
    env.reset()
    terminated = False
    for _ in range(MAX_STEPS):
        obs, _, terminated, _, _ = env.step(np.array([1.0, 0.0], np.float32))  # east
        if terminated:
            break
    assert terminated and obs["contact"][0] == 1.0


def test_scan_stack_keeps_the_last_k_scans():
    env = ScanStack(LidarObservation(ProbeEnv(), "probe/lidar", beams=8), key="scan", k=3)
    assert env.observation_space["scan"] == spaces.Box(0.0, 1.0, (3, 8), np.float32)
    obs, _ = env.reset()
    assert np.all(obs["scan"] == obs["scan"][0])  # filled with the first scan
    history = [obs["scan"][-1]]
    for _ in range(4):
        obs, *_ = env.step(np.array([0.5, 0.2], np.float32))
        history.append(obs["scan"][-1])
        assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs["scan"], np.stack(history[-3:]))
    assert not np.array_equal(history[0], history[-1])  # the robot moved


def test_vector_wrappers_batch_the_spaces_and_restack_after_autoreset():
    envs = vw.ScanStack(vw.LidarObservation(ProbeVectorEnv(3), "probe/lidar", beams=12), k=2)
    assert envs.single_observation_space["scan"] == spaces.Box(0.0, 1.0, (2, 12), np.float32)
    assert envs.observation_space["scan"] == gym.vector.utils.batch_space(
        envs.single_observation_space, 3)["scan"]
    obs, _ = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    actions = np.zeros((3, 2), np.float32)
    actions[1] = [1.0, 0.0]  # env 1 drives into the east wall
    for _ in range(MAX_STEPS):
        obs, _, terminated, _, _ = envs.step(actions)
        assert envs.observation_space.contains(obs)
        if terminated[1]:
            break
    assert terminated[1] and not terminated[0]
    before = obs["scan"].copy()
    obs, *_ = envs.step(actions)  # env 1 resets now (NEXT_STEP)
    assert np.array_equal(obs["scan"][1, 0], obs["scan"][1, 1])  # refilled with the reset scan
    np.testing.assert_array_equal(obs["scan"][0, 0], before[0, 1])  # env 0 just rolled on
    assert obs["steps"][1, 0] == 0


def test_vector_reset_mask_refills_only_those_envs():
    envs = vw.ScanStack(vw.LidarObservation(ProbeVectorEnv(2), "probe/lidar", beams=6), k=2)
    envs.reset()
    obs, *_ = envs.step(np.array([[0.5, 0.0], [0.5, 0.0]], np.float32))
    obs, *_ = envs.step(np.array([[0.5, 0.0], [0.5, 0.0]], np.float32))
    obs, _ = envs.reset(options={"reset_mask": np.array([False, True])})
    assert np.array_equal(obs["scan"][1, 0], obs["scan"][1, 1])
    assert not np.array_equal(obs["scan"][0, 0], obs["scan"][0, 1])


def test_wrapper_errors():
    with pytest.raises(TypeError, match=re.escape(
            "CartPoleEnv: expected an env whose `sensor_suite` attribute is a SensorSuite, "
            "got NoneType")):
        LidarObservation(gym.make("CartPole-v1"), "probe/lidar")
    with pytest.raises(SensorError, match=re.escape(
            "key 'steps': the observation already has it; expected a new key")):
        LidarObservation(ProbeEnv(), "probe/lidar", key="steps")
    with pytest.raises(SensorError, match=re.escape(
            "reading 'probe/collision': expected a LidarReading, got a CollisionReading")):
        LidarObservation(ProbeEnv(), "probe/collision")
