"""User sensors as MuJoCo fills them (issue 42 item 4): `MujocoSpec(user=f)` makes `f`
MuJoCo's sensor callback, called inside every physics step at the sensor's stage on the
env's own MjData, so `sensordata` and MuJoCo's cutoff hold `f`'s values exactly as MuJoCo
running the model alone with `mujoco.set_mjcb_sensor` gives them (MJCF gives a user sensor
no delay, interval or nsample); a
function added beside the default reading is called; other simulators keep their batches;
and MuJoCo's cutoff applies per type under our noise (not to contact sensors)."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

from arena_gym.scene import SceneStore
from arena_gym.scene.models import model_world
from arena_gym.sensors import MujocoSpec, SensorSuite
from arena_gym.sensors.errors import SensorError
from arena_gym.sim import Simulator

USER = """<mujoco><option timestep="0.002"/><worldbody>
  <body name="arm" pos="0 0 0.5"><joint name="swing" axis="0 1 0"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/></body></worldbody>
  <sensor><user name="clock2" dim="2" needstage="pos" datatype="real"/>
  <user name="clipped" dim="1" needstage="vel" datatype="real" cutoff="0.01"/>
  <jointpos name="angle" joint="swing"/></sensor></mujoco>"""
STEPS = 23  # between two ticks: the readings are live after any step


def _user(name: str, model: mujoco.MjModel, data: mujoco.MjData) -> list[float]:
    """Depends on the state the stage sees: the time, and the swing's velocity."""
    if name == "clock2":
        return [data.time, data.qpos[0] + data.time]
    return [data.qvel[0]]


def _alone(steps: int) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The model alone with `_user` as MuJoCo's sensor callback (a Python one), stepped."""
    model = mujoco.MjModel.from_xml_string(USER)
    data = mujoco.MjData(model)
    data.qpos[0] = 0.4

    def callback(m: mujoco.MjModel, d: mujoco.MjData, stage: int) -> None:
        for i in range(m.nsensor):
            if m.sensor_type[i] == mujoco.mjtSensor.mjSENS_USER and m.sensor_needstage[i] == stage:
                adr, dim = m.sensor_adr[i], m.sensor_dim[i]
                d.sensordata[adr:adr + dim] = _user(m.sensor(i).name, m, d)

    mujoco.set_mjcb_sensor(callback)
    try:
        mujoco.mj_forward(model, data)
        mujoco.mj_step(model, data, steps)
    finally:
        mujoco.set_mjcb_sensor(None)
    return model, data


def _world(num_envs: int = 2) -> tuple[SceneStore, Simulator]:
    store = SceneStore(num_envs)
    for scene in store:
        scene.spawn_mjcf("m", USER)
        scene.data.qpos[scene.model.joint(f"env_{scene.env_id}/m/swing").qposadr[0]] = 0.4
    return store, Simulator(store)


def test_a_user_function_fills_sensordata_in_the_step_as_mujocos_callback_does():
    model, data = _alone(STEPS)
    store, sim = _world()
    with SensorSuite(sim, [MujocoSpec("m", user=_user)]) as suite:
        assert sim.groups() == [("pool", [0, 1])]  # stepped on their own MjData
        sim.step(STEPS)
        suite.sample_live()
        reading = suite["m/mujoco"]
        for env in range(2):
            ours = store[env].data
            np.testing.assert_array_equal(ours.sensordata, data.sensordata)  # bit for bit
            np.testing.assert_array_equal(reading["clock2"][env], data.sensor("clock2").data)
        # MuJoCo's cutoff on the function's value: the swing is faster than 0.01 rad/s
        assert abs(data.qvel[0]) > 0.01 and reading["clipped"][0, 0] == pytest.approx(
            np.clip(data.qvel[0], -0.01, 0.01), abs=0)
    assert mujoco.get_mjcb_sensor() is None  # closed: the callback goes
    assert sim.groups() == [("batch", [0, 1])]  # and the envs step in a batch again


