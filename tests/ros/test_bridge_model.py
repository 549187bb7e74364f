"""`arena-gym bridge --model FILE.xml` (issue 42 item 5): an MJCF model served over ROS as
the world of every env, as MuJoCo simulates the file: a real bridge process and a real
rclpy probe; /mujoco/step advances the clock by the model's own timestep, the model's
keyframes reset by their own names, and SIGTERM ends it cleanly."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ros.conftest import Probe
from tests.waiting import wait_until

KEYS = "arena_gym_interfaces/srv/ResetToKeyframe"
MODEL = """<mujoco model="falling"><option timestep="0.004"/>
  <worldbody><body name="ball" pos="0 0 1"><freejoint/><geom type="sphere" size="0.05"/>
  </body></worldbody>
  <keyframe><key name="high" qpos="0 0 3 1 0 0 0"/></keyframe></mujoco>"""


def secs(stamp: dict) -> float:
    return stamp["sec"] + stamp["nanosec"] * 1e-9


def test_an_mjcf_model_is_served_as_the_world_of_every_env(ros_env, tmp_path: Path):
    path = tmp_path / "falling.xml"
    path.write_text(MODEL)
    process = subprocess.Popen(
        [sys.executable, "-m", "arena_gym.cli", "bridge", "--model", str(path), "--envs", "2",
         "--lockstep", "--venv", str(ros_env)], stdout=subprocess.PIPE, text=True)
    probe = None
    try:
        assert process.stdout.readline() == (
            "bridge up: 2 env(s) of model 'falling.xml', lockstep (paused; /mujoco/step "
            "advances)\n")
        probe = Probe(ros_env)
        probe.listen("/clock", "rosgraph_msgs/msg/Clock")
        reply = probe.step(25)
        assert reply["success"], reply["message"]
        assert secs(reply["clock"]) == pytest.approx(25 * 0.004, abs=1e-9)  # its timestep
        got = probe.take_until("/clock", lambda m: m and secs(m[-1]["clock"]) >= 0.1 - 1e-9,
                               "the clock at 0.1 s")
        assert secs(got[-1]["clock"]) == pytest.approx(0.1, abs=1e-9)
        reply = probe.call("/mujoco/reset_to_keyframe", KEYS, keyframe="high", env_id=-1)
        assert reply == {"success": True, "message": "all 2 envs reset to keyframe 'high'"}
        reply = probe.call("/mujoco/reset_to_keyframe", KEYS, keyframe="hihg", env_id=0)
        assert reply == {"success": False, "message": "reset_to_keyframe: unknown keyframe "
                                                      "in env 0 'hihg'; did you mean 'high'?"}
    finally:
        if probe is not None:
            probe.close()
        process.send_signal(signal.SIGTERM)
        wait_until(lambda: process.poll() is not None, 60, "the bridge to end on SIGTERM")
    assert process.returncode == 0


def test_model_and_world_together_are_refused(tmp_path: Path):
    path = tmp_path / "falling.xml"
    path.write_text(MODEL)
    done = subprocess.run([sys.executable, "-m", "arena_gym.cli", "bridge", "--model",
                           str(path), "--world", "empty"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert ("--model: expected it instead of --world, --robot, --robot-description-topic "
            "and --max-envs (the model is the world)") in done.stderr
