"""ArenaMujoco-v0 with the sensor observation wrappers: IMU, camera, contact, stacked scans."""

from __future__ import annotations

import numpy as np

from arena_gym.envs.single_env import ArenaEnv
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.sensors import CollisionSpec, ImuSpec
from arena_gym.wrappers import ContactObservation, ImuObservation
from arena_gym.wrappers import vector as vw


def test_single_env_gets_imu_and_contact_observations():
    """(Cameras need a camera in the robot's URDF; the built-in robot declares none.
    tests/sensors covers ImageObservation with a robot that does.)"""
    env = ArenaEnv(max_episode_steps=20)
    env = ImuObservation(env, ImuSpec("robot", "imu"), key="imu")
    env = ContactObservation(env, CollisionSpec("robot"), key="contact")
    obs, _ = env.reset(seed=1)
    assert obs["imu"].shape == (10,)
    assert obs["contact"].tolist() == [0.0]
    obs, *_ = env.step(np.zeros(2, np.float32))
    accel = obs["imu"][-3:]
    assert accel[2] == np.float32(accel[2]) and abs(accel[2] - 9.81) < 0.3  # at rest: gravity
    assert env.observation_space.contains(obs)
    env.close()


def test_vector_env_stacks_scans_through_autoresets():
    envs = ArenaVectorEnv(2, max_episode_steps=3)
    envs = vw.ScanStack(envs, key="scan", k=2)
    obs, _ = envs.reset(seed=0)
    assert obs["scan"].shape == (2, 2, 360)
    np.testing.assert_array_equal(obs["scan"][:, 0], obs["scan"][:, 1])
    for _ in range(4):  # past a timeout and its autoreset
        obs, *_ = envs.step(np.zeros((2, 2)))
    assert envs.observation_space.contains(obs)
    envs.close()
