"""An Arena-Rosnav session from a cold start: `arena-gym bridge --arena --lockstep
--arena-root WS` as an Arena user runs it, driven by a separate rclpy client written from
Arena's interface only (tests/ros/arena_session.py): its robot's meshes are absolute
file:// paths inside the Arena root, envs 0 .. 3 are made on first contact, a cmd_vel
moves nothing while a joint command with one unknown name moves the robot by its known
joints (the bridge answers on), DeletePrims env_0/ leaves nothing, a lamp's glow visual
shines with its light and SetLights dims what the robot's camera sees, joint states flow
between lockstep Steps, and /tf_static holds no edge robot_state_publisher sends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from arena_gym.worlds.default import builtin_robot_urdf
from tests.meshes.shapes import box, write_obj
from tests.sensors.worlds import camera_block

CLIENT = Path(__file__).resolve().parent / "arena_session.py"
MAX_ENVS = 4
UP = ("bridge up: an Arena session (node 'mujoco', no robot of ours, envs made on first "
      f"contact up to {MAX_ENVS}), lockstep (paused; /mujoco/step advances)\n")
ROBOT_PATH = "env_0_Robots_sessionbot_base_footprint"


def arena_workspace(root: Path) -> dict:
    """An Arena workspace as the runtime leaves it: a generated robot URDF whose chassis
    mesh is an absolute file:// path inside the workspace, a lidar whose sensor is named as
    its link (a frame robot_state_publisher owns) and a small camera; a lamp model's body
    and glow part."""
    robot = root / "install" / "arena_robots" / "share" / "sessionbot"
    (robot / "meshes").mkdir(parents=True)
    chassis = write_obj(robot / "meshes" / "chassis.obj", *box((-0.07, -0.07, 0.0),
                                                              (0.07, 0.07, 0.13)))
    text = builtin_robot_urdf().read_text()
    visual = ('<visual>\n      <origin xyz="0 0 0.075" rpy="0 0 0"/>\n      <geometry>'
              '<cylinder radius="0.075" length="0.130"/></geometry>')
    assert visual in text
    text = text.replace(visual, f'<visual><geometry><mesh filename="file://{chassis}"/>'
                                '</geometry>', 1)
    text = text.replace('<sensor name="laser" type="ray">', '<sensor name="base_scan" '
                        'type="ray">')
    text = text.replace("</robot>", camera_block(width=48, height=36, rate=10.0,
                                                 reference="base_link",
                                                 pose="0.08 0 0.14 0 0 0") + "</robot>")
    urdf = robot / "sessionbot.urdf"
    urdf.write_text(text)
    (robot / "model_params.yaml").write_text(
        (builtin_robot_urdf().parent / "model_params.yaml").read_text())
    lamp = root / "build" / "cache" / "models" / "Desk_Lamp"
    lamp.mkdir(parents=True)
    body = write_obj(lamp / "Desk_Lamp.obj", *box((-0.05, -0.05, 0.0), (0.05, 0.05, 0.1)))
    shade = write_obj(lamp / "Desk_Lamp.glow_0.obj", *box((-0.2, -0.2, -0.2), (0.2, 0.2, 0.2)))
    links = [link.get("name") for link in ET.fromstring(text).iter("link")]
    return {"urdf": str(urdf), "lamp": str(body), "shade": str(shade), "links": links,
            "max_envs": MAX_ENVS}


@pytest.fixture(scope="module")
def session(ros_env, tmp_path_factory):
    """The bridge as `arena-gym bridge --arena` (its stdout's first line, its stderr) and
    the client's transcript."""
    root = tmp_path_factory.mktemp("arena_ws")
    config = arena_workspace(root)
    (root / "config.json").write_text(json.dumps(config))
    env = dict(os.environ, ARENA_GYM_ROS_VENV=str(ros_env), PYTHONPATH=str(
        Path(__file__).resolve().parents[2]))
    env.pop("ARENA_WS_DIR", None)
    bridge = subprocess.Popen(
        [sys.executable, "-m", "arena_gym.cli", "bridge", "--arena", "--lockstep",
         "--arena-root", str(root), "--max-envs", str(MAX_ENVS)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.extend(bridge.stderr), daemon=True)
    reader.start()
    try:
        up = bridge.stdout.readline()
        client_env = {k: v for k, v in os.environ.items()
                      if k not in ("PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
        done = subprocess.run([str(ros_env / "bin" / "python"), str(CLIENT),
                               str(root / "config.json")], capture_output=True, text=True,
                              env=client_env, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:] + "".join(errors)[-3000:]
        out = json.loads(done.stdout)
        (root / "transcript.json").write_text(json.dumps(out, indent=1))
        bridge.send_signal(signal.SIGTERM)
        status = bridge.wait(timeout=60)
    finally:
        if bridge.poll() is None:
            bridge.kill()
            bridge.wait()
    reader.join(timeout=10)
    yield {"up": up, "status": status, "stderr": "".join(errors), "config": config, **out}


def calls(out: dict, service: str) -> list[dict]:
    return [c["answer"] for c in out["transcript"] if c.get("call") == service]


def test_the_bridge_starts_as_arenas_server_with_no_robot_of_its_own(session):
    assert session["up"] == UP
    seen = session["seen"]
    assert seen["server_node"]  # the node is named mujoco, as Arena's server
    assert seen["robot_of_ours"] == []  # no /robot/* topics
    assert seen["clock_without_robots"] == pytest.approx(0.02)  # /clock before any robot
    assert session["status"] == 0  # SIGTERM: a clean end
    assert calls(session, "/mujoco/PauseSimulation") == [{"success": True, "message": ""}]


def test_envs_0_to_3_are_made_on_first_contact_and_the_bound_is_named(session):
    seen = session["seen"]
    assert seen["cleanup"] == [False] * 4  # each env made, and empty
    assert calls(session, "/mujoco/SpawnPrims")[1:] == [{"ret": [True]}, {"ret": [False]}]
    assert (f"bridge: spawn_prims: env_id {MAX_ENVS}: beyond this bridge's bound of "
            f"{MAX_ENVS} envs (--max-envs: every env keeps its own model and state in "
            f"memory); start it with --max-envs {MAX_ENVS + 1} or more for that env\n"
            ) in session["stderr"]


def test_the_robots_file_meshes_inside_the_arena_root_are_read(session):
    assert calls(session, "/mujoco/SpawnUrdf")[0] == {"path": ROBOT_PATH}
    assert "outside the allowed" not in session["stderr"]


def test_delete_prims_of_env_0_leaves_nothing(session):
    seen = session["seen"]
    assert seen["cleanup_env_0"]
    assert seen["paths"] == [ROBOT_PATH, ROBOT_PATH]  # no '_0': the name was free again
    assert not [c for c in seen["tf_children"] if c.startswith("env_0/")]


def test_cmd_vel_is_the_runtimes_and_joint_commands_drive_by_known_names(session):
    x0, x1, moving, x2 = session["seen"]["odom_x"]
    assert x1 == pytest.approx(x0, abs=1e-3)  # nobody here drives a twist
    assert moving - x1 > 0.01  # the joint commands move it
    # 6 rad/s on 0.033 m wheels: 0.2 m/s, about 0.2 m in the second that followed
    assert 0.18 < x2 - moving < 0.2
    warnings = [line for line in session["stderr"].splitlines() if "phantom_joint" in line]
    assert len(warnings) == 1  # one warning, not one per message
    assert warnings == [
        "bridge: joint_commands: velocity command of 'env_3_Robots_sessionbot_base_footprint' "
        "in env 3: skipped 'phantom_joint' (unknown velocity-servoed joint in env 3 "
        "'env_3/env_3_Robots_sessionbot_base_footprint/phantom_joint')"]
    assert [c["note"] for c in session["transcript"] if "topic" in c] == [
        "a twist for the runtime's controller", "a joint command, one name unknown"]
    assert [c["subscribers"] for c in session["transcript"] if "topic" in c] == [0, 1]


def test_joint_states_flow_between_lockstep_steps(session):
    between = session["seen"]["joint_states_between_steps"]
    assert between["more"] >= 5
    assert between["stamp"] == pytest.approx(between["clock"])  # the clock stands
    assert between["names"] == ["wheel_left_joint", "wheel_right_joint"]


def test_no_tf_static_edge_is_one_robot_state_publisher_sends(session):
    links = set(session["config"]["links"])
    edges = session["seen"]["tf_static"]
    assert edges  # the bridge latches the frames only it knows (the camera's optical one)
    for parent, child in edges:
        assert child.split("/")[-1] not in links, (parent, child)


def test_setlights_dims_what_the_robots_camera_sees_and_the_shade_glows(session):
    frames = session["seen"]["camera"]
    assert [f["level"] for f in frames] == [1.0, 0.5, 0.0]
    assert all(f["size"] == [48, 36] for f in frames)
    bright, dim, dark = (f["mean"] for f in frames)
    assert bright > dim > dark == 0.0  # the lamp is all the light
    # the shade in the middle of the view: its glow, level ** 0.65 of white
    assert frames[0]["centre"] == [255, 255, 255]
    assert frames[1]["centre"] == pytest.approx([255 * 0.5 ** 0.65] * 3, abs=2)
    assert calls(session, "/mujoco/SpawnLights") == [{"ret": [True]}]
    assert [c for c in calls(session, "/mujoco/SetLights")] == [
        {"ret": [True]}, {"ret": [True]}, {"ret": [False]}]  # the last after ResetWorld
