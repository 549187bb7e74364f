"""Drives honour cmd_vel: figures of every robot, the skid steer's yaw loop, the batched
control path, and the wheel declarations a drive cannot use."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from arena_gym.scene import SceneStore, SpawnError
from arena_gym.sim import Simulator
from arena_gym.sim.drive import YAW_INTEGRAL_LIMIT, _spans_plane
from tests.conftest import assert_same, robot_paths, snapshot, spawn
from tests.fixtures.drives import measure
from tests.fixtures.mecanum import mecanum_ridgeback

DIFFBOT = (Path(__file__).resolve().parents[2]
           / "arena_gym/assets/robots/arena_diffbot/arena_diffbot.urdf")
HOLONOMIC = {"ridgeback"}
# degrees a 90 degree turn may miss by. The Dingo, an open-loop differential drive whose
# casters drag, turns 83-87 degrees (see docs/robots.md).
TURN_TOLERANCE = {"dingo": 8.0}
# metres the turning centre may wander in a 90 degree turn in place. The Jackal's four
# scrubbing wheels walk it sideways ~0.1 m, with the yaw loop or without.
DRIFT_TOLERANCE = {"jackal": 0.12}


def _paths(assets: Path, robot: str) -> tuple[Path, list[Path]]:
    return (DIFFBOT, []) if robot == "arena_diffbot" else robot_paths(assets, robot)


@pytest.mark.parametrize("robot", ["arena_diffbot", "burger", "jackal", "dingo", "ridgeback"])
def test_every_robot_drives_its_figures(assets, robot):
    urdf, packages = _paths(assets, robot)
    figures = {f.motion.name: f for f in measure(urdf, packages, robot in HOLONOMIC)}
    forward = figures.pop("forward 1 m")
    assert np.linalg.norm(forward.moved - [1.0, 0.0]) < 0.01
    assert abs(forward.turned) < 0.5
    if robot in HOLONOMIC:
        sideways = figures.pop("sideways 1 m")
        assert np.linalg.norm(sideways.moved - [0.0, 1.0]) < 0.01
        assert abs(sideways.turned) < 0.5
    assert len(figures) == 3  # 0.5, 1 and 1.5 rad/s
    for turn in figures.values():
        assert turn.turned == pytest.approx(90.0, abs=TURN_TOLERANCE.get(robot, 2.0))
        assert np.linalg.norm(turn.moved) < DRIFT_TOLERANCE.get(robot, 0.015)


def test_skid_steer_reaches_the_commanded_yaw_rate(assets):
    """The Jackal turned 20 degrees for a commanded 90 before its yaw loop."""
    urdf, packages = robot_paths(assets, "jackal")
    for turn in measure(urdf, packages, holonomic=False)[1:]:
        commanded = turn.motion.twist[2]
        assert turn.rate == pytest.approx(commanded, rel=0.15)
        assert turn.turned == pytest.approx(90.0, abs=2.0)


def test_skid_steer_uses_the_declared_multiplier_and_diff_drives_stay_open_loop(assets):
    store = SceneStore(2)
    jackal = spawn(store, 0, assets, "jackal")
    spawn(store, 1, assets, "burger")
    sim = Simulator(store)
    assert jackal.separation_multiplier == 1.5  # jackal_control/config/control.yaml
    loop = sim.controller.drive(0, "jackal").yaw_loop
    assert loop is not None and loop.multiplier == 1.5
    assert sim.controller.drive(1, "burger").yaw_loop is None


def _jackal_run(assets, envs: int, other: tuple[float, float]) -> np.ndarray:
    store = SceneStore(envs)
    for env in range(envs):
        spawn(store, env, assets, "jackal")
    sim = Simulator(store)
    sim.set_cmd_vel(0, "jackal", 0.3, 1.0)
    for env in range(1, envs):
        sim.set_cmd_vel(env, "jackal", *other)
    sim.step(500)
    sim.reset_envs([0])  # the loop starts over with the episode
    sim.step(300)
    return store[0].data.qpos.copy()


def test_yaw_loop_is_deterministic_single_or_batched(assets):
    single = _jackal_run(assets, 1, (0.0, 0.0))
    batched = _jackal_run(assets, 3, (-0.2, 1.5))
    assert np.array_equal(single, batched)
    assert np.linalg.norm(single[:2]) > 0.05  # it moved (0.08 m)


def test_yaw_loop_does_not_wind_up_against_a_wall(assets):
    store = SceneStore(1)
    spawn(store, 0, assets, "jackal")
    sim = Simulator(store)
    sim.set_cmd_vel(0, "jackal", 0.0, 1.0)
    qvel = sim.state(0, "qvel")
    for _ in range(100):  # hold the base still: the integral meets its clamp
        qvel[:] = 0.0
        sim.step(10)
    ctrl = sim.ctrl(0)[sim.controller.drive(0, "jackal").actuator_ids]
    drive = sim.controller.drive(0, "jackal")
    clamped = drive.controls(0.0, 0.0, 1.5 * (1.0 + 1.0 + YAW_INTEGRAL_LIMIT))
    assert np.abs(ctrl).max() == pytest.approx(np.abs(clamped).max(), rel=0.05)


def test_env_batch_and_single_commands_write_the_same_controls(assets):
    store = SceneStore(3)
    for env in range(3):
        spawn(store, env, assets, "burger")
    sim = Simulator(store)
    twists = np.array([[0.2, 0.5], [0.0, -1.0], [0.1, 0.0]])
    sim.controller.set_twists("burger", twists)
    sim.step(1)
    batched = np.array([sim.ctrl(e).copy() for e in range(3)])
    for env, (v, w) in enumerate(twists):
        sim.set_cmd_vel(env, "burger", v, w)
    sim.step(1)
    single = np.array([sim.ctrl(e).copy() for e in range(3)])
    drive = sim.controller.drive(0, "burger")
    assert np.array_equal(batched, single)
    assert np.allclose(batched[:, drive.actuator_ids],
                       [drive.controls(v, 0.0, w) for v, w in twists])


def test_bad_batched_commands_change_nothing(assets):
    store = SceneStore(2)
    for env in range(2):
        spawn(store, env, assets, "burger")
    sim = Simulator(store)
    sim.controller.set_twists("burger", np.array([[0.1, 0.2], [0.3, 0.4]]))
    sim.step(1)
    before = [sim.ctrl(e).copy() for e in range(2)]
    with pytest.raises(ValueError, match=re.escape(
            "cmd_vel for 'burger': expected an array of shape (2, 2) or (2, 3), got shape (3, 2)")):
        sim.controller.set_twists("burger", np.zeros((3, 2)))
    with pytest.raises(ValueError, match=re.escape(
            "cmd_vel for 'burger': expected finite numbers, got (0.0, nan) in env 1")):
        sim.controller.set_twists("burger", np.array([[0.5, 0.0], [0.0, np.nan]]))
    with pytest.raises(ValueError, match=re.escape(
            "cmd_vel for 'burger': vy=0.1 in env 0 but the robot is not holonomic")):
        sim.controller.set_twists("burger", np.array([[0.0, 0.1, 0.0], [0.0, 0.0, 0.0]]))
    sim.step(1)
    assert all(np.array_equal(sim.ctrl(e), b) for e, b in enumerate(before))


# ------------------------------------------------------------------ wheel declarations
_WHEEL = """
  <link name="{side}_wheel">
    <collision><origin rpy="{rpy} 0 0" xyz="0 0 0"/>
      <geometry><cylinder length="0.03" radius="0.05"/></geometry></collision>
    <inertial><mass value="0.3"/>
      <inertia ixx="2e-4" ixy="0" ixz="0" iyy="4e-4" iyz="0" izz="2e-4"/></inertial>
  </link>
  <joint name="{side}_wheel_joint" type="continuous">
    <parent link="base_link"/><child link="{side}_wheel"/>
    <origin xyz="0 {y} 0.05"/><axis xyz="0 1 0"/>
  </joint>
  <gazebo reference="{side}_wheel"><mu1>1.0</mu1><mu2>0.0</mu2><fdir1>{fdir}</fdir1></gazebo>"""


def _two_wheeler(tmp_path: Path, rpy: str, fdir: str) -> Path:
    """A box on two cylinder wheels that grip along fdir1 only, and a frictionless caster."""
    wheels = "".join(_WHEEL.format(side=s, y=y, rpy=rpy, fdir=fdir)
                     for s, y in (("left", 0.12), ("right", -0.12)))
    path = tmp_path / f"two_wheeler_{len(list(tmp_path.iterdir()))}.urdf"
    path.write_text(f"""<robot name="two_wheeler">
  <link name="base_link">
    <collision><origin xyz="0 0 0.1"/><geometry><box size="0.3 0.2 0.08"/></geometry></collision>
    <inertial><origin xyz="0 0 0.1"/><mass value="3"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial>
  </link>{wheels}
  <link name="caster"><collision><geometry><sphere radius="0.03"/></geometry></collision>
    <inertial><mass value="0.05"/>
      <inertia ixx="1e-5" ixy="0" ixz="0" iyy="1e-5" iyz="0" izz="1e-5"/></inertial></link>
  <joint name="caster_joint" type="fixed"><parent link="base_link"/><child link="caster"/>
    <origin xyz="-0.12 0 0.03"/></joint>
  <gazebo reference="caster"><mu1>0.0</mu1><mu2>0.0</mu2></gazebo>