def test_a_function_added_beside_the_default_reading_is_called():
    store, sim = _world()
    with SensorSuite(sim) as suite:  # the model's default reading: MujocoSpec("m")
        sim.step(10)
        assert suite["m/mujoco"]["clock2"].tolist() == [[0.0, 0.0]] * 2  # no function: 0
        extra = suite.add(MujocoSpec("m", "clock2", key="clock", user=_user))
        sim.step(10)
        _, data = _alone(20)
        expected = data.sensor("clock2").data
        np.testing.assert_array_equal(extra["clock2"], np.tile(expected, (2, 1)))
        np.testing.assert_array_equal(suite["m/mujoco"]["clock2"], np.tile(expected, (2, 1)))
        with pytest.raises(SensorError, match=re.escape(
                "MuJoCo sensor 'clock2' of 'm': user sensors filled by ")):
            suite.add(MujocoSpec("m", "clock2", key="other", user=lambda n, m, d: [0, 0]))


def test_a_functions_errors_name_the_sensor_after_the_step():
    store, sim = _world()
    with SensorSuite(sim, [MujocoSpec("m", user=lambda n, m, d: [1.0, 2.0, 3.0])]):
        with pytest.raises(SensorError, match=re.escape(
                "MuJoCo sensors of 'm': user sensor 'clock2': expected 2 values from the "
                "callback, got shape (3,)")):
            sim.step(10)

    def broken(name, model, data):
        raise RuntimeError("no such thing")

    store, sim = _world()
    with SensorSuite(sim, [MujocoSpec("m", user=broken)]):
        with pytest.raises(SensorError, match=re.escape(
                "MuJoCo sensors of 'm': user sensor 'clock2': the callback raised "
                "RuntimeError: no such thing")):
            sim.step(10)


def test_other_simulators_keep_their_batches_while_a_function_fills_sensors():
    store, sim = _world()
    plain = SceneStore(3)
    for scene in plain:
        scene.spawn_mjcf("m", USER)
    other = Simulator(plain)
    with SensorSuite(sim, [MujocoSpec("m", user=_user)]):
        other.step(20)  # a batch steps beside the installed C callback (a model with user
        assert other.groups() == [("batch", [0, 1, 2])]  # sensors and no function: zeros)
        assert (plain[0].data.sensordata[:3] == 0).all()
    other.close()


def test_a_python_callback_of_the_users_own_is_named():
    store, sim = _world()
    mujoco.set_mjcb_sensor(lambda m, d, stage: None)
    try:
        with pytest.raises(RuntimeError, match=re.escape(
                "user sensors: MuJoCo's sensor callback is taken (mujoco.set_mjcb_sensor: ")):
            SensorSuite(sim, [MujocoSpec("m", user=_user)])
    finally:
        mujoco.set_mjcb_sensor(None)


CONTACT = """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>
  <body name="box" pos="0 0 0.1"><freejoint/><geom name="box" type="box" size="0.1 0.1 0.1"
  mass="2"/></body></worldbody>
  <sensor><contact name="touching" geom1="box" geom2="floor" data="found force" num="1"
  cutoff="0.5" noise="0.001"/>
  <touch name="touch" site="pad" cutoff="5" noise="0.001"/></sensor></mujoco>"""


def test_cutoff_under_noise_is_mujocos_per_type_contact_sensors_never_clipped():
    body = '<body name="box" pos="0 0 0.1">'
    xml = CONTACT.replace(body, body + '<site name="pad" type="box" size="0.11 0.11 0.11"/>')
    store = SceneStore(1, world=model_world(mujoco.MjSpec.from_string(xml)))  # its own floor
    store[0].spawn_mjcf("m", xml)
    sim = Simulator(store)
    with SensorSuite(sim, seed=0) as suite:
        sim.step(200)
        reading = suite["m/mujoco"]
        theirs = store[0].data.sensor("env_0/m/touching").data
        # MuJoCo leaves a contact sensor unclipped: 4 corners found, the first one carrying
        # a quarter of m g, ten times the cutoff of 0.5; our noise (std 0.001) leaves it so
        assert theirs[0] == 4.0 and theirs[1] == pytest.approx(2 * 9.81 / 4, rel=1e-3)
        assert reading["touching"][0] == pytest.approx(theirs, abs=0.01)
        # a touch sensor is clipped (m g = 19.6 N > 5), noise or not
        assert 4.95 < reading["touch"][0, 0] <= 5.0
