"""`arena-gym view --foxglove`: a real WebSocket client of Foxglove's protocol on loopback
receives the bridge's CDR messages and decodes them with the ros2msg schemas the server
advertised; the values are the simulator's (the env's own scan, the robot's pose)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_gym.cli import main
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.ros.foxglove_server import INSTALL_HINT, FoxgloveServer, start_foxglove
from arena_gym.ros.run import build_envs
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator
from tests.ros.conftest import camera_robot_urdf
from tests.ros.foxglove_client import FoxgloveClient

TOPICS = ["/robot/scan", "/tf", "/tf_static", "/env_1/robot/odom"]
LASER_HEIGHT = 0.010 + 0.160  # arena_diffbot.urdf: base_joint + the base_scan joint


def stamp_ns(header) -> int:
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def test_a_foxglove_client_receives_the_envs_scan_tf_and_odometry():
    env = ArenaVectorEnv(2)
    server = start_foxglove(env, port=0)
    client = None
    actions = np.array([[0.2, 0.5], [0.15, -0.4]], dtype=np.float32)
    try:
        env.reset(seed=0)
        env.step(actions)  # the first frames create (advertise) the channels
        client = FoxgloveClient(server.port)
        client.subscribe(TOPICS)
        for _ in range(20):  # the subscription is live once a later frame arrives
            env.step(actions)
            if client.pump(lambda: "/tf" in client.received, timeout=1.0):
                break
        clocks = []
        for _ in range(3):
            env.step(actions)
            clocks.append(round(env.core.sim.clock * 1e9))
        checked = ("/tf", "/robot/scan", "/env_1/robot/odom")
        assert client.pump(lambda: all(client.received.get(topic, [(0, None)])[-1][0]
                                       == clocks[-1] for topic in checked))
        for topic in checked:  # one per control step
            messages = client.received[topic][-3:]
            assert [t for t, _ in messages] == clocks  # log time: the sim stamp
            header = (messages[-1][1].transforms[0].header if topic == "/tf"
                      else messages[-1][1].header)
            assert stamp_ns(header) == clocks[-1]
        assert client.channels["/robot/scan"]["schemaName"] == "sensor_msgs/msg/LaserScan"
        assert client.channels["/robot/scan"]["encoding"] == "cdr"

        scan = client.received["/robot/scan"][-1][1]
        np.testing.assert_array_equal(np.array(scan.ranges, dtype=np.float32),
                                      env.sensor_suite["scan"].ranges[0])
        assert scan.header.frame_id == "robot/laser"

        store = env.core.sim.store
        tf = client.received["/tf"][-1][1]
        assert [(t.header.frame_id, t.child_frame_id) for t in tf.transforms] == [
            ("robot/odom", "robot/base_footprint"), ("env_1/robot/odom",
                                                     "env_1/robot/base_footprint")]
        for e, transform in enumerate(tf.transforms):
            position, quat = store[e].get_pose("robot")
            t, q = transform.transform.translation, transform.transform.rotation
            np.testing.assert_array_equal([t.x, t.y, t.z], position)
            np.testing.assert_array_equal([q.w, q.x, q.y, q.z], quat)
        odom = client.received["/env_1/robot/odom"][-1][1]
        p = odom.pose.pose.position
        np.testing.assert_array_equal([p.x, p.y, p.z], store[1].get_pose("robot")[0])

        # /tf_static does not latch over WebSocket: a late subscriber gets it sent again
        statics = [m for _, m in client.received["/tf_static"]]
        assert len(statics) == 1
        mounts = {t.child_frame_id: t for t in statics[0].transforms}
        assert sorted(mounts) == ["env_1/robot/imu", "env_1/robot/laser", "robot/imu",
                                  "robot/laser"]
        laser = mounts["robot/laser"].transform.translation
        assert [laser.x, laser.y, laser.z] == pytest.approx([0.0, 0.0, LASER_HEIGHT],
                                                            abs=1e-12)
        assert client.pump(lambda: client.times and client.times[-1] == clocks[-1])
    finally:
        if client is not None:
            client.close()
        server.close()
        env.close()


def test_the_view_command_serves_foxglove_without_a_display_until_ctrl_c():
    """`arena-gym view --foxglove` in its own process, no DISPLAY: its first line says where
    it serves, a client receives the env's scans, and Ctrl-C (SIGINT) ends it as --seconds
    would, with its summary and status 0."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    view = subprocess.Popen([sys.executable, "-m", "arena_gym.cli", "view", "--foxglove",
                             "--port", str(port), "--seconds", "600"],
                            stdout=subprocess.PIPE, text=True, env=env)
    client = None
    try:
        first = view.stdout.readline()  # printed once it serves
        assert first == (f"serving Foxglove on ws://127.0.0.1:{port} (open it in Foxglove: "
                         "Open connection > Foxglove WebSocket)\n")
        client = FoxgloveClient(port, timeout=120.0)
        client.subscribe(["/robot/scan"])
        assert client.pump(lambda: len(client.received.get("/robot/scan", [])) >= 2,
                           timeout=60.0)
        scan = client.received["/robot/scan"][-1][1]
        assert scan.header.frame_id == "robot/laser"
        assert len(scan.ranges) == 90  # the default config's beams
        ranges = np.array(scan.ranges)
        hits = ranges[np.isfinite(ranges)]  # REP 117: no return is +inf
        assert hits.size and np.all((scan.range_min <= hits) & (hits <= scan.range_max))
        assert np.all(ranges[~np.isfinite(ranges)] == np.inf)
        client.close()
        client = None
        view.send_signal(signal.SIGINT)
        rest, _ = view.communicate(timeout=120)
    finally:
        if client is not None:
            client.close()
        if view.poll() is None:
            view.kill()
            view.wait()
    assert view.returncode == 0
    assert re.fullmatch(r"served \d+ steps \(\d+\.\d s simulated\) in \d+\.\d s, "
                        r"\d+ messages", rest.splitlines()[-1])