</robot>""")
    return path


@pytest.mark.parametrize("rpy", ["1.5708", "1.5707963267948966"])
def test_wheels_gripping_along_their_rolling_direction_are_not_holonomic(tmp_path, rpy):
    store = SceneStore(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store[0].spawn_urdf("bot", _two_wheeler(tmp_path, rpy, "1 0 0"))
    sim = Simulator(store)
    assert not sim.controller.drive(0, "bot").holonomic
    with pytest.raises(ValueError, match=re.escape("vy=0.2 but the robot is not holonomic")):
        sim.set_cmd_vel(0, "bot", 0.0, 0.2, 0.0)


def test_a_grip_along_the_axle_is_rejected_naming_the_wheel(tmp_path):
    store = SceneStore(1)
    before = snapshot(store.scenes[0])
    # fdir1 is in the collision's frame: its z, the cylinder's axis, is the axle
    urdf = _two_wheeler(tmp_path, "1.5707963267948966", "0 0 1")
    with pytest.raises(SpawnError, match=re.escape(
            "robot 'bot': wheel 'left_wheel' (joint 'left_wheel_joint'): "
            "its grip (fdir1=(0.0, 0.0, 1.0), gripping along it) lies along its axle, so the "
            "wheel cannot drive the robot; expected a grip within 84 degrees of its rolling "
            "direction")):
        store[0].spawn_urdf("bot", urdf)
    assert_same(snapshot(store.scenes[0]), before)


def _mesh_mecanum_ridgeback(assets: Path, tmp_path: Path) -> tuple[Path, list[Path]]:
    urdf, packages = robot_paths(assets, "ridgeback")
    mesh = "package://arena_simulation_setup/entities/robots/ridgeback/meshes/wheel.stl"
    text, count = re.subn(r'<cylinder length="0.079" radius="0.0759"/>',
                          f'<mesh filename="{mesh}"/>', mecanum_ridgeback(urdf))
    assert count == 4
    path = tmp_path / "mesh_mecanum.urdf"
    path.write_text(text)
    return path, packages


def test_mecanum_wheels_with_mesh_collisions_get_rollers_and_strafe(assets, tmp_path):
    urdf, packages = _mesh_mecanum_ridgeback(assets, tmp_path)
    figures = measure(urdf, packages, holonomic=True, turn_rates=(1.0,))
    store = SceneStore(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info = store[0].spawn_urdf("rb", urdf, package_paths=packages)
    model = store[0].model
    assert len(info.roller_joints) == 4 * 12
    wheel = Simulator(store).controller.drive(0, "rb").wheels[0]
    roller = model.body(info.roller_joints[0]).id
    sphere = model.geom_size[model.body_geomadr[roller], 0]
    assert sphere == pytest.approx(0.35 * wheel.radius)
    assert wheel.radius == pytest.approx(0.0759, abs=0.003)  # the mesh's rim
    by_name = {f.motion.name: f for f in figures}
    assert np.linalg.norm(by_name["sideways 1 m"].moved - [0.0, 1.0]) < 0.05
    assert np.linalg.norm(by_name["forward 1 m"].moved - [1.0, 0.0]) < 0.05
    assert by_name["turn 90 deg at 1 rad/s"].turned == pytest.approx(90.0, abs=5.0)
    assert math.isfinite(by_name["turn 90 deg at 1 rad/s"].rate)


def test_grips_a_rounding_apart_do_not_span_the_plane():
    """rpy="1.5708 0 0" leaves grips 4e-6 off the rolling direction: not holonomic; 45-degree
    mecanum rollers are."""
    rounded = [np.array([1.0, 3.7e-6]), np.array([1.0, -3.7e-6])]
    assert not _spans_plane(rounded)
    half = math.sqrt(0.5)
    assert _spans_plane([np.array([half, half]), np.array([half, -half])])
