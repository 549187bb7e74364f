"""The planar base (scene/planar_base.py): every built-in and shared robot as one rigid body
on slide-x, slide-y and hinge-yaw joints, its chassis colliding and its wheels visual only,
its drive's kinematics (no sideways motion for a differential or skid-steer drive, all
three for a holonomic one) and the velocity limits of its model_params.yaml."""

from __future__ import annotations

import math
import re
import warnings

import mujoco
import numpy as np
import pytest

from arena_gym.config import ConfigError, load_config
from arena_gym.envs.vector_env import ArenaVectorEnv
from arena_gym.scene import SceneStore
from arena_gym.scene.planar_base import JOINTS
from arena_gym.scene.requests import Prim
from arena_gym.sensors import CollisionSpec, SensorSuite
from arena_gym.sim import Simulator
from arena_gym.worlds import builtin_robot_urdf
from tests.conftest import robot_paths
from tests.fixtures.mecanum import mecanum_ridgeback

ROBOTS = ("arena_diffbot", "burger", "jackal", "dingo", "ridgeback", "mecanum")
HOLONOMIC = {"ridgeback", "mecanum"}
DT = 0.01


def _source(assets, robot: str, tmp_path):
    if robot == "arena_diffbot":
        return builtin_robot_urdf(), (), None
    urdf, packages = robot_paths(assets, "ridgeback" if robot == "mecanum" else robot)
    if robot == "mecanum":
        path = tmp_path / "mecanum.urdf"
        path.write_text(mecanum_ridgeback(urdf))
        return path, packages, urdf.parent / "model_params.yaml"
    return urdf, packages, None


