"""What a robot spawned by Arena's /mujoco/SpawnUrdf publishes, against a real rclpy process:
every sensor its request lists on that sensor's own topic and frame (two lidars, two IMUs,
two cameras), a contact sensor's ros_gz_interfaces/Contacts from the sensors layer's
contact reading, robot cameras lit by the lights services' table; and the env it is
spawned into, empty until then (made on first contact, up to --max-envs)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from PIL import Image

from arena_gym.ros.arena_commands import ArenaCommands
from arena_gym.ros.commands import Commands
from arena_gym.ros.files import file_roots
from arena_gym.ros.run import build_envs
from arena_gym.worlds.default import builtin_robot_urdf
from tests.ros.conftest import Probe, served  # conftest's probe: on this module's bridge
from tests.sensors.worlds import camera_block, imu_block, lidar_block, probe_urdf

SRV = "arena_mujoco_msgs/srv/"
NS = "/env_1/probe"
ROBOT = "env_1_probe_base_footprint"  # Arena's path of env_1/probe with base base_footprint
TOPICS = {  # the request's sensor list: name, type, topic, frame, backing URDF sensor
    "front": ("laserscan", f"{NS}/front/scan", "front_link", "front"),
    "rear": ("laserscan", f"{NS}/rear/scan", "rear_link", "rear"),
    "imu": ("imu", f"{NS}/imu", "base_link", "imu"),
    "imu_mast": ("imu", f"{NS}/mast/imu", "mast", "imu_mast"),
    "cam_image": ("image", f"{NS}/cam/image", "cam_link", "cam"),
    "cam_info": ("camera_info", f"{NS}/cam/info", "cam_link", "cam"),
    "aft_image": ("image", f"{NS}/aft/image", "aft_link", "aft"),
    "bumper": ("contact", f"{NS}/bumper", "base_link", ""),
}
TYPES = {"laserscan": "sensor_msgs/msg/LaserScan", "imu": "sensor_msgs/msg/Imu",
         "image": "sensor_msgs/msg/Image", "camera_info": "sensor_msgs/msg/CameraInfo",
         "contact": "ros_gz_interfaces/msg/Contacts"}
IDENTITY = {"w": 1.0}
STRIPES_MDL = """mdl 1.6;
import ::OmniPBR::OmniPBR;
export material Stripes(*) = OmniPBR(
    diffuse_texture: texture_2d("stripes.png"),
    texture_scale: float2(1.0)
);
"""


def pose(x: float, y: float, z: float = 0.0) -> dict:
    return {"position": {"x": x, "y": y, "z": z}, "orientation": IDENTITY}


@pytest.fixture(scope="module")
def bridge(ros_env, tmp_path_factory):
    """A lockstep bridge over 1 env of the built-in robot and 1 empty env (--max-envs 2);
    the probe robot's URDF (two lidars, two IMUs, two cameras) in an allowed folder."""
    folder = tmp_path_factory.mktemp("probe")
    (folder / "probe.urdf").write_text(probe_urdf(
        lidar_block(name="front", samples=360), lidar_block(name="rear", samples=90),
        imu_block(name="imu"), imu_block(name="imu_mast", reference="mast_joint"),
        camera_block(name="cam", width=32, height=24, rate=50.0),
        camera_block(name="aft", width=16, height=12, rate=50.0, pose="0 0 0.1 0 0 3.14159")))
    stripes = np.zeros((8, 8, 3), dtype=np.uint8)
    stripes[:, 4:] = 255  # one black and one white stripe, each half a metre wide
    Image.fromarray(stripes).save(folder / "stripes.png")
    (folder / "stripes.mdl").write_text(STRIPES_MDL)
    roots = file_roots(builtin_robot_urdf(), [folder])
    store, name = build_envs("empty", "builtin", 1, seed=0, path_roots=roots, max_envs=2)
    with served(store, name, ros_env) as b:
        b.urdf = str(folder / "probe.urdf")
        b.mdl = str(folder / "stripes.mdl")
        yield b


