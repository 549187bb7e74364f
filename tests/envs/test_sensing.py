"""The env senses through its SensorSuite: obs["scan"] is the robot's lidar reading (REP 117
mapped to the observation range), the env's collision is the sensors' collision."""

from __future__ import annotations

import re
import shutil

import mujoco
import numpy as np
import pytest

from arena_gym.config import EnvConfig, ScanConfig
from arena_gym.envs.core import NavigationCore
from arena_gym.sensors.contact import colliding
from arena_gym.sensors.units import robot_geoms
from arena_gym.tasks.sampling import Episode
from arena_gym.worlds import builtin_robot_urdf

LASER_BLOCK = re.compile(r'<gazebo reference="base_scan">.*?</gazebo>', re.DOTALL)


def _mapped(core: NavigationCore) -> np.ndarray:
    ranges = core.sensor_suite["scan"].ranges.astype(np.float64)
    ranges = np.where(ranges == np.inf, core.max_range, np.where(ranges == -np.inf, 0.0, ranges))
    return (ranges / core.max_range).astype(np.float32)


def _lidar_origin_z(core: NavigationCore, env: int = 0) -> float:
    unit = next(u for u in core.sensor_suite.units.values() if u.kind == "lidar")
    origins, _ = unit.rays(core.sensor_suite.frames, np.array([env]))
    return float(origins[0, 2])


def _check_scan(core: NavigationCore) -> None:
    core.reset_envs(list(range(core.n)))
    for _ in range(6):
        obs = core.observe()
        ranges = core.scan_ranges()
        np.testing.assert_array_equal(obs["scan"], _mapped(core))
        # the clearance's source: the nearest range less the robot's radius
        np.testing.assert_allclose(core.task.outputs.clearance,
                                   ranges.min(axis=1) - core.params.radius, rtol=0, atol=1e-12)
        assert obs["scan"].shape[1:] == core.observation_space["scan"].shape
        hits = np.isfinite(core.sensor_suite["scan"].ranges)
        assert hits.sum() > 50  # walls and boxes in range: the comparison is not all max range
        np.testing.assert_array_equal(ranges[hits], core.sensor_suite["scan"].ranges[hits])
        core.step(np.tile([0.2, 0.5], (core.n, 1)), np.ones(core.n, bool))


def test_scan_is_the_declared_lidar_of_the_default_robot_mapped():
    core = NavigationCore(2, EnvConfig())
    reading = core.sensor_suite["scan"]
    mount = next(m for m in core.robot.sensor_mounts if m.kind == "lidar")
    assert (mount.source, mount.name) == ("urdf", "laser")
    assert (reading.ranges.shape, reading.range_min, reading.range_max) == ((2, 90), 0.12, 3.5)
    _check_scan(core)
    # the scan plane: base_scan, 0.170 m above the ground (the URDF's comment)
    assert _lidar_origin_z(core) == pytest.approx(0.170, abs=2e-3)
    core.close()


def test_scan_of_a_robot_whose_lidar_only_model_params_declares(tmp_path):
    source = builtin_robot_urdf()
    text, found = LASER_BLOCK.subn("", source.read_text())
    assert found == 1 and 'type="ray"' not in text
    urdf = tmp_path / "nolaser.urdf"
    urdf.write_text(text)
    shutil.copy(source.parent / "model_params.yaml", tmp_path / "model_params.yaml")
    scan = ScanConfig(num_beams=180, max_range=3.0)
    core = NavigationCore(2, EnvConfig(robot=str(urdf), scan=scan))
    mount = next(m for m in core.robot.sensor_mounts if m.kind == "lidar")
    assert mount.source == "model_params" and mount.body.endswith("/base_scan")
    reading = core.sensor_suite["scan"]
    assert reading.ranges.shape == (2, 180) and reading.range_max == 3.0
    assert reading.angle_min == 0.0  # a full ring stays a full ring at 180 beams
    assert reading.angle_increment == pytest.approx(2 * np.pi / 180)
    _check_scan(core)
    assert _lidar_origin_z(core) == pytest.approx(0.170, abs=2e-3)  # the laser link, not z = 0
    core.close()


def _wall_face(core: NavigationCore) -> float:
    return core.layout.half_inner


def _front(core: NavigationCore) -> float:
    """How far the robot's collision geoms reach ahead of its base (x), at rest."""
    model = core.store[0].model
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    root = model.body(core.robot.root_body).id
    geoms = np.flatnonzero(robot_geoms(model, root) & colliding(model))
    rot = data.geom_xmat[geoms].reshape(-1, 3, 3)[:, 0]  # each geom frame's x row
    centre, half = model.geom_aabb[geoms, :3], model.geom_aabb[geoms, 3:]
    reach = data.geom_xpos[geoms, 0] + (rot * centre).sum(1) + (np.abs(rot) * half).sum(1)
    return float(max(reach) - data.xpos[root, 0])


def _start(core: NavigationCore, x: float) -> None:
    core.reset_envs([0])
    core.task._place(0, Episode((x, 0.0, 0.0), (-2.0, 0.0), np.zeros((0, 4))))
    core.sensor_suite.reset([0])
    core.task.read_poses()


def test_a_robot_driven_into_a_wall_collides_with_the_class_wall():
    core = NavigationCore(1, EnvConfig())
    core.reset_envs([0])
    front = _front(core)
    _start(core, _wall_face(core) - front - 0.3)
    for _ in range(40):
        terminated = core.step(np.array([[0.22, 0.0]]), np.ones(1, bool)).terminated
        collision = core.sensor_suite["collision"]
        assert terminated[0] == collision.collided[0]
        if terminated[0]:
            break
    assert terminated[0] and collision.classes[0] == "wall"
    assert core.task.pose[0, 0] + front > _wall_face(core) - 0.01  # it did reach the wall
    core.close()


def test_the_default_robot_started_2_5_cm_inside_a_wall_collides_in_the_first_step():
    core = NavigationCore(1, EnvConfig())
    core.reset_envs([0])
    _start(core, _wall_face(core) - _front(core) + 0.025)
    terminated = core.step(np.array([[0.0, 0.0]]), np.ones(1, bool)).terminated
    assert terminated[0] and core.sensor_suite["collision"].classes[0] == "wall"
    # the wall pushes it out within 0.2 s (the planar base's contacts are as soft as MuJoCo
    # makes them at its 0.025 s step): then nothing touches any more
    core.step(np.array([[0.0, 0.0]]), np.ones(1, bool))
    assert core.task.pose[0, 0] + _front(core) <= _wall_face(core) - 1e-3
    core.close()


def test_info_names_what_a_collision_hit_single_and_vector():
    from arena_gym.envs.single_env import ArenaEnv
    from arena_gym.envs.vector_env import ArenaVectorEnv

    env = ArenaEnv()
    env.reset(seed=0)
    core = env.core
    _start(core, _wall_face(core) - _front(core) + 0.025)
    _, _, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert terminated and info["collision"] == "wall" and info["episode_result"]["hit"] == "wall"
    assert info["episode_result"]["result"] == "collision"
    env.close()

    envs = ArenaVectorEnv(2)
    envs.reset(seed=0)
    _start(envs.core, _wall_face(envs.core) - _front(envs.core) + 0.025)
    _, _, terminated, _, info = envs.step(np.zeros((2, 2), np.float32))
    assert list(terminated) == [True, False]
    assert list(info["_collision"]) == [True, False] and info["collision"][0] == "wall"
    assert info["episode_result"]["hit"][0] == "wall"
    envs.close()
