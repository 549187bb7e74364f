"""mujoco/joint_commands_velocity from a real rclpy process turns the joint at the commanded
rate (through the simulator's joint servos), and a command naming no servoed joint moves
nothing while the bridge keeps serving."""

from __future__ import annotations

import pytest

JOINTS = "sensor_msgs/msg/JointState"
TOPIC = "/robot/mujoco/joint_commands_velocity"
OP = "joint_commands"  # what the node makes of a message on it


def wheel(message: dict, name: str) -> tuple[float, float]:
    i = message["name"].index(name)
    return message["position"][i], message["velocity"][i]


def test_a_commanded_joint_velocity_turns_the_joint(bridge, probe):
    assert probe.listen("/robot/joint_states", JOINTS) == 1
    assert probe.command(bridge, OP, TOPIC, JOINTS,
                         {"name": ["wheel_left_joint"], "velocity": [4.0]}) == 1
    probe.step(250)  # 0.5 s to reach the speed
    q0, _ = wheel(probe.take("/robot/joint_states", 25)[-1], "wheel_left_joint")
    probe.step(250)
    last = probe.take("/robot/joint_states", 25)[-1]
    q1, v1 = wheel(last, "wheel_left_joint")
    assert v1 == pytest.approx(4.0, abs=0.05)
    assert q1 - q0 == pytest.approx(2.0, abs=0.05)  # 0.5 s at 4 rad/s
    assert abs(wheel(last, "wheel_right_joint")[1]) < 0.05  # not commanded: at rest
    probe.command(bridge, OP, TOPIC, JOINTS, {"name": ["wheel_left_joint"], "velocity": [0.0]})
    probe.step(500)  # the servo's time constant is ~0.15 s: 1 s settles it
    assert abs(wheel(probe.take("/robot/joint_states", 50)[-1], "wheel_left_joint")[1]) < 0.05


def test_a_command_naming_no_servoed_joint_moves_nothing(bridge, probe, capfd):
    # (listened again here: pytest-xdist may run a test without the one above)
    assert probe.listen("/robot/joint_states", JOINTS) == 1
    probe.command(bridge, OP, TOPIC, JOINTS, {"name": ["no_such_joint"], "velocity": [4.0]})
    assert probe.step(250)["success"]  # still serving
    last = probe.take("/robot/joint_states", 25)[-1]
    assert all(abs(v) < 0.05 for v in last["velocity"])
    assert ("bridge: ignored joint_commands: unknown velocity-servoed joint in env 0 "
            "'env_0/robot/no_such_joint'; did you mean 'env_0/robot/wheel_left_joint', "
            "'env_0/robot/wheel_right_joint'?\n") in capfd.readouterr().err  # no reply to say it


def test_a_command_with_one_bad_name_applies_none_of_it(bridge, probe, capfd):
    # (listened again here: pytest-xdist may run a test without the one above)
    assert probe.listen("/robot/joint_states", JOINTS) == 1
    probe.command(bridge, OP, TOPIC, JOINTS,
                  {"name": ["wheel_left_joint", "wheel_rigth_joint"], "velocity": [4.0, 4.0]})
    assert probe.step(250)["success"]
    last = probe.take("/robot/joint_states", 25)[-1]
    assert all(abs(v) < 0.05 for v in last["velocity"])  # not even the left wheel turns
    assert ("bridge: ignored joint_commands: unknown velocity-servoed joint in env 0 "
            "'env_0/robot/wheel_rigth_joint'; did you mean 'env_0/robot/wheel_right_joint'"
            ) in capfd.readouterr().err
