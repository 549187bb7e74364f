"""The bridge's camera topics against a real rclpy process: nothing renders while nobody
subscribes; a subscriber gets the sensor suite's image, depth, point cloud and K of that
env only, at the camera's own rate; unsubscribing stops the rendering again."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tests.ros.conftest import camera_robot_urdf, served

W, H = 32, 24
BOX_X = 1.5  # m, the red box's centre ahead of the robot (0.4 m deep: its face at 1.3 m)
TOPICS = {"/camerabot/image_raw": "sensor_msgs/msg/Image",
          "/camerabot/depth/image_raw": "sensor_msgs/msg/Image",
          "/camerabot/depth/points": "sensor_msgs/msg/PointCloud2",
          "/camerabot/camera_info": "sensor_msgs/msg/CameraInfo"}
KEY = "camerabot/cam@ros"


@pytest.fixture(scope="module")
def bridge(ros_env, tmp_path_factory):
    """A lockstep bridge over 2 empty envs with the built-in robot carrying a 10 Hz camera
    (above its lidar, looking ahead) and a red box 1.5 m in front of it (in place of
    conftest's bridge, so conftest's probe serves this one)."""
    from arena_gym.ros.run import build_envs
    from arena_gym.scene.requests import Prim

    urdf = camera_robot_urdf(tmp_path_factory.mktemp("camerabot"), W, H)
    store, name = build_envs("empty", str(urdf), 2, seed=0)
    for env in range(2):
        store[env].spawn_prims([Prim("red", pose=(BOX_X, 0.0, 0.3, 0.0), scale=(0.4, 1.0, 0.6),
                                     rgba=(1.0, 0.0, 0.0, 1.0))])
    with served(store, name, ros_env) as b:
        yield b


def test_nothing_renders_while_nobody_subscribes(bridge, probe):
    assert probe.step(100)["success"]  # 0.2 s: two frames of a 10 Hz camera, if watched
    assert bridge.suite[KEY].count.tolist() == [0, 0]
    assert len(bridge.suite.renderers) == 0  # not even a GL context


def test_a_subscriber_gets_the_rendered_images_of_its_env(bridge, probe):
    for topic, kind in TOPICS.items():
        assert probe.listen(topic, kind) == 1, f"no publisher of {topic}"
    reading = bridge.suite[KEY]
    assert probe.step(250)["success"]  # 0.22 s: at once; then at 0.3, 0.4, ... 0.7 s (10 Hz)
    images = probe.take("/camerabot/image_raw", 6)
    assert len(images) == 6 and reading.count.tolist() == [6, 0]  # env 1: nobody watches
    image = images[-1]
    assert (image["height"], image["width"], image["encoding"], image["step"]) == \
        (H, W, "rgb8", 3 * W)
    assert image["header"]["frame_id"] == "camerabot/cam_optical"
    stamp = image["header"]["stamp"]
    assert stamp["sec"] * 1_000_000_000 + stamp["nanosec"] == round(reading.stamp[0] * 1e9)
    rgb = np.array(image["data"], dtype=np.uint8).reshape(H, W, 3)
    np.testing.assert_array_equal(rgb, reading.rgb[0])
    r, g, b = rgb[H // 2, W // 2].astype(int)
    assert r > 120 and r > 2 * max(g, b)  # the red box straight ahead

    depth_msg = probe.take("/camerabot/depth/image_raw", 6)[-1]
    assert depth_msg["encoding"] == "32FC1" and depth_msg["step"] == 4 * W
    depth = np.frombuffer(bytes(depth_msg["data"]), dtype="<f4").reshape(H, W)
    np.testing.assert_array_equal(depth, reading.depth[0])
    mount = next(m for m in camera_static(bridge) if m["child"] == "cam")
    assert depth[H // 2, W // 2] == pytest.approx(BOX_X - 0.2 - mount["xyz"][0], rel=0.01)

    cloud = probe.take("/camerabot/depth/points", 6)[-1]
    assert (cloud["height"], cloud["width"], cloud["point_step"]) == (H, W, 12)
    assert cloud["header"]["frame_id"] == "camerabot/cam"
    points = np.frombuffer(bytes(cloud["data"]), dtype="<f4").reshape(H * W, 3)
    np.testing.assert_array_equal(points, reading.points[0])

    info = probe.take("/camerabot/camera_info", 6)[-1]
    assert (info["height"], info["width"]) == (H, W)
    np.testing.assert_array_equal(np.reshape(info["k"], (3, 3)), reading.K)
    np.testing.assert_array_equal(np.reshape(info["p"], (3, 4)), reading.P)


def test_the_optical_frame_is_latched_under_the_camera_mount(bridge, probe):
    probe.listen("/tf_static", "tf2_msgs/msg/TFMessage")
    static = probe.take("/tf_static", 1)[-1]["transforms"]
    optical = next(t for t in static if t["child_frame_id"] == "camerabot/cam_optical")
    assert optical["header"]["frame_id"] == "camerabot/cam"
    q = optical["transform"]["rotation"]
    # the optical frame's z (the image's depth axis) is the mount's x (forward)
    w, x, y, z = q["w"], q["x"], q["y"], q["z"]
    z_axis = [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)]
    np.testing.assert_allclose(z_axis, [1.0, 0.0, 0.0], atol=1e-12)


def test_unsubscribing_stops_the_rendering(bridge, probe):
    # subscribed here (pytest-xdist may run this test without the ones above): it renders
    for topic, kind in TOPICS.items():
        assert probe.listen(topic, kind) == 1, f"no publisher of {topic}"
    watched = bridge.suite[KEY].count.tolist()
    assert probe.step(250)["success"]
    assert bridge.suite[KEY].count[0] > watched[0]
    for topic in TOPICS:
        probe.ask(do="unlisten", topic=topic)
    time.sleep(0.5)  # the bridge's node sees the subscriptions go
    before = bridge.suite[KEY].count.tolist()
    assert probe.step(250)["success"]
    assert bridge.suite[KEY].count.tolist() == before


def camera_static(bridge) -> list[dict]:
    from arena_gym.ros.frames import mount_transforms

    return mount_transforms(bridge.sim.store, bridge.robot)
