"""Mounting: sensors from URDF declarations (then model_params.yaml, then a default ring),
at the declared pose on the declared link, with per-robot names."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest

from arena_gym.geometry import groups
from arena_gym.scene import SceneStore, SpawnError
from arena_gym.scene.sensor_mounts import DEFAULT_RING, mount_imu_sensors
from arena_gym.sensors import ImuSpec, LidarSpec, SensorSuite
from arena_gym.sim import Simulator
from tests.conftest import robot_paths, spawn
from tests.sensors.worlds import SCAN_HEIGHT, camera_block, imu_block, lidar_block, probe_urdf


def _rpy_matrix(r: float, p: float, y: float) -> np.ndarray:
    cr, sr = math.cos(r), math.sin(r)
    cp, sp = math.cos(p), math.sin(p)
    cy, sy = math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _link_in_root(urdf_path, link: str) -> np.ndarray:
    """Position of `link` in the URDF's root link frame, composed from the joint origins."""
    joints = {j.find("child").get("link"): j
              for j in ET.parse(urdf_path).getroot().findall("joint")}
    pos = np.zeros(3)
    while link in joints:
        origin = joints[link].find("origin")
        attrs = origin.attrib if origin is not None else {}
        xyz = [float(v) for v in attrs.get("xyz", "0 0 0").split()]
        rpy = [float(v) for v in attrs.get("rpy", "0 0 0").split()]
        pos = np.array(xyz) + _rpy_matrix(*rpy) @ pos
        link = joints[link].find("parent").get("link")
    return pos


@pytest.mark.parametrize("robot, beams, angles, ranges, link", [
    ("burger", 360, (0.0, 6.28319), (0.12, 3.5), "base_scan"),
    ("jackal", 720, (-2.35619, 2.35619), (0.1, 30.0), "front_laser"),
])
def test_real_robots_get_their_lidar_exactly_as_the_urdf_declares(assets, robot, beams, angles,
                                                                  ranges, link):
    store = SceneStore(1)
    info = spawn(store, 0, assets, robot)
    (mount,) = [m for m in info.sensor_mounts if m.kind == "lidar"]
    assert (mount.source, mount.body) == ("urdf", f"env_0/{robot}/{link}")
    model, data = store[0].model, store[0].data
    urdf, _ = robot_paths(assets, robot)
    height = info.ground_clearance + _link_in_root(urdf, link)[2]
    assert data.site_xpos[model.site(mount.site).id][2] == pytest.approx(height, abs=1e-9)
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[LidarSpec(robot)])
    sim.step(10)
    reading = suite[f"{robot}/lidar"]
    assert reading.ranges.shape == (1, beams)
    assert (reading.angle_min, reading.angle_max) == angles
    assert reading.angle_increment == pytest.approx((angles[1] - angles[0]) / (beams - 1))
    assert (reading.range_min, reading.range_max) == ranges
    assert reading.period == pytest.approx(1 / 50)  # both declare 50 Hz
    assert np.all(reading.ranges[0] == np.inf)  # an empty world; the carrier is not seen


def test_burger_sensor_elements_are_named_after_the_root_body(assets):
    store = SceneStore(1)
    info = spawn(store, 0, assets, "burger")
    stem = "env_0/burger/base_footprint_sensor_"
    assert [(m.kind, m.name, m.site) for m in info.sensor_mounts] == [
        ("imu", "imu", stem + "imu_site"),
        ("lidar", "lds_lfcd_sensor", stem + "lds_lfcd_sensor_site"),
    ]
    assert info.sensor_mounts[0].sensors == (stem + "imu_quat", stem + "imu_gyro",
                                             stem + "imu_accel")
    model = store[0].model
    dims = [model.sensor(s).dim[0] for s in info.sensor_mounts[0].sensors]
    assert dims == [4, 3, 3]
    assert [s.kind for s in info.sensors] == ["imu", "ray"]  # the declarations are untouched


