"""The real robots of ../shared/assets spawn, drive, and keep the sensors their URDF declares."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from arena_gym.scene import SceneStore
from arena_gym.sim import Simulator
from tests.conftest import DIFF_DRIVE, ROBOTS, robot_paths, spawn


def _declared_rays(urdf_path):
    """(link, samples, min, max range) of every ray sensor, read straight from the URDF."""
    root = ET.parse(urdf_path).getroot()
    out = []
    for block in root.findall("gazebo"):
        for sensor in block.findall("sensor"):
            if sensor.get("type") == "ray":
                out.append((
                    block.get("reference"),
                    int(sensor.find("ray/scan/horizontal/samples").text),
                    float(sensor.find("ray/range/min").text),
                    float(sensor.find("ray/range/max").text),
                ))
    return out


@pytest.mark.parametrize("robot", ROBOTS)
def test_robot_spawns_and_rests_on_the_ground(assets, robot):
    store = SceneStore(1)
    info = spawn(store, 0, assets, robot, pose=(1.0, -2.0, math.pi / 2))
    assert info.root_body.startswith(f"env_0/{robot}/")
    assert info.wheel_joints, "every robot here has wheels"
    sim = Simulator(store)
    sim.step(1000)  # 2 s at rest
    pos, quat = store[0].get_pose(robot)
    assert abs(pos[0] - 1.0) < 0.01 and abs(pos[1] + 2.0) < 0.01
    yaw = 2 * math.atan2(quat[3], quat[0])
    assert abs(math.degrees(yaw) - 90.0) < 1.0
    assert 0.0 <= pos[2] < 0.2  # resting near the ground, not sunk nor thrown
    assert not sim.diverged


@pytest.mark.parametrize("robot", ROBOTS)
def test_sensor_list_matches_the_urdf(assets, robot):
    store = SceneStore(1)
    info = spawn(store, 0, assets, robot)
    urdf, _ = robot_paths(assets, robot)
    declared = _declared_rays(urdf)
    rays = [(s.link, s.samples, s.min_range, s.max_range) for s in info.sensors if s.is_ray]
    assert rays == declared
    assert len(rays) == 1


def test_burger_laser_declaration_in_detail(assets):
    store = SceneStore(1)
    info = spawn(store, 0, assets, "burger")
    (laser,) = [s for s in info.sensors if s.is_ray]
    assert laser.name == "lds_lfcd_sensor"
    assert laser.link == "base_scan"
    assert laser.samples == 360
    assert (laser.min_angle, laser.max_angle) == (0.0, 6.28319)
    assert (laser.min_range, laser.max_range) == (0.12, 3.5)
    assert laser.update_rate == 50.0
    assert laser.pose == (0.0,) * 6
    # the mount: base_scan sits 0.172 m above base_link, which is 0.010 m above the footprint
    model, data = store[0].model, store[0].data
    z = data.xpos[model.body("env_0/burger/base_scan").id][2] - data.xpos[
        model.body("env_0/burger/base_footprint").id][2]
    assert z == pytest.approx(0.182, abs=1e-6)
    assert [s.kind for s in info.sensors] == ["imu", "ray"]


def test_jackal_laser_is_front_laser_with_720_beams(assets):
    store = SceneStore(1)
    info = spawn(store, 0, assets, "jackal")
    (laser,) = [s for s in info.sensors if s.is_ray]
    assert (laser.link, laser.samples, laser.max_range) == ("front_laser", 720, 30.0)
    assert (laser.min_angle, laser.max_angle) == (-2.35619, 2.35619)


@pytest.mark.parametrize("robot", DIFF_DRIVE)
def test_diff_drive_goes_one_metre_forward(assets, robot):
    store = SceneStore(1)
    spawn(store, 0, assets, robot, pose=(0.5, 0.5, math.radians(30)))
    sim = Simulator(store)
    sim.step(250)
    start, _ = store[0].get_pose(robot)
    sim.set_cmd_vel(0, robot, 0.2, 0.0)
    sim.step(2500)  # 5 s at 0.2 m/s
    sim.set_cmd_vel(0, robot, 0.0, 0.0)
    sim.step(250)
    end, quat = store[0].get_pose(robot)
    expected = start[:2] + 1.0 * np.array([math.cos(math.radians(30)), math.sin(math.radians(30))])
    assert np.linalg.norm(end[:2] - expected) < 0.05
    yaw = math.degrees(2 * math.atan2(quat[3], quat[0]))
    assert abs(yaw - 30.0) < 5.0


def test_wheel_drive_geometry_comes_from_the_model(assets):
    store = SceneStore(1)
    spawn(store, 0, assets, "burger")
    drive = Simulator(store).controller.drive(0, "burger")
    assert drive.radius == pytest.approx(0.033)
    assert drive.separation == pytest.approx(0.160)