@pytest.fixture(scope="module")
def spawned(bridge, probe):
    """The probe spawned into env 1 (empty so far) by Arena's SpawnUrdf, a box 1.5 m
    ahead of it, every listed topic subscribed."""
    reply = probe.call("/mujoco/SpawnUrdf", SRV + "SpawnUrdf", env_id=1, name="env_1/probe",
                       urdf_path=bridge.urdf, robot_model="probe", tf_prefix="probe/",
                       base_frame="base_footprint", pose=pose(0.0, 0.0),
                       sensors=[{"name": k, "type": t, "topic": topic, "frame": frame,
                                 "sensor": sensor}
                                for k, (t, topic, frame, sensor) in TOPICS.items()])
    assert reply == {"path": ROBOT}
    assert probe.call("/mujoco/SpawnPrims", SRV + "SpawnPrims", env_id=1, prims=[
        {"name": "env_1/box", "pose": pose(1.5, 0.0, 0.3),
         "scale": {"x": 0.4, "y": 2.0, "z": 0.6}}]) == {"ret": [True]}
    for kind, topic, _, _ in TOPICS.values():
        assert probe.listen(topic, TYPES[kind]) == 1, f"no publisher of {topic}"
    return reply


def last(probe: Probe, topic: str) -> dict:
    messages = probe.take(topic, 1)
    assert messages, f"nothing on {topic}"
    return messages[-1]


def test_every_listed_sensor_publishes_on_its_own_topic_and_frame(bridge, probe, spawned):
    assert probe.call("/mujoco/Step", SRV + "Step", n=50)["success"]
    front, rear = last(probe, f"{NS}/front/scan"), last(probe, f"{NS}/rear/scan")
    assert (front["header"]["frame_id"], len(front["ranges"])) == ("probe/front_link", 360)
    assert (rear["header"]["frame_id"], len(rear["ranges"])) == ("probe/rear_link", 90)
    for topic, frame in ((f"{NS}/imu", "probe/base_link"), (f"{NS}/mast/imu", "probe/mast")):
        imu = last(probe, topic)
        assert imu["header"]["frame_id"] == frame
        assert imu["linear_acceleration"]["z"] == pytest.approx(9.81, abs=0.3)  # at rest
    cam, aft = last(probe, f"{NS}/cam/image"), last(probe, f"{NS}/aft/image")
    assert (cam["header"]["frame_id"], cam["width"], cam["height"]) == ("probe/cam_link", 32, 24)
    assert (aft["header"]["frame_id"], aft["width"], aft["height"]) == ("probe/aft_link", 16, 12)
    assert last(probe, f"{NS}/cam/info")["width"] == 32
    # the front camera sees the box ahead, the aft one the empty floor behind: the row
    # below the middle (7/12 down) is the box's brown in one, the bright floor in the other
    box = np.asarray(cam["data"], dtype=float).reshape(24, 32, 3)[14].mean()
    floor = np.asarray(aft["data"], dtype=float).reshape(12, 16, 3)[7].mean()
    assert box < 0.7 * floor, (box, floor)
    # our own names stay unpublished: only the listed sensors
    assert probe.publishers(f"{NS}/scan", 0) == 0


def test_our_spawn_urdf_gives_every_sensor_topics_of_its_own(bridge, probe, spawned):
    """Under our names: the first sensor of a kind on the kind's topics, each further one
    under its own name, framed by its own mount."""
    reply = probe.call("/mujoco/spawn_urdf", "arena_gym_interfaces/srv/SpawnUrdf", env_id=1,
                       name="twin", urdf_path=bridge.urdf, x=0.0, y=-3.0, yaw=0.0)
    assert reply["success"], reply["message"]
    ns = "/env_1/twin"
    wanted = {f"{ns}/scan": ("sensor_msgs/msg/LaserScan", "front", 360),
              f"{ns}/rear/scan": ("sensor_msgs/msg/LaserScan", "rear", 90),
              f"{ns}/imu": ("sensor_msgs/msg/Imu", "imu", None),
              f"{ns}/imu_mast/imu": ("sensor_msgs/msg/Imu", "imu_mast", None)}
    for topic, (kind, _, _) in wanted.items():
        assert probe.listen(topic, kind) == 1, f"no publisher of {topic}"
    assert probe.call("/mujoco/Step", SRV + "Step", n=50)["success"]
    for topic, (_, frame, beams) in wanted.items():
        message = last(probe, topic)
        assert message["header"]["frame_id"] == f"env_1/twin/{frame}"
        if beams is not None:
            assert len(message["ranges"]) == beams
    assert probe.publishers(f"{ns}/aft/image_raw", 1) == 1  # the second camera's
    assert probe.call("/mujoco/DeletePrims", SRV + "DeletePrims", env_id=1,
                      names=["twin"]) == {"ret": [True]}


