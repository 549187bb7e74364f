"""MuJoCo's sensor_disabled flag freezes every reading, ours too (issue 34 item 2): while it
is set (through the runtime options), a robot that moves leaves lidar, camera, IMU,
odometry, contact, collision and MuJoCo's own sensors at their last values; unset, they
change again."""

from __future__ import annotations

import numpy as np

from arena_gym import Simulation
from arena_gym.sensors import (
    CameraSpec,
    MujocoSpec,
    OdometrySpec,
    SensorSuite,
    default_specs,
)
from arena_gym.sim import Simulator
from tests.sensors.worlds import camera_block, imu_block, lidar_block, room_store

CONTACT = ('<gazebo reference="base_link"><sensor name="bumper" type="contact">'
           "</sensor></gazebo>")


def _values(suite: SensorSuite) -> dict[str, np.ndarray]:
    return {f"{key}/{name}": np.array(array, copy=True)
            for key, reading in suite.readings.items() for name, array in reading.data.items()}


def _teleport(store, env: int, dx: float) -> None:
    """Move the probe `dx` along x and turn it 0.3 rad (its free joint's qpos)."""
    data, model = store[env].data, store[env].model
    adr = model.jnt_qposadr[model.joint(f"env_{env}/probe/root").id]
    data.qpos[adr] += dx
    data.qpos[adr + 3:adr + 7] = [np.cos(0.15), 0.0, 0.0, np.sin(0.15)]


def test_every_reading_keeps_its_last_value_while_sensor_disabled_is_set():
    store = room_store(2, lidar_block(samples=90), imu_block(), CONTACT,
                       camera_block(width=32, height=24, rate=50.0, reference="scan_joint"))
    sim = Simulator(store, nthread=1)
    specs = [*default_specs(store), CameraSpec("probe", outputs=("rgb", "depth")),
             OdometrySpec("probe"), MujocoSpec("probe")]
    with SensorSuite(sim, specs, seed=0) as suite:
        kinds = {suite.spec(key).kind for key in suite.readings}
        assert {"lidar", "camera", "imu", "odometry", "contact", "collision",
                "mujoco"} <= kinds
        sim.step(20)
        before = _values(suite)
        sim.apply_runtime_options({"sensor_disabled": True})
        assert suite.frozen
        for env in range(2):
            _teleport(store, env, 0.5)
        sim.step(20)
        after = _values(suite)
        assert store[0].data.qpos[0] > 0.4  # it moved
        for name, value in before.items():
            np.testing.assert_array_equal(after[name], value, err_msg=name)
        assert not any(reading.fresh.any() for reading in suite.readings.values())
        sim.apply_runtime_options({"sensor_disabled": False})
        assert not suite.frozen
        sim.step(20)
        moved = _values(suite)
        for name in ("probe/laser/ranges", "probe/camera/rgb", "probe/camera/depth",
                     "probe/odom/position", "probe/imu/orientation",
                     "probe/mujoco/base_footprint_sensor_imu_quat"):
            assert not np.array_equal(moved[name], before[name]), name
    sim.close()


def test_the_facade_sets_the_flag_in_its_runtime_options_and_the_scan_freezes():
    with Simulation("default", num_envs=2, seed=0) as sim:
        sim.step(10)
        scan = sim.sensor_suite["scan"].ranges.copy()
        assert sim.apply_runtime_options({"sensor_disabled": True}).disableflags == ("sensor",)
        for env in range(2):
            sim.simulator.set_cmd_vel(env, "robot", 0.2, 1.0)
        sim.step(100)
        np.testing.assert_array_equal(sim.sensor_suite["scan"].ranges, scan)
        sim.apply_runtime_options({"sensor_disabled": False})
        sim.step(10)
        assert not np.array_equal(sim.sensor_suite["scan"].ranges, scan)
