"""One registry per extension kind: built-ins go through it, lookups fail with the names
known, a plugin cannot shadow a built-in, and each consumer finds a new entry there."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import gymnasium as gym
import numpy as np
import pytest

from arena_gym.config import ConfigError, load_config
from arena_gym.registry import (
    DRIVES,
    POLICIES,
    REWARD_TERMS,
    SENSOR_KINDS,
    WORLDS,
    RegistryError,
)
from arena_gym.sensors import LidarSpec
from arena_gym.sensors.kinds import SensorKind
from arena_gym.sensors.odometry import OdometryUnit
from arena_gym.sensors.readings import OdometryReading
from arena_gym.sensors.specs import OdometrySpec
from arena_gym.sensors.suite import default_specs
from arena_gym.tasks.rewards import RewardTerm
from arena_gym.train.policies import make_policy


def test_builtin_kinds_are_registry_entries():
    assert SENSOR_KINDS.names()[:6] == ["lidar", "camera", "imu", "contact", "odometry",
                                        "collision"]
    assert {"goal", "collision", "progress", "pedestrian_speed"} <= set(REWARD_TERMS.names())
    assert POLICIES.names()[:2] == ["random", "reactive"]
    assert SENSOR_KINDS.source("lidar") == ""  # arena_gym itself
    assert DRIVES.names()[:3] == ["wheels", "mecanum", "planar"]


def test_the_controller_builds_drives_through_the_registry():
    from arena_gym.sim.drive import wheel_drive

    built = []

    def spy(model, robot):
        built.append(robot.name)
        return wheel_drive(model, robot)

    for kind, base in (("wheels", "wheeled"), ("planar", "planar")):
        built.clear()
        DRIVES.register(kind, spy, replace=True)
        try:
            env = gym.make_vec("ArenaMujoco-v0", num_envs=2, base=base,
                               vectorization_mode="vector_entry_point")
            env.reset(seed=0)
            env.step(np.tile([0.2, 0.0], (2, 1)))
            assert built == ["robot", "robot"]  # once per env, cached after
            env.close()
        finally:
            DRIVES.register(kind, wheel_drive, replace=True)


def test_unknown_names_list_the_known_ones():
    with pytest.raises(RegistryError, match=re.escape(
            "unknown sensor kind 'lidr'; did you mean 'lidar'? (expected one of")):
        SENSOR_KINDS["lidr"]
    with pytest.raises(ConfigError, match=re.escape("unknown config key 'reward.golf'")):
        load_config(reward={"golf": 1.0})


def test_a_name_taken_by_a_builtin_cannot_be_shadowed():
    with pytest.raises(RegistryError, match=re.escape(
            "reward term 'goal': already registered by arena_gym; expected a new name "
            "(or replace=True)")):
        REWARD_TERMS.register("goal", RewardTerm(lambda cfg, out: out.reached * 1.0))


@dataclass(frozen=True)
class SpeedSpec(OdometrySpec):
    kind: ClassVar[str] = "speedometer"


class SpeedUnit(OdometryUnit):
    kind = "speedometer"


@pytest.fixture
def speedometer():
    """A kind every robot gets by default (no declaration), reusing odometry's unit."""
    kind = SensorKind(SpeedSpec, lambda spec, n, suite: SpeedUnit(spec, n),
                      lambda spec, unit, n, period: OdometryReading(
                          spec.reading_key, spec.robot, "", n, period),
                      default=lambda robot, mount: SpeedSpec(robot))
    SENSOR_KINDS.register("speedometer", kind)
    yield kind
    SENSOR_KINDS.unregister("speedometer")


def test_a_registered_kind_reaches_default_specs_suite_and_env_config(speedometer):
    env = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point",
                       sensors=[{"kind": "speedometer", "key": "speed", "observe": True}])
    core = env.unwrapped.core
    assert SpeedSpec("robot") in default_specs(core.store)
    obs, _ = env.reset(seed=0)
    for _ in range(10):
        obs, *_ = env.step(np.tile([0.3, 0.0], (2, 1)))
    # the flat observation: position (3), orientation (4), linear (3), angular velocity (3)
    assert obs["speed"].shape == (2, 13)
    np.testing.assert_allclose(obs["speed"][:, :2], core.task.pose[:, :2], atol=1e-6)
    assert 0.2 < obs["speed"][0, 7] < 0.35  # forward speed in the base frame, m/s
    env.close()


def test_the_env_rejects_a_sensor_key_it_already_observes():
    with pytest.raises(ConfigError, match=re.escape(
            "sensors[0].key: expected a new observation key, got 'scan'")):
        gym.make_vec("ArenaMujoco-v0", num_envs=1, vectorization_mode="vector_entry_point",
                     sensors=[{"kind": "imu", "key": "scan"}])


def test_a_spec_of_an_unregistered_kind_is_refused_by_the_suite():
    env = gym.make_vec("ArenaMujoco-v0", num_envs=1, vectorization_mode="vector_entry_point")
    suite = env.unwrapped.core.sensor_suite
    with pytest.raises(Exception, match=re.escape(
            "add: expected a spec of a registered sensor kind (LidarSpec, CameraSpec")):
        suite.add(SpeedSpec("robot"))
    assert suite.add(LidarSpec("robot", key="scan2")).ranges.shape == (1, 360)
    env.close()


def test_a_registered_policy_is_found_by_name():
    env = gym.make_vec("ArenaMujoco-v0", num_envs=2, vectorization_mode="vector_entry_point")
    POLICIES.register("stand_still", lambda env, seed: lambda obs: np.zeros((2, 2)))
    try:
        policy = make_policy("stand_still", env)
        obs, _ = env.reset(seed=0)
        assert policy(obs).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    finally:
        POLICIES.unregister("stand_still")
        env.close()


def test_the_cli_lists_every_registry(capsys):
    from arena_gym.cli import main

    assert main(["plugins"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:5] == [
        "sensor kinds: lidar, camera, imu, contact, odometry, collision, mujoco",
        "reward terms: goal, collision, progress, safe_distance, reverse, abrupt_velocity, "
        "time, pedestrian_collision, pedestrian_safety, pedestrian_speed",
        "policies: random, reactive",
        "plugins: -",
        "drives: wheels, mecanum, planar",
    ]
    assert lines[5] == "world sources: random"


def test_a_registered_world_source_is_named_by_the_config():
    from arena_gym.worlds.layouts import RoomLayout

    with pytest.raises(ValueError, match=re.escape(
            "world: expected a ROS map.yaml path or one of ['random'], got 'closet'")):
        gym.make_vec("ArenaMujoco-v0", num_envs=1, vectorization_mode="vector_entry_point",
                     world="closet")
    WORLDS.register("closet", lambda room_size, **_: RoomLayout(3.0))
    try:
        env = gym.make_vec("ArenaMujoco-v0", num_envs=1, vectorization_mode="vector_entry_point",
                           world="closet", curriculum={"stages": [[0, 0]]},
                           min_start_goal_distance=0.5)
        env.reset(seed=0)
        pose = env.unwrapped.core.task.pose[0]
        assert np.abs(pose[:2]).max() < 1.5  # inside the 3 m closet, not the 6 m room
        env.close()
    finally:
        WORLDS.unregister("closet")
