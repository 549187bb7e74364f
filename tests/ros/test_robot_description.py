"""A robot description from a latched ROS topic (issue 34 item 1): the probe, a real rclpy
process, publishes a URDF on /robot_description with transient-local QoS (as
robot_state_publisher does) before the bridge starts; `arena-gym bridge
--robot-description-topic /robot_description` waits for it, builds its robot from it (its
package:// mesh resolved in an --allow-root folder) and publishes that robot's topics."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from arena_gym.ros.description import fetch_robot_description
from arena_gym.ros.files import file_roots
from arena_gym.ros.run import build_envs
from arena_gym.worlds.default import builtin_robot_urdf
from tests.ros.conftest import Probe

# a tetrahedron, 5 cm: the described robot's extra visual
OBJ = """v 0 0 0
v 0.05 0 0
v 0 0.05 0
v 0 0 0.05
f 1 3 2
f 1 2 4
f 1 4 3
f 2 3 4
"""
TIP = ('<link name="tip_link"><visual><geometry><mesh filename="package://tip_pkg/meshes/'
       'tip.obj"/></geometry></visual></link><joint name="tip_joint" type="fixed"><parent '
       'link="base_link"/><child link="tip_link"/><origin xyz="0 0 0.2"/></joint>')


def described_urdf(folder) -> str:
    """The built-in robot renamed 'described', with a package:// mesh in `folder`."""
    (folder / "tip_pkg" / "meshes").mkdir(parents=True)
    (folder / "tip_pkg" / "meshes" / "tip.obj").write_text(OBJ)
    text = builtin_robot_urdf().read_text()
    text = re.sub(r'<robot name="[^"]*"', '<robot name="described"', text, count=1)
    return text.replace("</robot>", TIP + "</robot>")


def test_the_bridge_builds_its_robot_from_a_latched_robot_description(ros_env, tmp_path):
    urdf = described_urdf(tmp_path)
    probe = Probe(ros_env)
    bridge = None
    try:
        probe.ask(do="publish", topic="/robot_description", type="std_msgs/msg/String",
                  msg={"data": urdf}, latched=True)  # before the bridge starts
        bridge = subprocess.Popen(
            [sys.executable, "-m", "arena_gym.cli", "bridge", "--world", "empty",
             "--lockstep", "--robot-description-topic", "/robot_description",
             "--allow-root", str(tmp_path), "--venv", str(ros_env)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = [bridge.stdout.readline(), bridge.stdout.readline()]
        if bridge.poll() is not None:
            pytest.fail(f"the bridge ended: {lines} {bridge.stderr.read()}")
        assert lines == [
            f"bridge: robot description from /robot_description ({len(urdf)} characters)\n",
            "bridge up: 1 env(s) of 'empty', robot 'described', lockstep (paused; "
            "/mujoco/step advances)\n"]
        assert probe.publishers("/described/scan", 1) == 1  # the described robot's lidar
    finally:
        probe.close()
        if bridge is not None:
            bridge.terminate()
            _, err = bridge.communicate(timeout=60)
            assert "dropped" not in err  # the package:// mesh resolved: no warning


def test_the_description_builds_the_robot_with_its_package_mesh_from_the_allowed_roots(
        tmp_path):
    urdf = described_urdf(tmp_path)
    store, name = build_envs("empty", urdf, 1, 0, file_roots(urdf, [tmp_path]))
    model = store[0].model
    assert name == "described"
    tip = model.body("env_0/described/tip_link").id
    meshes = [g for g in range(model.ngeom) if model.geom_bodyid[g] == tip]
    assert len(meshes) == 1 and model.geom_type[meshes[0]] == 7  # mjGEOM_MESH
    with pytest.warns(UserWarning, match=re.escape(  # not in the allowed roots: not found
            "robot 'described': visual of link 'tip_link' dropped: mesh "
            "'package://tip_pkg/meshes/tip.obj': unknown package 'tip_pkg'")):
        build_envs("empty", urdf, 1, 0, file_roots(urdf))


def test_no_description_within_the_timeout_is_named(ros_env):
    with pytest.raises(ValueError, match=re.escape(
            "--robot-description-topic '/nobody_publishes_this': no message within 1 s; "
            "expected a latched std_msgs/String (transient-local QoS, as "
            "robot_state_publisher publishes it)")):
        fetch_robot_description("/nobody_publishes_this", ros_env, timeout=1.0)
    with pytest.raises(ValueError, match=re.escape(
            "--robot-description-topic 'no spaces': expected a ROS topic name such as "
            "/robot_description")):
        fetch_robot_description("no spaces", ros_env)