def test_two_robots_keep_their_own_sensors_and_repeated_names_get_suffixes():
    urdf = probe_urdf(lidar_block(name="laser"), lidar_block(name="laser", samples=90),
                      lidar_block(name="laser", samples=45), imu_block(name="laser"))
    store = SceneStore(1)
    a = store[0].spawn_urdf("a", urdf)
    b = store[0].spawn_urdf("b", urdf, pose=(2.0, 0.0, 0.0))
    assert [(m.kind, m.name) for m in a.sensor_mounts] == [
        ("lidar", "laser"), ("lidar", "laser_1"), ("lidar", "laser_2"), ("imu", "laser_3")]
    sites = [m.site for m in a.sensor_mounts + b.sensor_mounts]
    assert sites[:2] == ["env_0/a/base_footprint_sensor_laser_site",
                         "env_0/a/base_footprint_sensor_laser_1_site"]
    assert len(set(sites)) == 8
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[LidarSpec("a", "laser_2"), LidarSpec("b", "laser_1")])
    sim.step(10)
    assert suite["a/laser_2"].ranges.shape == (1, 45)
    assert suite["b/laser_1"].ranges.shape == (1, 90)


def test_mount_pose_and_joint_reference():
    """A reference naming a joint mounts on its child link; the pose is relative to it."""
    urdf = probe_urdf(lidar_block(pose="0.05 0.02 0.03 0 0 0.5", reference="scan_joint"))
    store = SceneStore(1)
    info = store[0].spawn_urdf("probe", urdf, pose=(1.0, 2.0, 0.0))
    (mount,) = info.sensor_mounts
    assert mount.body == "env_0/probe/scan_link"
    model, data = store[0].model, store[0].data
    site = model.site(mount.site).id
    np.testing.assert_allclose(data.site_xpos[site], [1.05, 2.02, SCAN_HEIGHT + 0.03], atol=1e-9)
    x_axis = data.site_xmat[site].reshape(3, 3)[:, 0]
    np.testing.assert_allclose(x_axis, [math.cos(0.5), math.sin(0.5), 0.0], atol=1e-9)


def test_a_camera_looks_along_x_of_its_mount_with_z_up():
    urdf = probe_urdf(camera_block(pose="0 0 0.1 0 0 1.0", width=80, height=40, hfov=1.2))
    store = SceneStore(1)
    info = store[0].spawn_urdf("probe", urdf)
    mount = info.sensor_mounts[0]
    assert (mount.kind, mount.name) == ("camera", "cam")
    model, data = store[0].model, store[0].data
    cam = model.camera(mount.camera)
    rot = data.cam_xmat[cam.id].reshape(3, 3)
    np.testing.assert_allclose(-rot[:, 2], [math.cos(1.0), math.sin(1.0), 0.0], atol=1e-9)  # view
    np.testing.assert_allclose(rot[:, 1], [0.0, 0.0, 1.0], atol=1e-9)  # image up
    assert cam.fovy[0] == pytest.approx(math.degrees(2 * math.atan(math.tan(0.6) * 40 / 80)))
    assert list(model.cam_resolution[cam.id]) == [80, 40]


def test_collision_geoms_are_filed_for_sensors(assets):
    store = SceneStore(1)
    spawn(store, 0, assets, "burger")
    model = store[0].model
    robot = [g for g in range(model.ngeom) if model.geom(g).name != "ground"]
    colliding = [g for g in robot if model.geom_contype[g] or model.geom_conaffinity[g]]
    assert colliding and all(model.geom_group[g] == groups.GROUP_ROBOT for g in colliding)
    assert all(model.geom_group[g] == groups.GROUP_VISUAL for g in robot if g not in colliding)


_NO_LIDAR = probe_urdf(imu_block())