def test_the_contact_sensor_publishes_the_links_contacts(bridge, probe, spawned):
    assert probe.call("/mujoco/Step", SRV + "Step", n=20)["success"]
    message = last(probe, f"{NS}/bumper")
    assert message["header"]["frame_id"] == "probe/base_link"
    [pair] = message["contacts"]  # the base box on the ground, nothing else
    assert pair["collision1"]["name"] == f"env_1/{ROBOT}/base_link"
    assert (pair["collision2"]["name"], pair["collision2"]["type"]) == ("ground", 5)
    assert 1 <= len(pair["positions"]) == len(pair["normals"]) == len(pair["depths"]) <= 8
    for point, normal, depth in zip(pair["positions"], pair["normals"], pair["depths"],
                                    strict=True):
        assert point["z"] == pytest.approx(0.0, abs=0.01)
        assert abs(point["x"]) <= 0.16 and abs(point["y"]) <= 0.16  # under the 0.3 m box
        assert normal["z"] == pytest.approx(1.0)  # into the link's geom
        assert 0.0 <= depth < 0.01
    # lifted off the ground: an empty list
    assert probe.call("/mujoco/EditPrims", SRV + "EditPrims", env_id=1, pose=True, prims=[
        {"name": ROBOT, "pose": pose(0.0, 0.0, 1.0)}]) == {"ret": [True]}
    probe.take(f"{NS}/bumper")
    assert probe.call("/mujoco/Step", SRV + "Step", n=10)["success"]
    assert last(probe, f"{NS}/bumper")["contacts"] == []
    assert probe.call("/mujoco/EditPrims", SRV + "EditPrims", env_id=1, pose=True, prims=[
        {"name": ROBOT, "pose": pose(0.0, 0.0, 0.0)}]) == {"ret": [True]}


def brightness(probe: Probe) -> float:
    probe.take(f"{NS}/cam/image")
    assert probe.call("/mujoco/Step", SRV + "Step", n=20)["success"]
    return float(np.mean(last(probe, f"{NS}/cam/image")["data"]))


def test_a_light_switched_off_and_on_darkens_and_lights_a_robot_camera(bridge, probe, spawned):
    def lights(service: str, **light) -> dict:
        return probe.call(f"/mujoco/{service}", SRV + service, env_id=1, lights=[
            {"name": "sun", **light}])

    assert lights("SpawnLights", shape="distant", intensity=400.0,
                  direction={"x": 0.3, "y": 0.2, "z": -1.0}, level=0.9) == {"ret": [True]}
    lit = brightness(probe)
    assert lights("SetLights", level=0.0) == {"ret": [True]}
    dark = brightness(probe)
    assert lights("SetLights", level=0.9) == {"ret": [True]}
    again = brightness(probe)
    assert lit > 40 and dark < 0.25 * lit  # the table is all the light there is
    assert again == pytest.approx(lit, rel=0.02)
    assert probe.call("/mujoco/DeleteLights", SRV + "DeleteLights", env_id=1,
                      names=["sun"]) == {"ret": [True]}


