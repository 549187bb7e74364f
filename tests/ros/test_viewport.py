"""The `/arena/viewport` contract over ROS: the camera follows a reference entity (its pose
on camera_pose is the entity's pose times the local one), set_view aims it, cmd_view
keyframes move it, a bad projection is refused, a capture waiting for sim time is answered
once a Step reaches it."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

from arena_gym.ros.run import build_envs
from arena_gym.worlds.default import builtin_robot_urdf
from tests.ros.conftest import Probe, served
from tests.waiting import wait_until, within

VP = "viewport_control_msgs/srv/"


@pytest.fixture(scope="module")
def view(ros_env):
    with served(*build_envs("empty", "builtin", 1, seed=0), ros_env) as b:
        p = Probe(ros_env)
        p.listen("/arena/viewport/camera_pose", "geometry_msgs/msg/PoseStamped")
        yield b, p
        p.close()


def latest_pose(probe: Probe, near: list[float], timeout: float = 20.0) -> list[float]:
    """The camera's position once camera_pose shows it near `near` (10 Hz of wall time)."""
    position: list = [None]

    def near_enough() -> bool:
        msgs = probe.take("/arena/viewport/camera_pose", count=1)
        if msgs:
            p = msgs[-1]["pose"]["position"]
            position[0] = [p["x"], p["y"], p["z"]]
        return position[0] is not None and bool(np.allclose(position[0], near, atol=0.02))

    within(near_enough, timeout)  # the robot may still settle
    return position[0]


def test_the_camera_follows_its_reference_entity(view):
    bridge, probe = view
    move = probe.call("/mujoco/EditPrims", "arena_mujoco_msgs/srv/EditPrims", env_id=0,
                      pose=True, prims=[{"name": "robot", "pose": {
                          "position": {"x": 1.0, "y": 1.0},
                          "orientation": {"w": math.cos(math.pi / 4),
                                          "z": math.sin(math.pi / 4)}}}])
    assert move == {"ret": [True]}
    probe.step(10)
    base = bridge.runner.call_soon(  # on the loop: the scenes are its while it serves
        lambda: bridge.sim.store[0].get_pose("robot")[0]).result(timeout=60)
    assert probe.call("/arena/viewport/set_reference_frame", VP + "ViewportSetReferenceFrame",
                      entity="robot", mode=0) == {"success": True, "message": "tracking robot"}
    assert probe.call("/arena/viewport/set_view", VP + "ViewportSetView",
                      eye={"x": -2.0, "z": 1.0}, target={}, fov=0.0)["success"]
    # the robot turned by 90 degrees: its -x is the world's -y
    expected = [base[0], base[1] - 2.0, base[2] + 1.0]
    assert latest_pose(probe, expected) == pytest.approx(expected, abs=0.02)
    expected = [base[0], base[1] + 3.0, base[2]]

    def sent_and_seen() -> bool:  # a message sent before discovery matched is lost: again
        now = time.time()  # the keyframe's wall time (cmd_view is sampled at wall time)
        probe.ask(do="publish", topic="/arena/viewport/cmd_view",
                  type="viewport_control_msgs/msg/ViewportView",
                  msg={"target_time": {"sec": int(now), "nanosec": int(now % 1 * 1e9)},
                       "pose": {"position": {"x": 3.0}, "orientation": {"w": 1.0}},
                       "fov": 0.0})
        seen = latest_pose(probe, expected, timeout=5.0)
        return seen is not None and bool(np.allclose(seen, expected, atol=0.02))

    within(sent_and_seen, 60)
    assert latest_pose(probe, expected) == pytest.approx(expected, abs=0.02)