def _spawn(assets, robot, tmp_path, base="planar", pose=(0.0, 0.0, 0.0), store=None):
    urdf, packages, params = _source(assets, robot, tmp_path)
    store = store or SceneStore(1, timestep=DT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # meshes a robot names but lacks
        info = store[0].spawn_urdf("r", urdf, pose=pose, package_paths=packages,
                                   model_params=params, base=base)
    return store, info


@pytest.mark.parametrize("robot", ROBOTS)
def test_every_robot_is_one_body_on_three_planar_joints_with_its_chassis_colliding(
        assets, robot, tmp_path):
    store, info = _spawn(assets, robot, tmp_path, pose=(1.5, -0.5, 0.7))
    wheeled_store, wheeled = _spawn(assets, robot, tmp_path, base="wheeled", store=SceneStore(1))
    wheeled_model = wheeled_store[0].model
    model, data = store[0].model, store[0].data
    prefix = info.prefix
    joints = [model.joint(j).name for j in range(model.njnt)
              if model.joint(j).name.startswith(prefix)]
    assert joints == [prefix + j for j in JOINTS]
    assert [int(model.jnt_type[model.joint(j).id]) for j in joints] == [
        mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_HINGE]
    # qpos is the world pose, qpos0 the spawn pose
    adr = model.joint(info.root_joint).qposadr[0]
    np.testing.assert_allclose(model.qpos0[adr:adr + 3], (1.5, -0.5, 0.7), atol=1e-12)
    mujoco.mj_kinematics(model, data)
    root = model.body(info.root_body).id
    np.testing.assert_allclose(data.xpos[root, :2], (1.5, -0.5), atol=1e-12)
    assert 2 * math.atan2(data.xquat[root, 3], data.xquat[root, 0]) == pytest.approx(0.7)
    assert data.xpos[root, 2] == pytest.approx(wheeled.ground_clearance)
    # the chassis collides; no link of a wheel does; every sensor mount is there
    mine = np.array([model.body(int(b)).name.startswith(prefix) for b in model.geom_bodyid])
    colliding = mine & ((model.geom_contype != 0) | (model.geom_conaffinity != 0))
    assert colliding.sum() > 0
    wheel_links = {wheeled_model.body(wheeled_model.jnt_bodyid[wheeled_model.joint(j).id]).name[
        len(wheeled.prefix):] for j in wheeled.wheel_joints}
    assert wheel_links
    for g in np.flatnonzero(colliding):
        assert model.body(int(model.geom_bodyid[g])).name[len(prefix):] not in wheel_links
    assert [m.site for m in info.sensor_mounts] == [
        prefix + m.site[len(wheeled.prefix):] for m in wheeled.sensor_mounts]
    assert info.holonomic == (robot in HOLONOMIC)
    assert (info.drive, info.feet, info.wheel_joints) == ("planar", [], [])


def _heading_frame_steps(sim, twists, steps):
    """Drive `twists(k)` for `steps` physics steps; each step's displacement (forward,
    sideways) in the heading the step started from, and the last velocities."""
    moves = []
    for k in range(steps):
        sim.controller.set_twist(0, "r", twists(k))
        q0 = sim.state(0, "qpos")[:3].copy()
        sim.step(1)
        d = sim.state(0, "qpos")[:2] - q0[:2]
        c, s = math.cos(q0[2]), math.sin(q0[2])
        moves.append((c * d[0] + s * d[1], -s * d[0] + c * d[1]))
    return np.array(moves)


@pytest.mark.parametrize("robot", ["arena_diffbot", "burger", "jackal", "dingo"])
def test_a_differential_or_skid_steer_base_never_moves_sideways(assets, robot, tmp_path):
    store, _ = _spawn(assets, robot, tmp_path, pose=(0.0, 0.0, 0.4))
    sim = Simulator(store)
    moves = _heading_frame_steps(
        sim, lambda k: (0.2 * math.sin(k / 30), 0.0, 2.0 * math.cos(k / 17)), 400)
    assert np.abs(moves[:, 0]).max() > 1e-3  # it drove
    assert np.abs(moves[:, 1]).max() < 1e-6  # m per step: 1e-4 of the forward motion
    with pytest.raises(ValueError, match=re.escape("vy=0.1 but the robot is not holonomic")):
        sim.controller.set_twist(0, "r", (0.0, 0.1, 0.0))


@pytest.mark.parametrize("robot", ["ridgeback", "mecanum"])
def test_a_holonomic_base_follows_all_three_velocities(assets, robot, tmp_path):
    store, info = _spawn(assets, robot, tmp_path, pose=(0.0, 0.0, 1.0))
    sim = Simulator(store)
    for twist in [(0.3, -0.2, 0.0), (0.0, 0.0, 0.5), (-0.1, 0.25, 0.0)]:
        sim.controller.set_twist(0, "r", twist)
        sim.step(100)  # 1 s: a dozen time constants
        q, v = sim.state(0, "qpos")[:3], sim.state(0, "qvel")[:3]
        c, s = math.cos(q[2]), math.sin(q[2])
        np.testing.assert_allclose((c * v[0] + s * v[1], -s * v[0] + c * v[1], v[2]), twist,
                                   atol=1e-3)


def test_commands_are_held_to_the_velocity_limits_of_model_params(tmp_path):
    store, _ = _spawn(None, "arena_diffbot", tmp_path)
    sim = Simulator(store)
    sim.controller.set_twist(0, "r", (5.0, 0.0, -40.0))
    sim.step(100)
    v = sim.state(0, "qvel")[:3]
    assert math.hypot(v[0], v[1]) == pytest.approx(0.22, abs=2e-3)  # linear_range
    assert v[2] == pytest.approx(-2.84, abs=0.03)  # angular_range


def test_the_chassis_collides_with_a_box_and_the_floor_never_counts(tmp_path):
    store = SceneStore(1, timestep=DT)
    store, _ = _spawn(None, "arena_diffbot", tmp_path, store=store)
    store[0].spawn_prims([Prim("box", pose=(0.5, 0.0, 0.2, 0.0), scale=(0.2, 0.6, 0.4))])
    sim = Simulator(store)
    suite = SensorSuite(sim, [CollisionSpec("r", key="hit")], seed=0)
    sim.controller.set_twist(0, "r", (0.2, 0.0, 0.0))
    hits = []
    for _ in range(40):  # 4 s: 0.8 m at 0.2 m/s, the box's face 0.4 m ahead of the centre
        sim.step(10)
        hits.append(bool(suite["hit"].collided[0]))
    first = hits.index(True)
    assert 0 < first < 39
    x = sim.state(0, "qpos")[0]
    assert x < 0.4 - 0.05  # stopped at the face: the radius (0.11 m) short of it, give or take
    suite.close()


def test_the_env_on_the_planar_base_ends_an_episode_on_a_collision():
    env = ArenaVectorEnv(2, base="planar")
    env.reset(seed=3)
    assert env.core.cfg.substeps == 4  # the planar base's 0.025 s step
    for _ in range(300):
        _, _, terminated, _, info = env.step(np.tile([0.22, 0.0], (2, 1)))
        if terminated.any():
            break
    assert "collision" in info["episode_result"]["result"].tolist()
    env.close()


def test_a_base_that_is_neither_is_named():
    with pytest.raises(ConfigError, match=re.escape(
            "base: expected one of ('wheeled', 'planar'), got 'legs'")):
        load_config(None, base="legs")
    assert load_config(None).timestep == 0.025  # the planar base, the default
    assert load_config(None, base="wheeled").timestep == 0.005
    assert load_config(None, base="planar", physics_dt=0.005).substeps == 20


def _drive_sequence(base: str, dt: float) -> np.ndarray:
    store = SceneStore(1, timestep=dt)
    store[0].spawn_urdf("r", builtin_robot_urdf(), base=base)
    sim = Simulator(store)
    sim.step(round(0.2 / dt))
    poses = []
    for twist in [(0.22, 0.0), (0.1, 2.0), (0.0, -2.84), (0.0, 0.0)]:
        sim.controller.set_twist(0, "r", twist)
        sim.step(round(0.5 / dt))
        p, q = store[0].get_pose("r")
        poses.append((p[0], p[1], 2 * math.atan2(q[3], q[0])))
    return np.array(poses)


def test_the_planar_base_drives_where_the_wheeled_base_does():
    """The same twists, 0.5 s each: the planar base's servos lag as the wheel servos do."""
    wheeled = _drive_sequence("wheeled", load_config(None, base="wheeled").timestep)
    planar = _drive_sequence("planar", load_config(None, base="planar").timestep)
    assert np.abs(wheeled[:, :2]).max() > 0.15  # it drove 15 cm and turned
    np.testing.assert_allclose(planar[:, :2], wheeled[:, :2], atol=3e-3)
    np.testing.assert_allclose(planar[:, 2], wheeled[:, 2], atol=0.04)