def test_an_mdl_texture_tiles_a_wall_that_a_robot_camera_sees(bridge, probe, spawned):
    def aft_row() -> np.ndarray:  # the aft camera's middle row, grey levels
        probe.take(f"{NS}/aft/image")
        assert probe.call("/mujoco/Step", SRV + "Step", n=20)["success"]
        image = last(probe, f"{NS}/aft/image")
        rows = np.asarray(image["data"], dtype=float).reshape(image["height"], -1, 3)
        return rows[image["height"] // 2].mean(axis=1)

    def wall(name: str, material: dict) -> dict:  # 1.2 m behind the robot, 4 m wide
        return {"name": name, "start": {"x": -1.2, "y": -2.0, "z": 0.0},
                "end": {"x": -1.2, "y": 2.0, "z": 1.5}, "thickness": 0.1,
                "material": material}

    assert probe.call("/mujoco/SpawnWalls", SRV + "SpawnWalls", env_id=1, walls=[
        wall("env_1/plain", {})]) == {"ret": [True]}
    plain = aft_row()
    assert probe.call("/mujoco/DeletePrims", SRV + "DeletePrims", env_id=1,
                      names=["env_1_plain"]) == {"ret": [True]}
    assert probe.call("/mujoco/SpawnWalls", SRV + "SpawnWalls", env_id=1, walls=[
        wall("env_1/striped", {"path": bridge.mdl, "name": "Stripes"})]) == {"ret": [True]}
    striped = aft_row()
    assert probe.call("/mujoco/DeletePrims", SRV + "DeletePrims", env_id=1,
                      names=["env_1_striped"]) == {"ret": [True]}
    assert plain.min() > 100 and np.ptp(plain) < 60  # one colour across, shaded
    # black and white stripes across the same view
    assert (striped < 30).sum() >= 3 and (striped > 140).sum() >= 3


def quat(roll: float = 0.0, pitch: float = 0.0) -> dict:
    """A pose's orientation rolled about x, then pitched about y (w, x, y, z)."""
    cr, sr, cp, sp = (math.cos(roll / 2), math.sin(roll / 2), math.cos(pitch / 2),
                      math.sin(pitch / 2))
    return {"w": cp * cr, "x": cp * sr, "y": sp * cr, "z": -sp * sr}


def test_a_tilted_pose_tilts_a_prim_and_a_robot(bridge, probe, spawned):
    def on_loop(fn):  # the scenes belong to the bridge's loop thread while it serves
        return bridge.runner.call_soon(fn).result(timeout=60)

    def body(name: str) -> tuple[np.ndarray, np.ndarray]:
        model = on_loop(lambda: bridge.sim.store[1].model)
        found = model.body(f"env_1/{name}")  # bodies of env 1 carry its prefix
        return found.pos.copy(), found.quat.copy()

    ramp = quat(pitch=math.radians(30))
    assert probe.call("/mujoco/SpawnPrims", SRV + "SpawnPrims", env_id=1, prims=[
        {"name": "env_1/ramp", "pose": {"position": {"x": 0.0, "y": 3.0, "z": 0.3},
                                        "orientation": ramp},
         "scale": {"x": 1.0, "y": 0.5, "z": 0.05}}]) == {"ret": [True]}
    pos, q = body("env_1_ramp")
    np.testing.assert_allclose(pos, [0.0, 3.0, 0.3])
    np.testing.assert_allclose(q, [ramp["w"], ramp["x"], ramp["y"], ramp["z"]], atol=1e-9)
    rolled = quat(roll=math.radians(20))
    assert probe.call("/mujoco/EditPrims", SRV + "EditPrims", env_id=1, pose=True, prims=[
        {"name": "env_1_ramp", "pose": {"position": {"x": 0.5, "y": 3.0, "z": 0.4},
                                        "orientation": rolled}}]) == {"ret": [True]}
    pos, q = body("env_1_ramp")
    np.testing.assert_allclose(pos, [0.5, 3.0, 0.4])
    np.testing.assert_allclose(q, [rolled["w"], rolled["x"], rolled["y"], rolled["z"]],
                               atol=1e-9)
    assert probe.call("/mujoco/DeletePrims", SRV + "DeletePrims", env_id=1,
                      names=["env_1_ramp"]) == {"ret": [True]}
    # a robot moved by EditPrims takes the whole quaternion too (its odometry says so)
    odom = f"/{bridge.robot}/odom"
    assert probe.listen(odom, "nav_msgs/msg/Odometry") == 1
    leaning = quat(roll=0.3, pitch=0.2)
    assert probe.call("/mujoco/EditPrims", SRV + "EditPrims", env_id=0, pose=True, prims=[
        {"name": bridge.robot, "pose": {"position": {"x": 0.0, "y": 0.0, "z": 0.5},
                                        "orientation": leaning}}]) == {"ret": [True]}
    probe.take(odom)
    assert probe.call("/mujoco/Step", SRV + "Step", n=1)["success"]
    seen = last(probe, odom)["pose"]["pose"]["orientation"]
    np.testing.assert_allclose([seen[k] for k in "wxyz"], [leaning[k] for k in "wxyz"],
                               atol=1e-3)
    assert probe.call("/mujoco/EditPrims", SRV + "EditPrims", env_id=0, pose=True, prims=[
        {"name": bridge.robot, "pose": pose(0.0, 0.0)}]) == {"ret": [True]}


def test_an_env_beyond_max_envs_fails_naming_the_limit(bridge, probe):
    reply = probe.call("/mujoco/SpawnPrims", SRV + "SpawnPrims", env_id=2, prims=[
        {"name": "box", "pose": pose(1.0, 0.0), "scale": {"x": 0.2, "y": 0.2, "z": 0.2}}])
    assert reply == {"ret": [False]}
    message = ArenaCommands(Commands(bridge.sim, bridge.robot, lambda env: None), {}).run(
        {"op": "arena_reset_world", "env": 2})["message"]
    assert message == ("env_id 2: this bridge has envs 0 .. 1 (at most --max-envs 2); start "
                       "it with --max-envs 3 or more for that env")


def test_max_envs_below_envs_is_refused():
    with pytest.raises(ValueError, match=re.escape(
            "--max-envs: expected at least --envs (2), got 1")):
        build_envs("empty", "builtin", 2, seed=0, max_envs=1)