def test_model_params_laser_block_backs_a_missing_lidar(tmp_path):
    (tmp_path / "probe.urdf").write_text(_NO_LIDAR)
    (tmp_path / "model_params.yaml").write_text(
        "/**:\n  ros__parameters:\n    robot_sensor_frame: scan_link\n    laser:\n"
        "      num_beams: 90\n      range: 6.0\n      update_rate: 20\n"
        "      angle: {min: -1.5, max: 1.5, increment: 0.03}\n")
    store = SceneStore(1)
    info = store[0].spawn_urdf("probe", tmp_path / "probe.urdf")  # found next to the URDF
    mount = info.sensor_mounts[-1]
    assert (mount.kind, mount.name, mount.source, mount.body) == (
        "lidar", "laser", "model_params", "env_0/probe/scan_link")
    decl = mount.decl
    assert (decl.samples, decl.min_angle, decl.max_range, decl.update_rate) == (90, -1.5, 6.0, 20.0)
    assert decl.max_angle == pytest.approx(-1.5 + 89 * 0.03)  # Arena: num_beams steps of increment


def test_default_ring_when_nothing_declares_a_lidar():
    store = SceneStore(1)
    info = store[0].spawn_urdf("probe", _NO_LIDAR)
    mount = info.sensor_mounts[-1]
    assert (mount.kind, mount.source, mount.body) == ("lidar", "default",
                                                      "env_0/probe/base_footprint")
    assert (mount.decl.samples, mount.decl.max_range) == (DEFAULT_RING.samples,
                                                          DEFAULT_RING.max_range)
    model, data = store[0].model, store[0].data
    # at the centre of the collision box: the probe is 0.4 m tall, its mast reaches 0.5 m
    assert data.site_xpos[model.site(mount.site).id][2] == pytest.approx(0.25, abs=1e-9)


def test_bad_model_params_are_rejected_with_the_file_named(tmp_path):
    store = SceneStore(1)
    missing = tmp_path / "nope.yaml"
    with pytest.raises(SpawnError, match=re.escape(
            f"model_params: expected a readable YAML file, got {str(missing)!r}")):
        store[0].spawn_urdf("probe", _NO_LIDAR, model_params=missing)
    bad = tmp_path / "bad.yaml"
    bad.write_text("laser: {num_beams: 0, range: 3}\n")
    with pytest.raises(SpawnError, match=re.escape(
            f"model_params {str(bad)!r}: laser: expected num_beams >= 1 and range > 0, "
            "got 0 and 3.0")):
        store[0].spawn_urdf("probe", _NO_LIDAR, model_params=bad)
    assert list(store[0].entities) == []


def test_deleting_a_robot_removes_its_sensor_elements():
    store = SceneStore(1)
    store[0].spawn_urdf("probe", probe_urdf(lidar_block(), imu_block()))
    store[0].delete(["probe"])
    model = store[0].model
    assert (model.nsite, model.nsensor) == (0, 0)
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE,
                             "env_0/probe/base_footprint_sensor_laser_site") == -1


def test_an_imu_spawned_without_its_sensors_gets_them_once_asked_and_reads_gravity():
    store = SceneStore(1)
    info = store[0].spawn_urdf("bot", probe_urdf(imu_block(name="imu")), imu=False)
    mount = info.sensor_mounts[0]
    stem = "env_0/bot/base_footprint_sensor_imu_"
    assert (mount.kind, mount.sensors) == ("imu", (stem + "quat", stem + "gyro", stem + "accel"))
    names = [store[0].model.sensor(i).name for i in range(store[0].model.nsensor)]
    assert not [n for n in names if n.startswith(stem)]
    suite = SensorSuite(Simulator(store), specs=[])
    reading = suite.add(ImuSpec("bot"))  # binds, adds the sensors, binds again
    model = store[0].model
    assert [int(model.sensor(s).dim[0]) for s in mount.sensors] == [4, 3, 3]
    assert mount_imu_sensors(store[0], info.sensor_mounts) is False  # there already
    suite.sim.step(1000)  # 2 s: settled on its wheels
    suite.update()
    assert reading.linear_acceleration[0, 2] == pytest.approx(9.81, abs=0.05)
