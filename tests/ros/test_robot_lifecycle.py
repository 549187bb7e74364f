"""Robots that come and go while the bridge runs, against a real rclpy process: a robot
spawned later gets its camera topics, rendered only where someone subscribes; a deleted
robot's topics are withdrawn (no publishers, gone from /tf and /tf_static); the same name
spawned again (into another env) gets its topics back, camera included."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ros.conftest import camera_robot_urdf
from tests.waiting import wait_until

W, H = 32, 24
KEY = "cam2/cam@ros"  # the bridge's reading of the spawned robot's camera
SPAWN = (1.5, 0.5, 0.3)  # x, y, yaw in env 1
AGAIN = (-1.0, 1.0, 0.0)  # x, y, yaw in env 0, after the delete
IMAGE = "sensor_msgs/msg/Image"
CAMERA = {"image_raw": IMAGE, "depth/image_raw": IMAGE,
          "depth/points": "sensor_msgs/msg/PointCloud2",
          "camera_info": "sensor_msgs/msg/CameraInfo"}
TF = "tf2_msgs/msg/TFMessage"
WORLD = "empty"  # the conftest bridge's world


@pytest.fixture(scope="module")
def urdf(tmp_path_factory):
    return camera_robot_urdf(tmp_path_factory.mktemp("cam2"), W, H)


def spawn(probe, urdf, env: int, pose: tuple[float, float, float]) -> None:
    x, y, yaw = pose
    reply = probe.call("/mujoco/spawn_urdf", "arena_gym_interfaces/srv/SpawnUrdf", env_id=env,
                       name="cam2", urdf_path=str(urdf), x=x, y=y, yaw=yaw)
    assert reply["success"], reply["message"]


def frames(tf: dict) -> list[tuple[str, str]]:
    return [(t["header"]["frame_id"], t["child_frame_id"]) for t in tf["transforms"]]


def watch(bridge, probe, env: int) -> None:
    """Wait until the node has told the bridge that someone watches env's camera (a Step
    of 0 lets the bridge take the node's word), so that the next Step renders it."""
    wait_until(lambda: probe.step(0)["success"] and env in bridge.watched.get("cam2", []),
               30, lambda: f"the node to see env {env}'s camera watched ({bridge.watched})")


def check_image(probe, ns: str, reading, env: int, count: int) -> None:
    """The last image of `ns` is the suite's rendering of `env`; `count` new ones came."""
    images = probe.take(f"{ns}/image_raw", count)
    assert len(images) == count
    assert images[-1]["header"]["frame_id"] == f"{ns[1:]}/cam_optical"
    rgb = np.array(images[-1]["data"], dtype=np.uint8).reshape(H, W, 3)
    np.testing.assert_array_equal(rgb, reading.rgb[env])
    assert rgb.std() > 0  # a rendered picture, not the buffer's zeros


def test_a_robot_spawned_later_gets_its_camera_rendered_only_when_watched(bridge, probe,
                                                                          urdf):
    spawn(probe, urdf, 1, SPAWN)
    reading = bridge.suite[KEY]
    assert probe.step(100)["success"]  # 0.2 s: two frames of its 10 Hz camera, if watched
    assert reading.count.tolist() == [0, 0]  # nobody subscribes yet: nothing rendered
    for name, kind in CAMERA.items():
        assert probe.listen(f"/env_1/cam2/{name}", kind) == 1, f"no publisher of {name}"
    watch(bridge, probe, 1)
    assert probe.step(250)["success"]  # 0.22 s: at once; then at 0.3, 0.4, ... 0.7 s
    check_image(probe, "/env_1/cam2", reading, 1, 6)
    assert reading.count.tolist() == [0, 6]
    info = probe.take("/env_1/cam2/camera_info", 6)[-1]
    np.testing.assert_array_equal(np.reshape(info["k"], (3, 3)), reading.K)


def test_a_deleted_robot_is_withdrawn(bridge, probe):
    assert probe.listen("/tf", TF) == 1
    assert probe.listen("/tf_static", TF) == 1
    reply = probe.call("/mujoco/delete_prims", "arena_gym_interfaces/srv/DeletePrims",
                       env_id=1, names=["cam2"])
    assert reply["success"] and reply["deleted"] == ["cam2"], reply["message"]
    for name in ("odom", "scan", "joint_states", *CAMERA):
        assert probe.publishers(f"/env_1/cam2/{name}", 0) == 0, f"{name} still published"
    count = bridge.suite[KEY].count.tolist()
    probe.take("/tf")
    assert probe.step(50)["success"]
    assert frames(probe.take("/tf", 5)[-1]) == [
        ("robot/odom", "robot/base_footprint"), ("env_1/robot/odom", "env_1/robot/base_footprint")]
    static = frames(probe.take("/tf_static", 1)[-1])  # sent again without its mounts
    assert ("env_1/robot/base_footprint", "env_1/robot/laser") in static
    assert not [child for _, child in static if child.startswith("env_1/cam2/")]
    assert bridge.suite[KEY].count.tolist() == count  # its camera no longer renders


def test_a_robot_spawned_again_under_the_same_name_works(bridge, probe, urdf):
    spawn(probe, urdf, 0, AGAIN)
    assert probe.listen("/cam2/odom", "nav_msgs/msg/Odometry") == 1
    assert probe.listen("/cam2/image_raw", IMAGE) == 1
    watch(bridge, probe, 0)
    assert probe.publishers("/env_1/cam2/odom", 0) == 0  # still gone from env 1
    probe.take("/tf")
    reading = bridge.suite[KEY]
    before = reading.count.tolist()
    assert probe.step(100)["success"]  # 0.8 to 1.0 s: images at once, at 0.9 and 1.0 s
    odom = probe.take("/cam2/odom", 10)[-1]
    p = odom["pose"]["pose"]["position"]
    np.testing.assert_array_equal([p["x"], p["y"], p["z"]], bridge.suite["cam2/odom"].position[0])
    assert (p["x"], p["y"]) == pytest.approx(AGAIN[:2], abs=0.01)
    assert frames(probe.take("/tf", 10)[-1])[-1] == ("cam2/odom", "cam2/base_footprint")
    check_image(probe, "/cam2", reading, 0, 3)
    assert (reading.count - before).tolist() == [3, 0]
    assert ("cam2/base_footprint", "cam2/cam") in frames(probe.take("/tf_static", 1)[-1])