def test_a_busy_port_is_a_clear_error_that_leaves_the_env_untouched():
    env = ArenaVectorEnv(1)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        readings = list(env.sensor_suite.readings)
        with pytest.raises(OSError, match=re.escape(
                f"foxglove: cannot serve on 127.0.0.1:{port} ([Errno 98] Address already in "
                "use); expected a free port (--port) on a local address (--host)")):
            start_foxglove(env, port=port)
        assert list(env.sensor_suite.readings) == readings  # no odometry added
    env.close()


@given(st.one_of(st.integers(max_value=-1), st.integers(min_value=65536), st.floats(),
                 st.text(max_size=5), st.booleans(), st.none()))
def test_a_bad_port_is_refused(port):
    with pytest.raises(ValueError, match=re.escape(
            f"port: expected an integer in 0..65535 (0: any free port), got {port!r}")):
        FoxgloveServer(port=port)


def test_without_the_sdk_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "foxglove", None)  # as if not installed
    with pytest.raises(ImportError, match=re.escape(INSTALL_HINT)):
        FoxgloveServer(port=0)


@pytest.mark.parametrize(("argv", "message"), [
    (["--port", "70000"], "argument --port: expected a port in 0..65535, got 70000"),
    (["--port", "9000"], "--host/--port/--allow-origin: expected --foxglove too (they are its "
                         "address)"),
])
def test_the_view_command_refuses_a_bad_address(argv, capsys, message):
    assert main(["view", *argv]) == 2
    assert capsys.readouterr().err == f"arena-gym: error: {message}\n"


def test_a_robot_spawned_later_is_served_with_its_camera_while_a_client_subscribes(tmp_path):
    store, name = build_envs("empty", "builtin", 2, seed=0)
    sim = Simulator(store, nthread=1)
    suite = SensorSuite(sim, seed=0)
    server = FoxgloveServer(port=0).attach(sim, suite, name).publish_ticks()
    client = FoxgloveClient(server.port)
    image, odom = "/env_1/cam2/image_raw", "/env_1/cam2/odom"
    try:
        store[1].spawn_urdf("cam2", camera_robot_urdf(tmp_path, 32, 24), pose=(1.5, 0.5, 0.3))
        sim.step(100)  # it joins; its camera channels are advertised at once
        reading = suite["cam2/cam@ros"]
        assert reading.count.tolist() == [0, 0]  # nobody subscribes: nothing renders
        client.subscribe([image, odom])
        for _ in range(50):  # the subscription is live once an image arrives
            sim.step(10)
            if client.pump(lambda: image in client.received, timeout=0.2):
                break
        sim.step(100)  # 0.2 s more: two more images at 10 Hz
        last = round(reading.stamp[1] * 1e9)
        assert client.pump(lambda: client.received[image][-1][0] == last)
        msg = client.received[image][-1][1]
        assert msg.header.frame_id == "env_1/cam2/cam_optical"
        np.testing.assert_array_equal(np.frombuffer(bytes(msg.data), np.uint8).reshape(24, 32, 3),
                                      reading.rgb[1])
        assert reading.count[0] == 0 and reading.count[1] >= 3  # env 1 only, while watched
        now = round(sim.clock * 1e9)
        assert client.pump(lambda: client.received[odom][-1][0] == now)
        p = client.received[odom][-1][1].pose.pose.position
        np.testing.assert_array_equal([p.x, p.y, p.z], suite["cam2/odom"].position[1])
        store[1].delete(["cam2"])
        sim.step(10)  # it leaves: its channels close
        assert client.pump(lambda: image not in client.channels and odom not in client.channels)
        assert "/env_1/robot/odom" in client.channels
    finally:
        client.close()
        server.close()
        suite.close()
        sim.close()


def test_a_web_page_of_another_origin_is_turned_away(tmp_path):
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    from tests.ros.foxglove_client import SUBPROTOCOL

    store, name = build_envs("empty", "builtin", 1, seed=0)
    sim = Simulator(store, nthread=1)
    suite = SensorSuite(sim, seed=0)
    server = FoxgloveServer(port=0, allowed_origins=("https://app.foxglove.dev",))
    server.attach(sim, suite, name).publish_ticks()
    url = f"ws://127.0.0.1:{server.port}"
    try:
        with pytest.raises(InvalidStatus) as refused:
            connect(url, subprotocols=[SUBPROTOCOL], origin="https://evil.example",
                    open_timeout=5)
        assert refused.value.response.status_code == 403
        assert refused.value.response.body.decode() == (
            "origin 'https://evil.example' is not allowed: this server serves pages of this "
            "machine only (start it with --allow-origin https://evil.example to allow that "
            "page)\n")
        sim.step(10)  # the first frame advertises /tf
        for origin in ("http://localhost:3000", "https://app.foxglove.dev", None):
            client = FoxgloveClient(server.port, origin=origin)
            try:
                client.subscribe(["/tf"])
                for _ in range(50):  # the subscription is live once a later frame arrives
                    sim.step(10)
                    if client.pump(lambda c=client: "/tf" in c.received, timeout=0.2):
                        break
                assert "/tf" in client.received, origin
            finally:
                client.close()
    finally:
        server.close()
        suite.close()
        sim.close()
