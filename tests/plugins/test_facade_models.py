"""The Simulation façade runs any MJCF model (issue 34 item 1): from a path or XML text, in a
batch of envs, with the model's own options (patched at construction), its sensors read by
name, and reload semantics for another model."""

from __future__ import annotations

import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

from arena_gym import Simulation
from arena_gym.errors import SpawnError

MJCF = Path(__file__).resolve().parents[1] / "scene" / "mjcf"

PENDULUM = """<mujoco model="pendulum">
  <option timestep="0.001" integrator="RK4"/>
  <worldbody>
    <body name="bob" pos="0 0 1">
      <joint name="swing" type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="0.05" pos="0 0 -0.5" mass="1"/>
    </body>
  </worldbody>
  <sensor><jointpos name="angle" joint="swing"/></sensor>
</mujoco>"""


def test_an_arm_runs_in_a_batch_with_its_own_options_and_reads_its_sensors_by_name():
    with Simulation(model_path=MJCF / "arm.xml", num_envs=3) as sim:
        assert sim.runtime_options.timestep == 0.004  # the model's <option>, not the scene's
        for env in range(3):
            sim.simulator.set_ctrl(env, "model/elbow", 0.5)
        sim.step(250)  # 1 s
        reading = sim.sensor_suite["model/mujoco"]
        alone = mujoco.MjModel.from_xml_path(str(MJCF / "arm.xml"))
        data = mujoco.MjData(alone)
        data.ctrl[alone.actuator("elbow").id] = 0.5
        for _ in range(250):
            mujoco.mj_step(alone, data)
        # the servo holds the elbow near its target in every env, as MuJoCo alone does
        assert reading["elbow_pos"][:, 0] == pytest.approx([data.sensor("elbow_pos").data[0]] * 3,
                                                          abs=1e-6)
        assert reading["elbow_pos"][0, 0] == pytest.approx(0.5, abs=0.05)
        assert reading["wrist_force"].shape == (3, 3)


def test_options_at_construction_are_the_snapshot_as_built():
    with Simulation(model_path=MJCF / "arm.xml", options={"timestep": 0.002}) as sim:
        assert (sim.runtime_options.epoch, sim.runtime_options.timestep) == (0, 0.002)
    with pytest.raises(ValueError, match=re.escape("timestep")):
        Simulation(model_path=MJCF / "arm.xml", options={"timestep": -1.0})


def test_load_from_string_and_path_reload_and_a_bad_model_keeps_the_current_one():
    with Simulation(model_path=MJCF / "arm.xml", num_envs=2) as sim:
        sim.load_from_string(PENDULUM)
        assert sim.load_count == 2
        options = sim.runtime_options
        assert (options.timestep, options.integrator, options.epoch) == (0.001, "rk4", 0)
        sim.store[0].data.qpos[0] = 0.3  # let it swing from 0.3 rad
        sim.step(10)
        angle = sim.sensor_suite["model/mujoco"]["angle"]
        assert 0.0 < angle[0, 0] < 0.3 and angle[1, 0] == 0.0  # env 1 hangs still
        with pytest.raises(SpawnError, match=re.escape(
                "model 'model': MJCF file not found: expected a readable file, got ")):
            sim.load_from_path(MJCF / "missing.xml")
        assert sim.load_count == 2  # the pendulum still runs
        sim.step(1)
        sim.load_from_path(MJCF / "quadruped.xml")
        assert sim.load_count == 3 and "model" in sim.store[1].entities
        assert np.isfinite(sim.store[1].get_pose("model")[0]).all()


def test_a_config_and_a_model_together_are_refused():
    with pytest.raises(ValueError, match=re.escape(
            "Simulation: expected an env config or a model_path, got both")):
        Simulation("default", model_path=MJCF / "arm.xml")
    with Simulation(model_path=MJCF / "arm.xml") as sim, pytest.raises(
            ValueError, match=re.escape("load_from_string: expected MJCF text (<mujoco ...>) or "
                                        "URDF text (<robot ...>), got 'arm.xml'")):
        sim.load_from_string("arm.xml")
