"""IMU at rest, contacts in free space and against a wall, the collision flag, odometry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena_gym.scene import SceneStore, Wall
from arena_gym.sensors import (
    CollisionSpec,
    ContactSpec,
    ImuSpec,
    OdometrySpec,
    SensorSuite,
)
from arena_gym.sim import Simulator
from arena_gym.worlds.default import builtin_robot_urdf
from tests.sensors.worlds import HALF, imu_block, probe_urdf

WALL_FACE = 0.6


def _probe_by_a_wall(num_envs=1):
    store = SceneStore(num_envs)
    for env in range(num_envs):
        # the probe's box 5 mm from the wall
        store[env].spawn_urdf("probe", probe_urdf(imu_block()),
                         pose=(WALL_FACE - HALF - 0.005, 0.0, 0.0))
        store[env].spawn_walls([Wall("wall", (WALL_FACE + 0.05, -2), (WALL_FACE + 0.05, 2), 1.0)])
    return store


def test_imu_at_rest_reads_gravity_up_and_no_rotation():
    store = SceneStore(1)
    store[0].spawn_urdf("probe", probe_urdf(imu_block()), pose=(1.0, 2.0, 0.7))
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[ImuSpec("probe")])
    sim.step(250)
    imu = suite["probe/imu"]
    np.testing.assert_allclose(imu.linear_acceleration[0], [0.0, 0.0, 9.81], atol=1e-3)
    np.testing.assert_allclose(imu.angular_velocity[0], [0.0, 0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(imu.orientation[0], [math.cos(0.35), 0, 0, math.sin(0.35)],
                               atol=1e-4)


def test_contacts_are_empty_in_free_space_and_point_into_the_link_against_a_wall():
    store = _probe_by_a_wall(num_envs=2)
    sim = Simulator(store)
    suite = SensorSuite(sim, specs=[ContactSpec("probe", link="base_link"),
                                    ContactSpec("probe", link="mast")])
    sim.step(50)
    base, mast = suite["probe/contact/base_link"], suite["probe/contact/mast"]
    assert mast.valid.all() and list(mast.num) == [0, 0] and mast.contacts(0) == []
    floor = base.contacts(0)  # resting: the box touches only the floor
    assert floor and all(c.other == "ground" for c in floor)
    for c in floor:
        np.testing.assert_allclose(c.normal, [0, 0, 1], atol=1e-6)  # into the box: up
    body = store[1].model.body("env_1/probe/base_link").id  # (a read: before the state view)
    sim.state(1, "xfrc_applied")[body, 0] = 40.0  # push env 1 east
    sim.step(250)
    assert base.num[0] == len(floor)  # env 0 untouched
    pushed = [c for c in base.contacts(1) if c.other == "env_1/wall/geom"]
    assert pushed, base.contacts(1)
    for c in pushed:
        np.testing.assert_allclose(c.normal, [-1, 0, 0], atol=1e-3)  # from the wall into the box
        assert c.position[0] == pytest.approx(WALL_FACE, abs=2e-3)
        assert 0 < c.depth < 2e-3
    assert base.depth[1, 0] == max(c.depth for c in base.contacts(1))  # deepest first
    assert mast.num[1] == 0


def _diffbot(pose=(0.0, 0.0, 0.0), walls=()):
    store = SceneStore(1)
    store[0].spawn_urdf("bot", builtin_robot_urdf(), pose=pose)
    if walls:
        store[0].spawn_walls(list(walls))
    sim = Simulator(store)
    return store, sim, SensorSuite(sim, specs=[CollisionSpec("bot"), OdometrySpec("bot")])


def test_collision_flag_ignores_wheels_and_casters_on_the_floor_but_not_a_wall():
    _, sim, suite = _diffbot(walls=[Wall("wall", (0.65, -2), (0.65, 2), 0.5)])
    flag = suite["bot/collision"]
    sim.step(100)
    assert flag.valid.all() and not flag.collided[0] and flag.contacts[0] == 0
    sim.set_cmd_vel(0, "bot", 0.2, 0.0)
    hit_at = None
    for tick in range(200):
        sim.step(10)
        if flag.collided[0]:
            hit_at = tick
            break
    assert hit_at is not None
    x = suite["bot/odom"].position[0, 0]
    assert x + 0.075 == pytest.approx(0.6, abs=0.01)  # the chassis (r 0.075) meets the wall


def test_collision_flag_counts_a_chassis_on_the_floor():
    _, sim, suite = _diffbot()
    qpos = sim.state(0, "qpos")
    qpos[2] = 0.3
    qpos[3:7] = [0.0, 1.0, 0.0, 0.0]  # upside down, 30 cm up: it falls onto its top
    sim.step(500)
    assert suite["bot/collision"].collided[0]


def test_odometry_pose_and_twist_in_the_base_frame():
    store, sim, suite = _diffbot(pose=(1.0, -0.5, math.pi / 2))
    sim.set_cmd_vel(0, "bot", 0.2, 0.0)
    sim.step(500)
    odom = suite["bot/odom"]
    position, quat = store[0].get_pose("bot")
    np.testing.assert_allclose(odom.position[0], position, atol=1e-12)
    np.testing.assert_allclose(odom.orientation[0], quat, atol=1e-12)
    assert position[1] > -0.4  # it drove along +y
    np.testing.assert_allclose(odom.linear_velocity[0], [0.2, 0.0, 0.0], atol=5e-3)  # forward
    sim.set_cmd_vel(0, "bot", 0.0, 1.0)
    sim.step(250)
    np.testing.assert_allclose(odom.angular_velocity[0], [0.0, 0.0, 1.0], atol=0.05)
    np.testing.assert_allclose(odom.linear_velocity[0], [0.0, 0.0, 0.0], atol=5e-3)
    assert odom.stamp[0] == pytest.approx(sim.clock)


def test_a_declared_contact_sensor_is_read_by_default():
    bumper = ('<gazebo reference="base_link"><sensor name="bumper" type="contact"><contact>'
              "<collision>base_link_collision</collision></contact></sensor></gazebo>")
    store = SceneStore(1)
    info = store[0].spawn_urdf("probe", probe_urdf(bumper))
    mount = info.sensor_mounts[0]
    assert (mount.kind, mount.name, mount.body) == ("contact", "bumper", "env_0/probe/base_link")
    sim = Simulator(store)
    suite = SensorSuite(sim)
    assert "probe/bumper" in suite
    sim.step(10)
    contacts = suite["probe/bumper"].contacts(0)
    assert len(contacts) == 4 and {c.other for c in contacts} == {"ground"}  # the box's corners