def test_the_camera_follows_a_tf_frame_of_a_robot(view):
    bridge, probe = view
    # a robot of Arena's SpawnUrdf: its frames (tf_prefix "tf_bot/") are no body names
    path = probe.call("/mujoco/SpawnUrdf", "arena_mujoco_msgs/srv/SpawnUrdf", env_id=0,
                      name="env_0/bot", urdf_path=str(builtin_robot_urdf()),
                      tf_prefix="tf_bot/", base_frame="base_footprint",
                      pose={"position": {"x": 2.0, "y": -1.0}, "orientation": {"w": 1.0}})
    assert path == {"path": "env_0_bot_base_footprint"}

    def reference(frame: str) -> None:
        assert probe.call("/arena/viewport/set_reference_frame", VP + "ViewportSetReferenceFrame",
                          entity=frame, mode=2) == {"success": True,  # POSITION_ONLY
                                                    "message": f"tracking {frame}"}

    def link(robot: str, name: str) -> list[float]:  # on the loop: the scenes are its
        def pose():
            scene = bridge.sim.store[0]
            return scene.get_pose(scene.robot(robot).prefix + name)[0].tolist()
        return bridge.runner.call_soon(pose).result(timeout=60)

    assert probe.call("/arena/viewport/set_view", VP + "ViewportSetView",
                      eye={"z": 1.0}, target={"x": 1.0}, fov=0.0)["success"]
    scan, base = link(path["path"], "base_scan"), link(path["path"], "base_footprint")
    assert scan[:2] == pytest.approx([2.0, -1.0], abs=0.05)
    for frame, at in (("tf_bot/base_scan", scan), ("/tf_bot/base_footprint", base),
                      ("robot/laser", link("robot", "base_scan")),  # a sensor's frame
                      ("map", [0.0, 0.0, 0.0]), ("tf_bot/odom", [0.0, 0.0, 0.0])):
        reference(frame)
        expected = [at[0], at[1], at[2] + 1.0]
        assert latest_pose(probe, expected) == pytest.approx(expected, abs=0.02), frame
    reference("tf_bot/no_such_link")  # not (yet) there: the world frame
    assert latest_pose(probe, [0.0, 0.0, 1.0]) == pytest.approx([0.0, 0.0, 1.0], abs=0.02)
    assert probe.call("/mujoco/DeletePrims", "arena_mujoco_msgs/srv/DeletePrims", env_id=0,
                      names=[path["path"]]) == {"ret": [True]}


def test_a_bad_projection_is_refused(view):
    _, probe = view
    assert probe.call("/arena/viewport/set_projection", VP + "ViewportSetProjection",
                      projection="fisheye") == {
        "success": False, "message": "projection must be 'perspective' or 'orthographic'"}
    assert probe.call("/arena/viewport/set_projection", VP + "ViewportSetProjection",
                      projection="orthographic") == {"success": True, "message": "ok"}


def test_a_capture_waits_for_its_sim_time(view, ros_env):
    bridge, probe = view
    target = bridge.sim.clock + 0.1
    shot: list[dict] = []
    capturer = Probe(ros_env)
    thread = threading.Thread(target=lambda: shot.append(capturer.call(
        "/arena/viewport/capture", VP + "ViewportCapture",
        pose={"position": {"x": -3.0, "z": 1.5}, "orientation": {"w": 1.0}},
        min_sim_time={"sec": int(target), "nanosec": int(round(target % 1 * 1e9))})))
    try:
        thread.start()
        wait_until(lambda: bridge.viewport.waiting, 30, "the bridge to hold the capture")
        assert probe.step(20)["success"]  # 0.04 s: not yet
        assert thread.is_alive() and not shot
        probe.step(50)  # past it: the capture is answered
        thread.join(timeout=60)
        image = shot[0]["image"]
        assert shot[0]["success"] and (image["width"], image["height"]) == (1920, 1080)
        stamp = image["header"]["stamp"]
        assert stamp["sec"] + stamp["nanosec"] * 1e-9 >= target - 1e-6
    finally:
        capturer.close()


def test_sixteen_captures_at_once_are_all_answered(view):
    """As docs/ros.md promises for every service: a burst of requests is kept (QoS depth
    1000), not cut at rclpy's default of 10."""
    _, probe = view
    shots = probe.ask(do="call_many", service="/arena/viewport/capture",
                      type=VP + "ViewportCapture", count=16, timeout=240,
                      request={"pose": {"position": {"x": -3.0, "z": 1.5},
                                        "orientation": {"w": 1.0}}})
    assert [(s["success"], s["image"]["width"]) for s in shots] == [(True, 1920)] * 16


@pytest.mark.parametrize(("fields", "message"), [
    ({"fov": 1e300}, "fov: expected radians below pi (0 or less: keep the current one), got "
                     "1e+300"),
    ({"fov": float("nan")}, "fov: expected finite numbers, got (nan,)"),
    ({"eye": {"x": 1e300}}, "eye: expected numbers within +-10000 (m, rad), got (1e+300, 0.0, "
                            "0.0)"),
])
def test_a_view_ros_cannot_draw_is_refused_and_the_view_kept(view, fields, message):
    bridge, probe = view
    before = (bridge.viewport.control.local, bridge.viewport.control.hfov)
    request = {"eye": {"x": -2.0, "z": 1.0}, "target": {}, "fov": 0.0} | fields
    assert probe.call("/arena/viewport/set_view", VP + "ViewportSetView", **request) == {
        "success": False, "message": message}
    assert (bridge.viewport.control.local, bridge.viewport.control.hfov) == before
    shot = probe.call("/arena/viewport/capture", VP + "ViewportCapture",
                      pose={"position": {"x": -3.0, "z": 1.5}, "orientation": {"w": 1.0}},
                      fov=float("nan"))
    assert (shot["success"], shot["message"]) == (False, "fov: expected finite numbers, got "
                                                         "(nan,)")
