"""Holonomic robots: the Ridgeback's force-based planar drive, and mecanum rollers."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from arena_gym.scene import SceneStore, Wall
from arena_gym.sim import Simulator
from tests.conftest import robot_paths
from tests.fixtures.mecanum import mecanum_ridgeback

MOTIONS = {  # command, seconds, expected (dx, dy) in the start frame, expected yaw in degrees
    "forward": ((0.2, 0.0, 0.0), 5.0, (1.0, 0.0), 0.0),
    "sideways": ((0.0, 0.2, 0.0), 5.0, (0.0, 1.0), 0.0),
    "turn": ((0.0, 0.0, 0.5), math.pi, (0.0, 0.0), 90.0),
}


def _yaw(quat) -> float:
    return math.degrees(2 * math.atan2(quat[3], quat[0]))


def _spawn(assets, variant: str, store=None, pose=(0.0, 0.0, 0.0)):
    urdf, packages = robot_paths(assets, "ridgeback")
    store = store or SceneStore(1)
    source = urdf if variant == "planar" else mecanum_ridgeback(urdf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info = store[0].spawn_urdf("rb", source, pose=pose, package_paths=packages,
                                rollers=variant != "no_rollers")
    return store, info


def _drive(store, command, seconds):
    sim = Simulator(store)
    sim.step(250)
    p0, q0 = store[0].get_pose("rb")
    sim.set_cmd_vel(0, "rb", *command)
    sim.step(round(seconds / 0.002))
    sim.set_cmd_vel(0, "rb", 0.0, 0.0, 0.0)
    sim.step(250)
    p1, q1 = store[0].get_pose("rb")
    yaw0 = math.radians(_yaw(q0))
    rot = np.array([[math.cos(yaw0), math.sin(yaw0)], [-math.sin(yaw0), math.cos(yaw0)]])
    return rot @ (p1[:2] - p0[:2]), _yaw(q1) - _yaw(q0)


@pytest.mark.parametrize("variant", ["planar", "mecanum"])
@pytest.mark.parametrize("motion", list(MOTIONS))
def test_ridgeback_follows_each_motion(assets, variant, motion):
    command, seconds, expected, expected_yaw = MOTIONS[motion]
    store, info = _spawn(assets, variant, pose=(0.3, -0.2, 0.4))
    assert info.drive == variant
    moved, turned = _drive(store, command, seconds)
    assert np.linalg.norm(moved - expected) < 0.05
    assert turned == pytest.approx(expected_yaw, abs=5.0)


def test_mecanum_without_rollers_cannot_strafe(assets):
    store, info = _spawn(assets, "no_rollers")
    assert info.drive == "mecanum" and info.roller_joints == []
    moved, _ = _drive(store, (0.0, 0.2, 0.0), 5.0)
    assert abs(moved[1]) < 0.1 * 1.0


def test_planar_ridgeback_is_stopped_by_a_wall(assets):
    store = SceneStore(1)
    store[0].spawn_walls([Wall("wall", start=(1.0, -2.0), end=(1.0, 2.0), height=1.0)])
    store, _ = _spawn(assets, "planar", store=store)
    sim = Simulator(store)
    sim.set_cmd_vel(0, "rb", 0.3, 0.0, 0.0)
    sim.step(5000)  # 10 s: it would go 3 m without the wall
    model, data = store[0].model, store[0].data
    pos, _ = store[0].get_pose("rb")
    base = model.body("env_0/rb/base_link").id
    front = max(data.geom_xpos[g][0] for g in range(model.ngeom)
                if model.geom_bodyid[g] and model.body_rootid[model.geom_bodyid[g]] == base)
    assert pos[0] < 1.0 - 0.3  # the base stays behind the wall (half the robot is ~0.48 m)
    assert front < 1.0
    assert not sim.diverged


def test_rollers_are_passive_and_keep_the_mass(assets):
    with_rollers = _spawn(assets, "mecanum")
    without = _spawn(assets, "no_rollers")
    (store, info), (plain_store, _) = with_rollers, without
    model, plain = store[0].model, plain_store[0].model
    assert len(info.roller_joints) == 4 * 12
    assert set(info.roller_joints).isdisjoint(info.wheel_joints + info.servo_joints)
    assert model.nu == plain.nu == 4 + 2  # 4 wheel servos, rocker position + velocity
    roller_ids = {model.joint(j).id for j in info.roller_joints}
    assert roller_ids.isdisjoint(model.actuator_trnid[:, 0].tolist())
    root = model.body("env_0/rb/base_link").id
    plain_root = plain.body("env_0/rb/base_link").id
    mass, plain_mass = model.body_subtreemass[root], plain.body_subtreemass[plain_root]
    assert mass == pytest.approx(plain_mass, rel=0.01)
    wheel = model.body("env_0/rb/front_left_wheel_link")
    assert wheel.mass[0] == pytest.approx(0.75 * 2.3)


def test_diff_drive_robots_are_untouched(assets):
    urdf, packages = robot_paths(assets, "jackal")
    store = SceneStore(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info = store[0].spawn_urdf("jackal", urdf, package_paths=packages)
    assert info.drive == "wheels" and not info.roller_joints and not info.planar_actuators
    drive = Simulator(store).controller.drive(0, "jackal")
    assert not drive.holonomic
