"""Staged actuator controls and applied forces: one path with cmd_vel, written by the next
tick right before it steps, from any thread."""

from __future__ import annotations

import re

import numpy as np
import pytest

from arena_gym.scene import SceneStore
from arena_gym.sim import Runner, Simulator
from arena_gym.worlds import builtin_robot_urdf
from tests.waiting import wait_until

G = 9.81


def _world(n: int = 1) -> tuple[SceneStore, Simulator]:
    store = SceneStore(n)
    for env in range(n):
        store[env].spawn_urdf("robot", builtin_robot_urdf())
    return store, Simulator(store)


def test_staged_wheel_controls_drive_exactly_as_the_same_twist():
    twisted, by_twist = _world()
    wheels, by_ctrl = _world()
    by_twist.set_cmd_vel(0, "robot", 0.2, 0.5)
    drive = by_ctrl.controller.drive(0, "robot")
    speeds = drive.matrix @ np.array([0.2, 0.0, 0.5])
    for actuator, speed in zip(drive.actuator_ids, speeds, strict=True):
        name = wheels[0].model.actuator(int(actuator)).name.removeprefix("env_0/")
        by_ctrl.set_ctrl(0, name, float(speed))
    by_twist.step(300)
    by_ctrl.step(300)
    assert twisted[0].get_pose("robot")[0][0] > 0.03
    assert twisted[0].data.qpos.tobytes() == wheels[0].data.qpos.tobytes()


def test_an_applied_force_lifts_the_robot_as_physics_says_and_stops_when_zeroed():
    store, sim = _world()
    model = store[0].model
    body = model.body("env_0/robot/base_footprint").id
    mass = float(model.body_subtreemass[body])
    sim.set_applied_force(0, "robot", (0.0, 0.0, 2.0 * mass * G))  # net: g upwards
    sim.step(1)  # written right before the first step
    assert sim.state(0, "xfrc_applied")[body].tolist() == [0, 0, 2.0 * mass * G, 0, 0, 0]
    z0 = store[0].get_pose("robot")[0][2]
    sim.step(99)
    z1 = store[0].get_pose("robot")[0][2]
    # g upwards, off the ground from the first step: semi-implicit Euler reaches
    # z_n = g dt^2 n (n + 1) / 2 after n steps (0.1962 m is the continuous 0.2 s)
    assert z1 - z0 == pytest.approx(G * 0.002**2 * (100 * 101 / 2 - 1), rel=1e-9)
    sim.set_applied_force(0, "robot", (0.0, 0.0, 0.0))
    sim.step(10)
    assert sim.state(0, "xfrc_applied")[body].tolist() == [0.0] * 6
    assert store[0].data.qvel[2] < 0.2 * G  # gravity slows it again


def test_commands_staged_from_another_thread_reach_the_running_loop():
    store, sim = _world()
    runner = Runner(sim)
    mass = float(store[0].model.body_subtreemass[store[0].model.body(
        "env_0/robot/base_footprint").id])
    runner.rt_factor = 0.0
    runner.start()
    try:
        sim.set_applied_force(0, "env_0/robot/base_footprint", (0.0, 0.0, 2.0 * mass * G))

        def height() -> float:
            with runner.snapshots.take() as snap:
                return float(snap.field("qpos", 0)[2])

        wait_until(lambda: height() > 0.1, 60,
                   lambda: f"the staged force to lift the robot above 0.1 m (at {height()} m)")
    finally:
        runner.close()
        sim.close()
    assert runner.error is None


def test_bad_staged_commands_are_rejected_and_stage_nothing():
    store, sim = _world()
    with pytest.raises(KeyError, match=re.escape(
            "unknown actuator in env 0 'robot/wheel_left_joint_vl'; did you mean "
            "'env_0/robot/wheel_left_joint_vel'")):
        sim.set_ctrl(0, "robot/wheel_left_joint_vl", 1.0)
    with pytest.raises(ValueError, match=re.escape(
            "ctrl for 'robot/wheel_left_joint_vel': expected finite numbers, got (inf,)")):
        sim.set_ctrl(0, "robot/wheel_left_joint_vel", float("inf"))
    with pytest.raises(ValueError, match=re.escape(
            "applied force on 'robot': expected 3 force and 3 torque components, "
            "got (1.0, 2.0) and (0.0, 0.0, 0.0)")):
        sim.set_applied_force(0, "robot", (1.0, 2.0))
    with pytest.raises(ValueError, match=re.escape(
            "applied force on 'robot': expected finite numbers, got (0.0, nan, 0.0, 0.0, 0.0, "
            "0.0)")):
        sim.set_applied_force(0, "robot", (0.0, float("nan"), 0.0))
    with pytest.raises(KeyError, match=re.escape("unknown body in env 0 'robt'")):
        sim.set_applied_force(0, "robt", (0.0, 0.0, 1.0))
    sim.step(10)
    assert not store[0].data.xfrc_applied.any()
    assert not store[0].data.ctrl.any()


def test_every_twist_staged_reaches_ctrl_after_a_run_of_all_env_steps():
    """The controller's usual step (one robot's twists staged in every env at once) keeps
    taking what else is staged: one env's twist, a second robot's."""
    store = SceneStore(2)
    for env in range(2):
        store[env].spawn_urdf("a", builtin_robot_urdf(), pose=(0.0, 0.0, 0.0))
        store[env].spawn_urdf("b", builtin_robot_urdf(), pose=(3.0, 0.0, 0.0))
    sim = Simulator(store)
    controller = sim.controller
    drive_a, drive_b = controller.drive(0, "a"), controller.drive(0, "b")

    def wheels(drive, env: int) -> np.ndarray:
        return sim.ctrl(env)[drive.actuator_ids]

    for _ in range(3):  # the usual step, again and again
        controller.set_twists("a", np.array([[0.1, 0.0], [0.2, 0.0]]))
        sim.step(10)
    np.testing.assert_array_equal(wheels(drive_a, 1), drive_a.matrix @ [0.2, 0.0, 0.0])
    sim.set_cmd_vel(1, "a", 0.05, 0.5)  # one env's, between steps of every env's
    sim.step(10)
    np.testing.assert_array_equal(wheels(drive_a, 1), drive_a.matrix @ [0.05, 0.0, 0.5])
    np.testing.assert_array_equal(wheels(drive_a, 0), drive_a.matrix @ [0.1, 0.0, 0.0])
    controller.set_twists("a", np.array([[0.1, 0.0], [0.2, 0.0]]))
    controller.set_twists("b", np.array([[0.0, 1.0], [0.0, -1.0]]))  # a second robot
    sim.step(10)
    np.testing.assert_array_equal(wheels(drive_b, 1), drive_b.matrix @ [0.0, 0.0, -1.0])
    np.testing.assert_array_equal(wheels(drive_a, 1), drive_a.matrix @ [0.2, 0.0, 0.0])
