"""ArenaMujoco-v0 with the sensor observation wrappers: IMU, camera, contact, stacked scans;
the IMU computed only once a reading asks for it."""

from __future__ import annotations

import mujoco
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
    assert obs["scan"].shape == (2, 2, 90)
    np.testing.assert_array_equal(obs["scan"][:, 0], obs["scan"][:, 1])
    action = np.tile([0.2, 1.0], (2, 1))  # turning: every step's scan differs
    for t in range(1, 5):
        before = obs["scan"]
        obs, _, terminated, truncated, _ = envs.step(action)
        stack = obs["scan"]
        if t <= 3:  # the episode runs: the oldest frame is the last step's newest
            np.testing.assert_array_equal(stack[:, 0], before[:, 1])
            assert not np.array_equal(stack[:, 1], stack[:, 0])
        else:  # step 4 autoresets both envs: the stack refills with the reset frame
            np.testing.assert_array_equal(stack[:, 0], stack[:, 1])
            assert not np.array_equal(stack[:, 1], before[:, 1])
    assert (terminated | truncated).sum() == 0
    assert envs.observation_space.contains(obs)
    envs.close()


def _accelerometers(env) -> list[str]:
    model = env.unwrapped.core.store[0].model
    return [model.sensor(i).name for i in range(model.nsensor)
            if model.sensor_type[i] == mujoco.mjtSensor.mjSENS_ACCELEROMETER]


def test_the_imu_is_computed_only_once_a_reading_asks_and_changes_no_episode():
    """The task reads no IMU: the robot's IMU sensors (an accelerometer makes MuJoCo run a
    pass over every body at every physics step) join the model when an IMU reading binds,
    and the same seed and actions give the same episode bit for bit either way."""
    plain = ArenaEnv(max_episode_steps=30)
    with_imu = ImuObservation(ArenaEnv(max_episode_steps=30), ImuSpec("robot", "imu"),
                              key="imu")
    assert _accelerometers(plain) == []
    assert _accelerometers(with_imu) == ["env_0/robot/base_footprint_sensor_imu_accel"]
    actions = np.random.default_rng(4).uniform(plain.action_space.low,
                                               plain.action_space.high, (40, 2))
    runs = []
    for env in (plain, with_imu):
        obs, _ = env.reset(seed=3)
        run = [obs["scan"].copy()]
        for action in actions.astype(np.float32):
            obs, reward, terminated, truncated, _ = env.step(action)
            run += [obs["scan"].copy(), reward, terminated, truncated]
            if terminated or truncated:
                obs, _ = env.reset()
                run.append(obs["scan"].copy())
        runs.append(run)
    assert len(runs[0]) == len(runs[1])
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)
    assert abs(obs["imu"][-1] - 9.81) < 0.3  # the reading is live: gravity on its z
    plain.close()
    with_imu.close()
