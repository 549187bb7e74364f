"""`arena-gym ros setup`: idempotent, clear about what is missing; arena_gym never imports
rclpy."""

from __future__ import annotations

import re

import pytest

from arena_gym.ros.setup_venv import RosSetupError, setup
from tests.conftest import imported_after


def test_a_second_setup_does_nothing(ros_venv):
    said: list[str] = []
    assert setup(ros_venv, progress=said.append) == ros_venv
    assert said == [f"ROS 2 jazzy venv up to date: {ros_venv} (nothing to do)"]


def test_a_missing_build_tool_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no cmake, no compiler
    with pytest.raises(RosSetupError, match=re.escape(
            "ROS setup needs the program 'cmake' to build tf2_msgs, ros_gz_interfaces, "
            "arena_gym_interfaces, arena_mujoco_msgs, arena_people_msgs, viewport_control_msgs; "
            "expected it on PATH, "
            "found none")):
        setup(tmp_path / "venv", progress=lambda m: None)
    assert not (tmp_path / "venv").exists()


def test_an_unknown_distro_is_refused(tmp_path):
    with pytest.raises(RosSetupError, match=re.escape(
            "distro: expected one of ['jazzy', 'kilted'], got 'humble'")):
        setup(tmp_path / "venv", distro="humble")


def test_the_bridge_without_a_ros_venv_says_how_to_make_one(tmp_path):
    from arena_gym.ros.run import build_envs
    from arena_gym.ros.server import Bridge
    from arena_gym.sensors.suite import SensorSuite
    from arena_gym.sim.simulator import Simulator

    store, name = build_envs("empty", "builtin", 1, seed=0)
    sim = Simulator(store, nthread=1)
    with pytest.raises(RosSetupError, match=re.escape(
            f"no ROS venv at {tmp_path}; expected one made by 'arena-gym ros setup' "
            "(or set ARENA_GYM_ROS_VENV)")):
        Bridge.start(sim, SensorSuite(sim), name, venv=tmp_path)


def test_importing_arena_gym_never_imports_rclpy():
    assert imported_after("arena_gym, arena_gym.cli, arena_gym.ros.server, arena_gym.ros.run, "
                          "arena_gym.ros.setup_venv", "rclpy") == []
